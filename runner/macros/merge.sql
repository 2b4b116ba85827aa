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
                        updates); a key's events newer than its row are folded in sequence
                        order first, a delete forgetting what came before it
      truncate_when     a condition on batch rows ("op = 'T'"): when a row matches, the target
                        is emptied (its own idempotent statement), and only the batch's rows
                        newer than the newest truncate row are applied after it
-#}
{#- How it is built: the arguments (incremental_arguments, shared with scd2(), then merge()'s
    own), validate_merge (runner/macros/merge_validate.sql), merge_plan (the columns and
    expressions the statements are made of), then the statements from small macros, each
    replaceable by a project macro of the same name: merge_truncate and
    merge_rows_after_truncate (truncate_when), merge_folded_source (ignore_null_updates),
    merge_using, merge_on, merge_when_matched and merge_when_not_matched. -#}
{%- macro merge(source=none, unique_key=none, sequence_by=none, null_safe=false,
                delete_column=none, delete_values=['D'], deletes='hard',
                tombstone_column='is_deleted', update_columns=none, exclude_columns=[],
                mode='upsert', match_condition=none, prune_by=none, deduplicate=true,
                order_by=none, tie_break=none, source_columns=none, schema_evolution=none,
                except_columns=[], ignore_null_updates=false, truncate_when=none,
                target=none) -%}
{#- arguments, and their defaults from config() -#}
{%- set m = namespace(null_safe=null_safe, delete_column=delete_column, deletes=deletes,
                      tombstone_column=tombstone_column, update_columns=update_columns,
                      exclude_columns=exclude_columns, mode=mode,
                      match_condition=match_condition, deduplicate=deduplicate,
                      order_by=order_by, tie_break=tie_break,
                      ignore_null_updates=ignore_null_updates, truncate_when=truncate_when) -%}
{{- incremental_arguments(m, source, target, unique_key, sequence_by, prune_by, delete_values,
                          source_columns) -}}
{%- set m.seqs = [m.sequence_by] if m.sequence_by is string else (m.sequence_by or []) -%}
{%- set m.seq_lower = m.seqs | map('lower') | list -%}
{%- set m.except_columns = [except_columns] if except_columns is string else except_columns -%}
{%- set m.except_lower = m.except_columns | map('lower') | list -%}
{%- set m.evolve = schema_evolution if schema_evolution is not none else config.schema_drift == 'evolve' -%}
{%- set m.tombstones = m.deletes == 'tombstone' -%}
{{- validate_merge(m) -}}
{{- merge_plan(m) -}}
{#- truncate_when: the truncate is its own statement; the MERGE reads the rows after it -#}
{%- if m.truncate_when -%}
{{ merge_truncate(m) }};
{% set m.source = merge_rows_after_truncate(m) -%}
{%- endif -%}
{%- if m.ignore_null_updates and m.deduplicate -%}
{%- set m.source = merge_folded_source(m) -%}
{%- endif -%}
MERGE {{ 'WITH SCHEMA EVOLUTION ' if m.evolve }}INTO {{ m.target }} AS t
{{- merge_using(m) }}
{{- merge_on(m) }}
{{- merge_when_matched(m) }}
{{- merge_when_not_matched(m) }}
{%- endmacro %}


{#- What merge()'s statements are made of, set on `m`: inserted (the target's columns the source
    has) and updated (of those, what an update writes), is_delete (the source row is a
    delete), seq_of (the sequence as s., t. and plain expressions), newer (the sequence guard),
    plain_delete, projected (the source columns the MERGE reads), ties (the dedupe tie-break). -#}
{%- macro merge_plan(m) -%}
{%- set excluded = m.exclude_columns | map('lower') | list -%}
{%- set only = m.update_columns | map('lower') | list if m.update_columns is not none else none -%}
{%- set cols = namespace(insert=[], update=[]) -%}
{%- for column in target_columns if column | lower in m.source_lower and column | lower != m.tombstone_column | lower and column | lower not in m.except_lower -%}
{%- set cols.insert = cols.insert + [column] -%}
{%- if column | lower not in m.key_lower and (column | lower in m.seq_lower or (column | lower not in excluded and (only is none or column | lower in only))) -%}
{%- set cols.update = cols.update + [column] -%}
{%- endif -%}
{%- endfor -%}
{%- set m.inserted = cols.insert -%}
{%- set m.updated = cols.update -%}
{%- if m.delete_column and m.evolve -%}
{%- set m.is_delete = 's.' ~ m.tombstone_column -%}
{%- elif m.delete_column -%}
{%- set m.is_delete = merge_delete_test(m, 's.') -%}
{%- else -%}
{%- set m.is_delete = none -%}
{%- endif -%}
{%- if m.seqs -%}
{%- set seq_of = namespace(s=merge_sequence(m, 's.'), t=merge_sequence(m, 't.'), plain=merge_sequence(m, '')) -%}
{%- endif -%}
{#- without a sequence seq_of stays undefined, and a use of it fails naming it -#}
{%- set m.seq_of = seq_of -%}
{%- set m.newer = (seq_of.s ~ ' > ' ~ seq_of.t) if m.seqs else none -%}
{%- set m.plain_delete = merge_delete_test(m, '') if m.delete_column else none -%}
{#- the source columns the MERGE reads -#}
{%- if m.evolve -%}
{%- set projection = namespace(columns=[]) -%}
{%- for column in m.source_columns if column | lower != (m.delete_column or '') | lower and column | lower not in excluded and column | lower not in m.except_lower -%}
{%- set projection.columns = projection.columns + [column] -%}
{%- endfor -%}
{%- if m.tombstones -%}
{%- set projection.columns = projection.columns + [merge_delete_test(m, '') ~ " AS " ~ m.tombstone_column] -%}
{%- endif -%}
{%- set m.projected = projection.columns -%}
{%- else -%}
{%- set m.projected = m.source_columns -%}
{%- endif -%}
{%- set m.ties = m.tie_break if m.tie_break is not none else (m.source_columns | reject('in', m.keys + m.seqs) | list) -%}
{%- endmacro %}


{#- The sequence of a row of `prefix` ('s.', 't.', '' ...): its column, or a struct of its
    columns, which compares the first, then the next for ties. -#}
{%- macro merge_sequence(m, prefix) -%}
{%- if m.seqs | length > 1 -%}
struct({{ prefix }}{{ m.seqs | join(', ' ~ prefix) }})
{%- else -%}
{{ prefix }}{{ m.seqs[0] }}
{%- endif -%}
{%- endmacro %}


{#- Whether a row of `prefix` is a delete: its delete_column holds one of delete_values. -#}
{%- macro merge_delete_test(m, prefix) -%}
coalesce({{ prefix }}{{ m.delete_column }} IN ('{{ m.delete_values | join("', '") }}'), false)
{%- endmacro %}


{#- truncate_when's own statement: any batch row matching it empties the target. -#}
{%- macro merge_truncate(m) -%}
-- truncate_when: any batch row with ({{ m.truncate_when }}) empties the target first
MERGE INTO {{ m.target }} AS t
USING (SELECT 1 AS __truncate FROM {{ m.source }} WHERE {{ m.truncate_when }} LIMIT 1) AS s
ON true
WHEN MATCHED THEN DELETE
{%- endmacro %}


{#- The batch's rows the MERGE applies after a truncate: those newer than the newest truncate
    row, without the truncate rows themselves. -#}
{%- macro merge_rows_after_truncate(m) -%}
{%- set truncate_seq = '(SELECT max(' ~ m.seq_of.plain ~ ') FROM ' ~ m.source ~ ' WHERE ' ~ m.truncate_when ~ ')' -%}
(
    SELECT * FROM {{ m.source }}
    WHERE NOT coalesce({{ m.truncate_when }}, false)
      AND ({{ truncate_seq }} IS NULL OR {{ m.seq_of.plain }} > {{ truncate_seq }})
  )
{%- endmacro %}


{#- ignore_null_updates: the batch's events of a key folded into the one row the MERGE applies,
    as if they had come one per batch in sequence order. Only events newer than the key's
    target row count (a late event is ignored, as it would be alone); the newest delete cuts
    off everything before it, the target's values included; each column is then its newest
    non-NULL value after that delete, else the target's value (a live row only). When the
    newest event is the delete itself, the row is that event's own values. -#}
{%- macro merge_folded_source(m) -%}
{%- set keys_of = namespace(b=[], target=[]) -%}
{%- for key in m.keys -%}
{%- set keys_of.b = keys_of.b + ['b.' ~ key] -%}
{%- set keys_of.target = keys_of.target + ['b.' ~ key ~ (' <=> ' if m.null_safe else ' = ') ~ '__target.' ~ key] -%}
{%- endfor -%}
{%- set b_seq = merge_sequence(m, 'b.') -%}
{%- set newer = b_seq ~ ' > ' ~ merge_sequence(m, '__target.') -%}
{%- set b_delete = merge_delete_test(m, 'b.') if m.delete_column else 'false' -%}
{%- set carried = m.updated | reject('in', m.seqs) | list -%}
{%- set read = namespace(columns=m.keys + m.seqs) -%}
{%- for column in carried if column | lower not in m.key_lower -%}
{%- set read.columns = read.columns + [column ~ ' AS __target_' ~ column] -%}
{%- endfor -%}
{%- if m.tombstones -%}
{%- set read.columns = read.columns + [m.tombstone_column ~ ' AS __target_deleted'] -%}
{%- endif -%}
{%- set ordering = namespace(columns=m.seqs) -%}
{%- if m.ties is not string and m.ties is not false -%}
{%- for column in m.ties -%}{%- set ordering.columns = ordering.columns + [column ~ ' DESC'] -%}{%- endfor -%}
{%- endif -%}
{%- set window = 'OVER __events' -%}
{%- set live_target = '__last_delete IS NULL' ~ (' AND NOT coalesce(__target_deleted, false)' if m.tombstones else '') -%}
{%- set carried_lower = carried | map('lower') | list -%}
{%- set filled = namespace(columns=[]) -%}
{%- for column in m.source_columns -%}
{%- if column | lower in m.key_lower + m.seq_lower or column | lower == (m.delete_column or '') | lower -%}
{%- set filled.columns = filled.columns + [column] -%}
{%- elif column | lower in carried_lower -%}
{%- set filled.columns = filled.columns + ['CASE WHEN __is_delete THEN ' ~ column ~ ' ELSE coalesce(last_value(CASE WHEN NOT __is_delete THEN ' ~ column ~ ' END, true) ' ~ window ~ ', CASE WHEN ' ~ live_target ~ ' THEN __target_' ~ column ~ ' END) END AS ' ~ column] -%}
{%- else -%}
{%- set filled.columns = filled.columns + ['CASE WHEN __is_delete THEN ' ~ column ~ ' ELSE last_value(CASE WHEN NOT __is_delete THEN ' ~ column ~ ' END, true) ' ~ window ~ ' END AS ' ~ column] -%}
{%- endif -%}
{%- endfor -%}
(
      SELECT {{ filled.columns | join(',\n        ') }}
      FROM (
        -- the key's events newer than its target row, and the newest delete among them
        SELECT b.*, {{ b_delete }} AS __is_delete,
          max(CASE WHEN {{ b_delete }} THEN {{ b_seq }} END) OVER (PARTITION BY {{ keys_of.b | join(', ') }}) AS __last_delete
          {%- for column in carried if column | lower not in m.key_lower %}, __target.__target_{{ column }}{% endfor %}
          {{- ', __target.__target_deleted' if m.tombstones }}
        FROM {{ m.source }} AS b
        LEFT JOIN (
          SELECT {{ read.columns | join(', ') }}, true AS __in_target
          FROM {{ m.target }}
          {%- for column in m.prune_by %}
          {{ 'WHERE' if loop.first else '  AND' }} {{ batch_stats.predicate(column, '') }}
          {%- endfor %}
        ) AS __target
        ON {{ keys_of.target | join(' AND ') }}
        WHERE __target.__in_target IS NULL OR {{ newer }}
      )
      WHERE __last_delete IS NULL OR {{ m.seq_of.plain }} >= __last_delete
      WINDOW __events AS (PARTITION BY {{ m.keys | join(', ') }} ORDER BY {{ ordering.columns | join(', ') }} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    )
{%- endmacro %}


{#- USING: the source, one row per key (the newest) unless deduplicate=false, in the columns
    the MERGE reads -#}
{%- macro merge_using(m) %}
{%- if m.deduplicate %}
USING (
  {{ dedupe(m.source, key=m.keys, order_by=m.order_by or (m.seqs | join(' DESC, ') ~ ' DESC'), columns=m.projected, tie_break=m.ties) | indent(2) }}
) AS s
{%- elif m.evolve %}
USING (SELECT {{ m.projected | join(', ') }} FROM {{ m.source }}) AS s
{%- else %}
USING {{ m.source }} AS s
{%- endif %}
{%- endmacro %}


{#- ON: the keys, match_condition, and a literal range of each prune_by column -#}
{%- macro merge_on(m) %}
ON {% for key in m.keys %}{{ 't.' ~ key ~ (' <=> ' if m.null_safe else ' = ') ~ 's.' ~ key }}{{ '\n  AND ' if not loop.last }}{% endfor %}
{%- if m.match_condition %}
  AND ({{ m.match_condition }})
{%- endif %}
{%- for column in m.prune_by %}
  AND {{ batch_stats.predicate(column, 't') }}
{%- endfor %}
{%- endmacro %}


{#- WHEN MATCHED (not for mode='insert_only'): a hard delete, then the update, both only for
    a newer source row -#}
{%- macro merge_when_matched(m) %}
{%- if m.mode != 'insert_only' %}
{%- if m.delete_column and not m.tombstones %}
WHEN MATCHED AND {{ m.newer ~ ' AND ' if m.newer }}{{ m.is_delete }} THEN DELETE
{%- endif %}
{%- if m.evolve %}
WHEN MATCHED{{ ' AND ' ~ m.newer if m.newer }} THEN UPDATE SET *
{%- elif m.updated or m.tombstones %}
WHEN MATCHED{{ ' AND ' ~ m.newer if m.newer }} THEN UPDATE SET
{%- for column in m.updated %}
  t.{{ column }} = {{ merge_partial_value(m, column) if m.ignore_null_updates and not m.deduplicate and column | lower not in m.seq_lower else 's.' ~ column }}{{ ',' if not loop.last or m.tombstones }}
{%- endfor %}
{%- if m.tombstones %}
  t.{{ m.tombstone_column }} = {{ m.is_delete }}
{%- endif %}
{%- endif %}
{%- endif %}
{%- endmacro %}


{#- ignore_null_updates over a source that merge() does not fold (deduplicate=false): a NULL
    keeps the target's value, unless the row is a delete or the target row a tombstone (a
    delete forgets the row's values). -#}
{%- macro merge_partial_value(m, column) -%}
{%- if m.tombstones -%}
CASE WHEN {{ m.is_delete }} OR coalesce(t.{{ m.tombstone_column }}, false) THEN s.{{ column }} ELSE coalesce(s.{{ column }}, t.{{ column }}) END
{%- else -%}
coalesce(s.{{ column }}, t.{{ column }})
{%- endif -%}
{%- endmacro %}


{#- WHEN NOT MATCHED (not for mode='update_only'): insert, unless the row is a hard delete -#}
{%- macro merge_when_not_matched(m) %}
{%- if m.mode != 'update_only' %}
{%- if m.evolve %}
WHEN NOT MATCHED THEN INSERT *
{%- else %}
WHEN NOT MATCHED{{ ' AND NOT ' ~ m.is_delete if m.delete_column and not m.tombstones }} THEN
  INSERT ({{ (m.inserted + ([m.tombstone_column] if m.tombstones else [])) | join(', ') }})
  VALUES ({% for column in m.inserted %}s.{{ column }}{{ ', ' if not loop.last }}{% endfor %}{{ ', ' ~ m.is_delete if m.tombstones }})
{%- endif %}
{%- endif %}
{%- endmacro %}
