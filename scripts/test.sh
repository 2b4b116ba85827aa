#!/usr/bin/env bash
# Install what is needed (idempotent) and run the whole test suite: pure-Python tests first
# (no JVM), then the tests on real Spark and Delta. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest "$@"
