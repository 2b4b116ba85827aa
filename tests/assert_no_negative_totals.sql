-- A singular data test (dbt's convention): the rows this query returns are failures.
-- `runner test` runs it with the data tests of customer_totals, the model it reads.
SELECT customer_id, order_count, total_amount
FROM {{ ref('customer_totals') }}
WHERE total_amount < 0 OR order_count < 0
