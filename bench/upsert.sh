#!/usr/bin/env bash
# The upsert bench of issue #12, in one command: install what it needs (idempotent), then run
# bench/upsert_bench.py, which writes bench/results/upsert.md and upsert.png (--size full) or
# upsert-small.* (--size small, the default: every part in a few minutes).
#
#   bash bench/upsert.sh [--size small|full] [--no-curve]
#
# BENCH_PYTHON=/path/to/python uses that interpreter as it is and installs nothing (a checkout
# whose virtualenv lives elsewhere, such as a git worktree; it needs the `bench` extra).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${BENCH_PYTHON:-}" ]; then
  bash scripts/bootstrap.sh bench  # the runner's set-up, and the `bench` extra (matplotlib)
  BENCH_PYTHON=.venv/bin/python
fi

export BENCH_COMMAND="bash bench/upsert.sh $*"
exec "$BENCH_PYTHON" bench/upsert_bench.py "$@"
