{{ config(
    stream='orders',
    target='silver.orders',
    unique_key='order_id',
    sequence_by='updated_at',
    columns='order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP',
    optimize_every=2,
    zorder_by=['customer_id'],
    table_properties={'delta.enableChangeDataFeed': 'true'},
) }}

-- One row per order: the latest event of each order in this micro-batch.
CREATE OR REPLACE TEMPORARY VIEW orders_latest AS
{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }};

-- Upsert into the target. The sequence guard (s.updated_at > t.updated_at) keeps a late,
-- older event from overwriting a newer row; op = 'D' deletes the order.
MERGE INTO {{ this }} AS t
USING orders_latest AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = '{{ var("delete_op") }}' THEN DELETE
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> '{{ var("delete_op") }}' THEN INSERT *;
