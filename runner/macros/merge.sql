{#- A sequence-guarded upsert of a micro-batch into the model's target. Documented with its
    compiled SQL in docs/macros/merge.md.

    merge(source=batch, unique_key=config.unique_key, sequence_by=config.sequence_by,
          null_safe=false, delete_column=none, delete_values=['D'], deletes='hard',
          tombstone_column='is_deleted', update_columns=none, exclude_columns=[],
          mode='upsert', match_condition=none, prune_by=config.prune_by, deduplicate=true,
          order_by=none, tie_break=none, source_columns=batch_columns,
          schema_evolution=(config.schema_drift == 'evolve'), except_columns=[],
          ignore_null_updates=false, truncate_when=none, target=this)

      source            the relation to merge (the raw batch: merge() dedupes it itself)
      unique_key        a column or a list of them; matched with `=`, or `<=>` when null_safe
      sequence_by       the column that orders versions of a key; a matched row changes only
                        when the incoming row is newer (`s.seq > t.seq`); a list of columns
                        compares as a struct: the second decides ties of the first, and so on
      delete_column     the column that marks deletes, with delete_values (['D'])
      deletes           'hard': DELETE the row; 'tombstone': keep it with tombstone_column = true
                        and its sequence value, so an older, late row cannot bring the key back
      update_columns    only these columns change on update (exclude_columns: all but these);
                        the sequence column is always updated, keys never are; with schema
                        evolution, exclude_columns are source columns kept out of the target
      mode              'upsert', 'insert_only' (new keys only) or 'update_only' (known keys only)
      match_condition   an extra predicate ANDed into ON (t. and s. name target and source)
      prune_by          columns whose batch range (literals measured by the runner) is added to
                        ON so Delta skips target files; see docs/macros/merge.md for when it helps
      deduplicate       false when `source` already holds one row per key
      schema_evolution  MERGE WITH SCHEMA EVOLUTION with UPDATE SET * / INSERT *: new source
                        columns are added to the target
      except_columns    columns never copied to the target (neither inserted nor updated)
      ignore_null_updates  true: a NULL in the source keeps the target's value (partial
                        updates); rows of a key in one batch are folded in sequence order first
      truncate_when     a condition on batch rows ("op = 'T'"): when a row matches, the target
                        is emptied (its own idempotent statement), and only the batch's rows
                        newer than the newest truncate row are applied after it
-#}
{%- macro merge(source=none, unique_key=none, sequence_by=none, null_safe=false,
                delete_column=none, delete_values=['D'], deletes='hard',
                tombstone_column='is_deleted', update_columns=none, exclude_columns=[],
                mode='upsert', match_condition=none, prune_by=none, deduplicate=true,
                order_by=none, tie_break=none, source_columns=none, schema_evolution=none,
                except_columns=[], ignore_null_updates=false, truncate_when=none,
                target=none) -%}
{#- arguments, and their defaults from config() -#}
{%- set source = source if source is not none else batch -%}
{%- set target = target if target is not none else this -%}
{%- set unique_key = unique_key if unique_key is not none else config.unique_key -%}
{%- set keys = [unique_key] if unique_key is string else (unique_key or []) -%}
{%- set sequence_by = sequence_by if sequence_by is not none else config.sequence_by -%}
{%- set seqs = [sequence_by] if sequence_by is string else (sequence_by or []) -%}
{%- set seq_lower = seqs | map('lower') | list -%}
{%- set except_columns = [except_columns] if except_columns is string else except_columns -%}
{%- set except_lower = except_columns | map('lower') | list -%}
{%- set prune_by = prune_by if prune_by is not none else config.prune_by -%}
{%- set prune_by = [prune_by] if prune_by is string else prune_by -%}
{%- set delete_values = [delete_values] if delete_values is string else delete_values -%}
{%- set evolve = schema_evolution if schema_evolution is not none else config.schema_drift == 'evolve' -%}
{%- set source_columns = source_columns if source_columns is not none else batch_columns -%}
{%- set source_lower = source_columns | map('lower') | list -%}
{%- set target_lower = target_columns | map('lower') | list -%}
{%- set key_lower = keys | map('lower') | list -%}
{%- set tombstones = deletes == 'tombstone' -%}
{#- validation: every failure names the argument and what to do -#}
{%- if not keys -%}
{{ raise_error("merge(): no unique_key; pass unique_key='id' (or a list) or set it in config()") }}
{%- endif -%}
{%- if mode not in ['upsert', 'insert_only', 'update_only'] -%}
{{ raise_error("merge(): mode must be 'upsert', 'insert_only' or 'update_only', got '" ~ mode ~ "'") }}
{%- endif -%}
{%- if deletes not in ['hard', 'tombstone'] -%}
{{ raise_error("merge(): deletes must be 'hard' or 'tombstone', got '" ~ deletes ~ "'") }}
{%- endif -%}
{%- for column in keys + seqs -%}
{%- if column | lower not in target_lower -%}
{{ raise_error("merge(): '" ~ column ~ "' (unique_key / sequence_by) is not a column of " ~ target ~ " (" ~ target_columns | join(', ') ~ ")") }}
{%- elif column | lower not in source_lower -%}
{{ raise_error("merge(): '" ~ column ~ "' (unique_key / sequence_by) is not a column of " ~ source ~ " (" ~ source_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- if delete_column and delete_column | lower not in source_lower -%}
{{ raise_error("merge(): delete_column '" ~ delete_column ~ "' is not a column of " ~ source ~ " (" ~ source_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- if delete_column and not delete_values -%}
{{ raise_error("merge(): delete_values must list at least one value of " ~ delete_column) }}
{%- endif -%}
{%- if tombstones and not (delete_column and sequence_by) -%}
{{ raise_error("merge(deletes='tombstone') needs delete_column and sequence_by: a tombstone keeps the delete's sequence value so older rows cannot resurrect the key") }}
{%- endif -%}
{%- if tombstones and mode != 'upsert' -%}
{{ raise_error("merge(deletes='tombstone') needs mode='upsert', got mode='" ~ mode ~ "'") }}
{%- endif -%}
{%- if tombstones and tombstone_column | lower not in target_lower -%}
{{ raise_error("merge(deletes='tombstone'): " ~ target ~ " has no column '" ~ tombstone_column ~ "'; add '" ~ tombstone_column ~ " BOOLEAN' to config(columns=...)") }}
{%- endif -%}
{%- for column in (update_columns or []) + exclude_columns -%}
{%- if column | lower not in target_lower and not (evolve and column | lower in source_lower) -%}
{{ raise_error("merge(): update_columns / exclude_columns name '" ~ column ~ "', not a column of " ~ target ~ " (" ~ target_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- for column in prune_by -%}
{%- if column | lower not in target_lower or column | lower not in source_lower -%}
{{ raise_error("merge(): prune_by column '" ~ column ~ "' must be a column of both " ~ target ~ " and " ~ source) }}
{%- endif -%}
{%- endfor -%}
{%- if deduplicate and not (sequence_by or order_by) -%}
{{ raise_error("merge(): to keep one row per key, pass sequence_by (or order_by); or deduplicate=false if " ~ source ~ " already has one row per key") }}
{%- endif -%}
{%- for column in except_columns -%}
{%- if column | lower in key_lower + seq_lower -%}
{{ raise_error("merge(): except_columns names '" ~ column ~ "', a unique_key / sequence_by column; those are always written") }}
{%- endif -%}
{%- endfor -%}
{%- if ignore_null_updates and evolve -%}
{{ raise_error("merge(): ignore_null_updates needs the SET list (t.c = coalesce(s.c, t.c)); it cannot be combined with schema evolution (UPDATE SET *)") }}
{%- endif -%}
{%- if truncate_when and not seqs -%}
{{ raise_error("merge(truncate_when=...) needs sequence_by: only the batch's rows newer than the truncate row apply after it") }}
{%- endif -%}
{%- if evolve and update_columns is not none -%}
{{ raise_error("merge(): schema evolution writes every source column (UPDATE SET *); drop update_columns, or use exclude_columns to leave source columns out") }}
{%- endif -%}
{%- if evolve and delete_column and not tombstones -%}
{{ raise_error("merge(): schema evolution would add delete_column '" ~ delete_column ~ "' to " ~ target ~ "; use deletes='tombstone' or schema_drift='append_new_columns'") }}
{%- endif -%}
{#- columns: written ones are the target's columns the source has -#}
{%- set excluded = exclude_columns | map('lower') | list -%}
{%- set only = update_columns | map('lower') | list if update_columns is not none else none -%}
{%- set cols = namespace(insert=[], update=[]) -%}
{%- for column in target_columns if column | lower in source_lower and column | lower != tombstone_column | lower and column | lower not in except_lower -%}
{%- set cols.insert = cols.insert + [column] -%}
{%- if column | lower not in key_lower and (column | lower in seq_lower or (column | lower not in excluded and (only is none or column | lower in only))) -%}
{%- set cols.update = cols.update + [column] -%}
{%- endif -%}
{%- endfor -%}
{%- if delete_column and evolve -%}
{%- set is_delete = 's.' ~ tombstone_column -%}
{%- elif delete_column -%}
{%- set is_delete = "coalesce(s." ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false)" -%}
{%- endif -%}
{%- if seqs | length > 1 -%}
{%- set seq_of = namespace(s='struct(s.' ~ seqs | join(', s.') ~ ')', t='struct(t.' ~ seqs | join(', t.') ~ ')', plain='struct(' ~ seqs | join(', ') ~ ')') -%}
{%- elif seqs -%}
{%- set seq_of = namespace(s='s.' ~ seqs[0], t='t.' ~ seqs[0], plain=seqs[0]) -%}
{%- endif -%}
{%- set newer = (seq_of.s ~ ' > ' ~ seq_of.t) if seqs else none -%}
{%- set plain_delete = ("coalesce(" ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false)") if delete_column else none -%}
{#- the source: the batch, one row per key (the newest), in the columns the MERGE reads -#}
{%- if evolve -%}
{%- set projection = namespace(columns=[]) -%}
{%- for column in source_columns if column | lower != (delete_column or '') | lower and column | lower not in excluded and column | lower not in except_lower -%}
{%- set projection.columns = projection.columns + [column] -%}
{%- endfor -%}
{%- if tombstones -%}
{%- set projection.columns = projection.columns + ["coalesce(" ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false) AS " ~ tombstone_column] -%}
{%- endif -%}
{%- set projected = projection.columns -%}
{%- else -%}
{%- set projected = source_columns -%}
{%- endif -%}
{%- set ties = tie_break if tie_break is not none else (source_columns | reject('in', keys + seqs) | list) -%}
{#- truncate_when: the truncate is its own statement; the MERGE reads the rows after it -#}
{%- if truncate_when -%}
{%- set truncate_seq = '(SELECT max(' ~ seq_of.plain ~ ') FROM ' ~ source ~ ' WHERE ' ~ truncate_when ~ ')' -%}
-- truncate_when: any batch row with ({{ truncate_when }}) empties the target first
MERGE INTO {{ target }} AS t
USING (SELECT 1 AS __truncate FROM {{ source }} WHERE {{ truncate_when }} LIMIT 1) AS s
ON true
WHEN MATCHED THEN DELETE;
{% set source = '(\n    SELECT * FROM ' ~ source ~ '\n    WHERE NOT coalesce(' ~ truncate_when ~ ', false)\n      AND (' ~ truncate_seq ~ ' IS NULL OR ' ~ seq_of.plain ~ ' > ' ~ truncate_seq ~ ')\n  )' -%}
{%- endif -%}
{#- ignore_null_updates: each column of a key's newest row is its newest non-NULL value in the
    batch, counting only rows from the key's last delete on -#}
{%- if ignore_null_updates and deduplicate -%}
{%- set ordering = namespace(columns=seqs) -%}
{%- if ties is not string and ties is not false -%}
{%- for column in ties -%}{%- set ordering.columns = ordering.columns + [column ~ ' DESC'] -%}{%- endfor -%}
{%- endif -%}
{%- set window = 'OVER (PARTITION BY ' ~ keys | join(', ') ~ ' ORDER BY ' ~ ordering.columns | join(', ') ~ ' ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)' -%}
{%- set filled = namespace(columns=[]) -%}
{%- for column in source_columns -%}
{%- if column | lower in key_lower + seq_lower or column | lower == (delete_column or '') | lower -%}
{%- set filled.columns = filled.columns + [column] -%}
{%- else -%}
{%- set filled.columns = filled.columns + ['last_value(' ~ column ~ ', true) ' ~ window ~ ' AS ' ~ column] -%}
{%- endif -%}
{%- endfor -%}
{%- if delete_column -%}
{%- set from_last_delete = '(\n        SELECT * FROM (SELECT *, max(CASE WHEN ' ~ plain_delete ~ ' THEN ' ~ seq_of.plain ~ ' END) OVER (PARTITION BY ' ~ keys | join(', ') ~ ') AS __last_delete FROM ' ~ source ~ ')\n        WHERE __last_delete IS NULL OR ' ~ seq_of.plain ~ ' >= __last_delete\n      )' -%}
{%- else -%}
{%- set from_last_delete = source -%}
{%- endif -%}
{%- set source = '(\n      SELECT ' ~ filled.columns | join(',\n        ') ~ '\n      FROM ' ~ from_last_delete ~ '\n    )' -%}
{%- endif -%}
MERGE {{ 'WITH SCHEMA EVOLUTION ' if evolve }}INTO {{ target }} AS t
{%- if deduplicate %}
USING (
  {{ dedupe(source, key=keys, order_by=order_by or (seqs | join(' DESC, ') ~ ' DESC'), columns=projected, tie_break=ties) | indent(2) }}
) AS s
{%- elif evolve %}
USING (SELECT {{ projected | join(', ') }} FROM {{ source }}) AS s
{%- else %}
USING {{ source }} AS s
{%- endif %}
ON {% for key in keys %}{{ 't.' ~ key ~ (' <=> ' if null_safe else ' = ') ~ 's.' ~ key }}{{ '\n  AND ' if not loop.last }}{% endfor %}
{%- if match_condition %}
  AND ({{ match_condition }})
{%- endif %}
{%- for column in prune_by %}
  AND {{ batch_stats.predicate(column, 't') }}
{%- endfor %}
{%- if mode != 'insert_only' %}
{%- if delete_column and not tombstones %}
WHEN MATCHED AND {{ newer ~ ' AND ' if newer }}{{ is_delete }} THEN DELETE
{%- endif %}
{%- if evolve %}
WHEN MATCHED{{ ' AND ' ~ newer if newer }} THEN UPDATE SET *
{%- elif cols.update or tombstones %}
WHEN MATCHED{{ ' AND ' ~ newer if newer }} THEN UPDATE SET
{%- for column in cols.update %}
  t.{{ column }} = {{ ('coalesce(s.' ~ column ~ ', t.' ~ column ~ ')') if ignore_null_updates and column | lower not in seq_lower else 's.' ~ column }}{{ ',' if not loop.last or tombstones }}
{%- endfor %}
{%- if tombstones %}
  t.{{ tombstone_column }} = {{ is_delete }}
{%- endif %}
{%- endif %}
{%- endif %}
{%- if mode != 'update_only' %}
{%- if evolve %}
WHEN NOT MATCHED THEN INSERT *
{%- else %}
WHEN NOT MATCHED{{ ' AND NOT ' ~ is_delete if delete_column and not tombstones }} THEN
  INSERT ({{ (cols.insert + ([tombstone_column] if tombstones else [])) | join(', ') }})
  VALUES ({% for column in cols.insert %}s.{{ column }}{{ ', ' if not loop.last }}{% endfor %}{{ ', ' ~ is_delete if tombstones }})
{%- endif %}
{%- endif %}
{%- endmacro %}
