{#- Data tests: each macro renders ONE query that returns the failing rows (none = pass).
    A project macro of the same name (in macros/) replaces one, as for every built-in macro.

    test_unique(relation, column)                         keys that occur more than once
    test_not_null(relation, column)                       rows where the column is NULL
    test_accepted_values(relation, column, values)        rows with a value outside the list
    test_relationships(relation, column, to, field)       rows whose key is missing in `to`
    test_expression_is_true(relation, expression)         rows where the expression is false
    test_freshness(relation, column, max_age, now)        one row when the newest value is too old
-#}
{%- macro test_unique(relation, column) -%}
SELECT {{ column }}, COUNT(*) AS n_records
FROM {{ relation }}
WHERE {{ column }} IS NOT NULL
GROUP BY {{ column }}
HAVING COUNT(*) > 1
{%- endmacro %}

{%- macro test_not_null(relation, column) -%}
SELECT *
FROM {{ relation }}
WHERE {{ column }} IS NULL
{%- endmacro %}

{%- macro test_accepted_values(relation, column, values) -%}
SELECT *
FROM {{ relation }}
WHERE {{ column }} NOT IN ({{ values | join(', ') }})
{%- endmacro %}

{%- macro test_relationships(relation, column, to, field) -%}
SELECT child.*
FROM {{ relation }} AS child
LEFT ANTI JOIN {{ to }} AS parent
  ON child.{{ column }} = parent.{{ field }}
WHERE child.{{ column }} IS NOT NULL
{%- endmacro %}

{%- macro test_expression_is_true(relation, expression) -%}
SELECT *
FROM {{ relation }}
WHERE NOT ({{ expression }})
{%- endmacro %}

{%- macro test_freshness(relation, column, max_age, now) -%}
SELECT MAX({{ column }}) AS newest, {{ now }} AS now, '{{ max_age }}' AS max_age
FROM {{ relation }}
HAVING MAX({{ column }}) IS NULL OR MAX({{ column }}) < {{ now }} - INTERVAL {{ max_age }}
{%- endmacro %}
