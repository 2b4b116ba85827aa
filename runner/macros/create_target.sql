{#- DDL of a model's target table.

    create_schema(schema)                     the schema the target lives in
    create_target(relation, columns, location, partitioned_by=[], properties={})
                                              the target when it is missing
    attach_target(relation, location)         an existing Delta table registered under its name
-#}
{%- macro create_schema(schema) -%}
CREATE SCHEMA IF NOT EXISTS {{ schema }}
{%- endmacro %}

{%- macro create_target(relation, columns, location, partitioned_by=[], properties={}) -%}
CREATE TABLE IF NOT EXISTS {{ relation }} (
  {{ columns | join(',\n  ') }}
)
USING DELTA
{%- if partitioned_by %}
PARTITIONED BY ({{ partitioned_by | join(', ') }})
{%- endif %}
LOCATION '{{ location }}'
{%- if properties %}
TBLPROPERTIES (
{%- for key, value in properties | dictsort %}
  '{{ key }}' = '{{ value }}'{{ ',' if not loop.last }}
{%- endfor %}
)
{%- endif %}
{%- endmacro %}

{%- macro attach_target(relation, location) -%}
CREATE TABLE IF NOT EXISTS {{ relation }} USING DELTA LOCATION '{{ location }}'
{%- endmacro %}

{%- macro set_table_properties(relation, properties) -%}
ALTER TABLE {{ relation }} SET TBLPROPERTIES (
{%- for key, value in properties | dictsort %}
  '{{ key }}' = '{{ value }}'{{ ',' if not loop.last }}
{%- endfor %}
)
{%- endmacro %}
