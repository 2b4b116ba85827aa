#!/usr/bin/env bash
# Run the example project end to end on local[*]: install, land the sample order events,
# stream them through models/orders_merge.sql into a Delta table, keep per-customer totals from
# its Change Data Feed (models/customer_totals.sql), and print both tables.
# Every run starts from a clean example target (target/local, target/landing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

rm -rf target/local target/landing
.venv/bin/python scripts/stage_sample_data.py sample_data/orders target/landing/orders

# orders_merge, then customer_totals, which reads orders_merge's Change Data Feed
.venv/bin/runner run --select orders_merge+
.venv/bin/runner show --model orders_merge
.venv/bin/runner show --model customer_totals
