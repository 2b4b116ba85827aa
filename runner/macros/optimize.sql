{#- Compact a Delta table's small files, optionally clustering them by columns (Z-order).

    optimize(relation, zorder_by=[], where=none)
-#}
{%- macro optimize(relation, zorder_by=[], where=none) -%}
OPTIMIZE {{ relation }}
{%- if where %} WHERE {{ where }}{% endif %}
{%- if zorder_by %} ZORDER BY ({{ zorder_by | join(', ') }}){% endif %}
{%- endmacro %}
