#!/usr/bin/env bash
# Run the example project end to end on a target (default local: local[*]; `cluster` or
# `connect` after `.venv/bin/python -m runner_devtools.cluster start`, see docs/deploy.md): install, land the sample
# order events, stream them through models/orders_merge.sql into a Delta table, keep
# per-customer totals from its Change Data Feed (models/customer_totals.sql), and print both
# tables.
# Every run starts from a clean example target (target/<target>, target/landing).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${1:-local}"
bash scripts/bootstrap.sh

rm -rf "target/$TARGET" target/landing
.venv/bin/python scripts/stage_sample_data.py sample_data/orders target/landing/orders

# orders_merge, then customer_totals, which reads orders_merge's Change Data Feed
.venv/bin/runner run --select orders_merge+ --target "$TARGET"
.venv/bin/runner show --model orders_merge --target "$TARGET"
.venv/bin/runner show --model customer_totals --target "$TARGET"
