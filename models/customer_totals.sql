{{ config(
    stream='order_changes',
    target='gold.customer_totals',
    unique_key='customer_id',
    columns='customer_id STRING, order_count BIGINT, total_amount DECIMAL(14,2)',
) }}

-- The net effect of this batch's changes on each customer: inserted rows and post-update
-- images add, deleted rows and pre-update images subtract. An order that moves to another
-- customer leaves one and joins the other.
CREATE OR REPLACE TEMPORARY VIEW customer_deltas AS
SELECT
  customer_id,
  SUM(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 END) AS order_delta,
  SUM(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN amount ELSE -amount END)
    AS amount_delta
FROM {{ batch }}
GROUP BY customer_id;

-- Adds to running totals: applied twice, it would count twice. The runner's idempotent writes
-- make a replayed batch a no-op.
MERGE INTO {{ this }} AS t
USING customer_deltas AS s
ON t.customer_id = s.customer_id
WHEN MATCHED AND t.order_count + s.order_delta = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET
  t.order_count = t.order_count + s.order_delta,
  t.total_amount = t.total_amount + s.amount_delta
WHEN NOT MATCHED AND s.order_delta > 0 THEN
  INSERT (customer_id, order_count, total_amount)
  VALUES (s.customer_id, s.order_delta, s.amount_delta);
