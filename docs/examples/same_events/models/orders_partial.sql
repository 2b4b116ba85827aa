{{ config(stream='orders', target='silver.orders', unique_key='order_id',
          sequence_by='updated_at',
          columns='order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP') }}
{{ merge(delete_column='op', ignore_null_updates=true) }};
