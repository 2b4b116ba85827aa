{#- Latest row per key of a relation.

    dedupe(relation, key, order_by, columns=none, tie_break=none)
      relation   the view or table to read (usually `batch`)
      key        a column name or a list of them
      order_by   the ORDER BY that ranks rows of one key, best first ('updated_at DESC')
      columns    the columns to keep; defaults to the stream's declared columns
      tie_break  what decides between rows that `order_by` ranks equal: a column list or an
                 ORDER BY string ('kafka_offset DESC'); default: every kept column that is not
                 a key, ascending; false: no tie-break

    Keeps exactly one row per key, so a MERGE that reads it never fails with
    "multiple source rows matched"; with the tie-break, the same batch always keeps the same row.
-#}
{%- macro dedupe(relation, key, order_by, columns=none, tie_break=none) -%}
{%- set keys = [key] if key is string else key -%}
{%- set keep = columns if columns is not none else batch_columns -%}
{%- if not keys -%}{{ raise_error("dedupe(): 'key' must name at least one column") }}{%- endif -%}
{%- if not order_by -%}
{{ raise_error("dedupe(): 'order_by' must rank the rows of a key, e.g. order_by='updated_at DESC'") }}
{%- endif -%}
{%- if not keep -%}
{{ raise_error("dedupe(): the columns of " ~ relation ~ " are unknown; pass columns=[...]") }}
{%- endif -%}
{%- if tie_break is none -%}
{%- set key_names = keys | map('lower') | list -%}
{%- set found = namespace(ties=[]) -%}
{%- for column in keep if column | lower not in key_names -%}
{%- set found.ties = found.ties + [column] -%}
{%- endfor -%}
{%- set ties = found.ties -%}
{%- elif tie_break is false -%}
{%- set ties = [] -%}
{%- else -%}
{%- set ties = [tie_break] if tie_break is string else tie_break -%}
{%- endif -%}
SELECT {{ keep | join(', ') }}
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ ([order_by] + ties) | join(', ') }}) AS __row_number
  FROM {{ relation }}
)
WHERE __row_number = 1
{%- endmacro %}
