#!/usr/bin/env bash
# Install what is needed (idempotent), check the Python (lint, formatting, types), then run the
# whole test suite: pure-Python tests first (no JVM), then the tests on real Spark and Delta.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "==> ruff check, ruff format --check, mypy"
.venv/bin/ruff check runner tests bench scripts
.venv/bin/ruff format --check runner tests bench scripts
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
