#!/usr/bin/env bash
# Install what is needed (idempotent), check the Python (lint, formatting, types), build the docs
# site in strict mode, make the JVM class archive of the `runner` drivers (once: .cache/jvm), then
# run the whole test suite, pure-Python tests and tests on real Spark
# and Delta, in two pytest-xdist workers: the tests that start processes (a local cluster, a Kafka
# broker, `runner` killed and restarted) run as groups, each on one worker, beside the rest. (A
# third worker was measured: no faster, the slow tests only slowed each other; CONTRIBUTING.md.)
# Extra arguments go to pytest (`-n 0`: one process; `--slow`: the thorough property tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh s3  # the S3 tests: boto3 and the local object store (moto)
# the JVM class archive (runner_devtools/jvm_archive.py): made once, in about a minute of one
# JVM, beside the checks below rather than after them
archive_log="$(mktemp)"
setsid .venv/bin/python -m runner_devtools.jvm_archive >"$archive_log" 2>&1 &
archive_pid=$!
trap 'kill -- -"$archive_pid" 2>/dev/null || true; rm -f "$archive_log"' EXIT
echo "==> ruff check, ruff format --check, mypy"
.venv/bin/ruff check runner runner_devtools tests bench scripts
.venv/bin/ruff format --check runner runner_devtools tests bench scripts
.venv/bin/mypy
echo "==> mkdocs build --strict (the docs site: a broken link or a page missing from the nav fails)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir site
echo "==> the JVM class archive of the \`runner\` processes' Spark drivers (made once, in .cache/jvm)"
if ! wait "$archive_pid"; then
  cat "$archive_log"
  exit 1
fi
cat "$archive_log"
.venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
