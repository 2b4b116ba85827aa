{{ config(stream='orders', target='silver.orders_history', unique_key='order_id',
          sequence_by='updated_at',
          columns='order_id STRING, status STRING, updated_at TIMESTAMP, valid_from TIMESTAMP, valid_to TIMESTAMP, is_current BOOLEAN, is_deleted BOOLEAN') }}
{{ scd2(delete_column='op') }}  -- noqa: DL003
;
