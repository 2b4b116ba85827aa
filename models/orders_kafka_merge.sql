{{ config(
    stream='orders_kafka',
    target='silver.orders_from_kafka',
    unique_key='order_id',
    sequence_by='updated_at',
    columns='order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP',
    table_properties={'delta.enableChangeDataFeed': 'true'},
) }}

-- One row per order: its latest event in this micro-batch. An exact duplicate has the same
-- updated_at; the Kafka offset breaks the tie, so the choice is deterministic.
CREATE OR REPLACE TEMPORARY VIEW orders_kafka_latest AS
{{ dedupe(batch, key='order_id', order_by='updated_at DESC, kafka_offset DESC') }};

-- Upsert with a sequence guard: a late, older event does not overwrite a newer row;
-- op = 'D' deletes the order. Malformed records never get here: they are in
-- quarantine.orders_kafka_merge.
MERGE INTO {{ this }} AS t
USING orders_kafka_latest AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = '{{ var("delete_op") }}' THEN DELETE
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> '{{ var("delete_op") }}' THEN INSERT *;
