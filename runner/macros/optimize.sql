{#- Compact a Delta table's small files, optionally clustering them by columns (Z-order).

    optimize(relation=this, zorder_by=config.zorder_by, where=none, every=none)
      relation   the table (default: the model's target)
      zorder_by  columns to Z-order by (not on a liquid-clustered table: OPTIMIZE clusters it)
      where      a predicate on partition columns only (Delta's rule), to compact part of a table
      every      inside a model: render only after every N-th batch (batch ids count from 0,
                 like config(optimize_every=N)); without it the statement always renders

    config(optimize_every=N, zorder_by=[...]) makes the runner add this statement itself.
-#}
{%- macro optimize(relation=none, zorder_by=none, where=none, every=none) -%}
{%- set relation = relation if relation is not none else this -%}
{%- set zorder_by = zorder_by if zorder_by is not none else config.zorder_by -%}
{%- set zorder_by = [zorder_by] if zorder_by is string else zorder_by -%}
{%- if every is not none and (every is not number or every < 1) -%}
{{ raise_error("optimize(): 'every' must be a positive integer, got " ~ every) }}
{%- endif -%}
{%- if zorder_by and config.cluster_by -%}
{{ raise_error("optimize(): " ~ relation ~ " is liquid-clustered by " ~ config.cluster_by | join(', ') ~ "; OPTIMIZE clusters it, drop zorder_by") }}
{%- endif -%}
{%- if every is none or (batch_id + 1) % every == 0 -%}
OPTIMIZE {{ relation }}
{%- if where %} WHERE {{ where }}{% endif %}
{%- if zorder_by %} ZORDER BY ({{ zorder_by | join(', ') }}){% endif %}
{%- endif -%}
{%- endmacro %}
