{#- DDL of a model's target table.

    create_schema(schema)                     the schema the target lives in
    create_target(relation, columns, location, partitioned_by=[], properties={}, cluster_by=[])
                                              the target when it is missing; partitioned_by or
                                              cluster_by (liquid clustering), not both
    attach_target(relation, location)         an existing Delta table registered under its name
-#}
{%- macro create_schema(schema) -%}
CREATE SCHEMA IF NOT EXISTS {{ schema }}
{%- endmacro %}

{%- macro create_target(relation, columns, location, partitioned_by=[], properties={}, cluster_by=[]) -%}
{%- if partitioned_by and cluster_by -%}
{{ raise_error("create_target(): " ~ relation ~ " cannot be both partitioned and clustered") }}
{%- endif -%}
CREATE TABLE IF NOT EXISTS {{ relation }} (
  {{ columns | join(',\n  ') }}
)
USING DELTA
{%- if partitioned_by %}
PARTITIONED BY ({{ partitioned_by | join(', ') }})
{%- endif %}
{%- if cluster_by %}
CLUSTER BY ({{ cluster_by | join(', ') }})
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
