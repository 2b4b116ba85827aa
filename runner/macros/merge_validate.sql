{#- merge()'s argument checks, run before any SQL is generated: each failure stops rendering
    with a message that names the argument and says what to do.

    validate_merge(m)
      m   the namespace merge() resolved its arguments into (incremental_arguments, then
          seqs, seq_lower, except_columns, except_lower, evolve and tombstones)
-#}
{%- macro validate_merge(m) -%}
{%- if not m.keys -%}
{{ raise_error("merge(): no unique_key; pass unique_key='id' (or a list) or set it in config()") }}
{%- endif -%}
{%- if m.mode not in ['upsert', 'insert_only', 'update_only'] -%}
{{ raise_error("merge(): mode must be 'upsert', 'insert_only' or 'update_only', got '" ~ m.mode ~ "'") }}
{%- endif -%}
{%- if m.deletes not in ['hard', 'tombstone'] -%}
{{ raise_error("merge(): deletes must be 'hard' or 'tombstone', got '" ~ m.deletes ~ "'") }}
{%- endif -%}
{%- for column in m.keys + m.seqs -%}
{%- if column | lower not in m.target_lower -%}
{{ raise_error("merge(): '" ~ column ~ "' (unique_key / sequence_by) is not a column of " ~ m.target ~ " (" ~ target_columns | join(', ') ~ ")") }}
{%- elif column | lower not in m.source_lower -%}
{{ raise_error("merge(): '" ~ column ~ "' (unique_key / sequence_by) is not a column of " ~ m.source ~ " (" ~ m.source_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- if m.delete_column and m.delete_column | lower not in m.source_lower -%}
{{ raise_error("merge(): delete_column '" ~ m.delete_column ~ "' is not a column of " ~ m.source ~ " (" ~ m.source_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- if m.delete_column and not m.delete_values -%}
{{ raise_error("merge(): delete_values must list at least one value of " ~ m.delete_column) }}
{%- endif -%}
{%- if m.tombstones and not (m.delete_column and m.sequence_by) -%}
{{ raise_error("merge(deletes='tombstone') needs delete_column and sequence_by: a tombstone keeps the delete's sequence value so older rows cannot resurrect the key") }}
{%- endif -%}
{%- if m.tombstones and m.mode != 'upsert' -%}
{{ raise_error("merge(deletes='tombstone') needs mode='upsert', got mode='" ~ m.mode ~ "'") }}
{%- endif -%}
{%- if m.tombstones and m.tombstone_column | lower not in m.target_lower -%}
{{ raise_error("merge(deletes='tombstone'): " ~ m.target ~ " has no column '" ~ m.tombstone_column ~ "'; add '" ~ m.tombstone_column ~ " BOOLEAN' to config(columns=...)") }}
{%- endif -%}
{%- for column in (m.update_columns or []) + m.exclude_columns -%}
{%- if column | lower not in m.target_lower and not (m.evolve and column | lower in m.source_lower) -%}
{{ raise_error("merge(): update_columns / exclude_columns name '" ~ column ~ "', not a column of " ~ m.target ~ " (" ~ target_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- for column in m.prune_by -%}
{%- if column | lower not in m.target_lower or column | lower not in m.source_lower -%}
{{ raise_error("merge(): prune_by column '" ~ column ~ "' must be a column of both " ~ m.target ~ " and " ~ m.source) }}
{%- endif -%}
{%- endfor -%}
{%- if m.deduplicate and not (m.sequence_by or m.order_by) -%}
{{ raise_error("merge(): to keep one row per key, pass sequence_by (or order_by); or deduplicate=false if " ~ m.source ~ " already has one row per key") }}
{%- endif -%}
{%- for column in m.except_columns -%}
{%- if column | lower in m.key_lower + m.seq_lower -%}
{{ raise_error("merge(): except_columns names '" ~ column ~ "', a unique_key / sequence_by column; those are always written") }}
{%- endif -%}
{%- endfor -%}
{%- if m.ignore_null_updates and m.evolve -%}
{{ raise_error("merge(): ignore_null_updates needs the SET list (t.c = coalesce(s.c, t.c)); it cannot be combined with schema evolution (UPDATE SET *)") }}
{%- endif -%}
{%- if m.truncate_when and not m.seqs -%}
{{ raise_error("merge(truncate_when=...) needs sequence_by: only the batch's rows newer than the truncate row apply after it") }}
{%- endif -%}
{%- if m.evolve and m.update_columns is not none -%}
{{ raise_error("merge(): schema evolution writes every source column (UPDATE SET *); drop update_columns, or use exclude_columns to leave source columns out") }}
{%- endif -%}
{%- if m.evolve and m.delete_column and not m.tombstones -%}
{{ raise_error("merge(): schema evolution would add delete_column '" ~ m.delete_column ~ "' to " ~ m.target ~ "; use deletes='tombstone' or schema_drift='append_new_columns'") }}
{%- endif -%}
{%- endmacro %}
