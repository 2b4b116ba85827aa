{#- Latest row per key of a relation.

    dedupe(relation, key, order_by, columns=none)
      relation  the view or table to read (usually `batch`)
      key       a column name or a list of them
      order_by  the ORDER BY that ranks rows of one key, best first ('updated_at DESC')
      columns   the columns to keep; defaults to the stream's declared columns

    Keeps exactly one row per key, so a MERGE that reads it never fails with
    "multiple source rows matched".
-#}
{%- macro dedupe(relation, key, order_by, columns=none) -%}
{%- set keys = [key] if key is string else key -%}
{%- set keep = columns if columns is not none else batch_columns -%}
{%- if not keys -%}{{ raise_error("dedupe(): 'key' must name at least one column") }}{%- endif -%}
{%- if not keep -%}
{{ raise_error("dedupe(): the columns of " ~ relation ~ " are unknown; pass columns=[...]") }}
{%- endif -%}
SELECT {{ keep | join(', ') }}
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ order_by }}) AS __row_number
  FROM {{ relation }}
)
WHERE __row_number = 1
{%- endmacro %}
