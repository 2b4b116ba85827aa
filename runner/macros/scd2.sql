{#- Slowly changing dimension, type 2: every version of a key is a row with its validity.
    Documented with its compiled SQL in docs/macros/scd2.md.

    scd2(source=batch, unique_key=config.unique_key, sequence_by=config.sequence_by,
         delete_column=none, delete_values=['D'], valid_from='valid_from', valid_to='valid_to',
         is_current='is_current', is_deleted='is_deleted', prune_by=config.prune_by,
         source_columns=batch_columns, track_history_on=none, track_history_except=none,
         target=this)

    track_history_on / track_history_except: the payload columns whose change makes a new
    version (all but the listed ones, with _except). An event that changes only other columns
    updates the key's current row in place (its sequence value too), no new version; a delete
    always makes a version.

    One MERGE per batch: the key's current row is closed (valid_to = the first new version's
    sequence value, is_current = false) and each new version of the batch is inserted, in
    sequence order, each valid until the next (LEAD over the batch's versions of the key).
    A delete is a version too: a row with is_deleted = true that closes the one before; so a
    late event cannot resurrect the key. Events not newer than the key's current version
    (late arrivals, replays) are ignored: history is appended, never rewritten.
    Keys and sequence values must not be NULL.
-#}
{%- macro scd2(source=none, unique_key=none, sequence_by=none, delete_column=none,
               delete_values=['D'], valid_from='valid_from', valid_to='valid_to',
               is_current='is_current', is_deleted='is_deleted', prune_by=none,
               source_columns=none, track_history_on=none, track_history_except=none,
               target=none) -%}
{#- arguments, and their defaults from config(), as merge() resolves them -#}
{%- set args = namespace() -%}
{{- incremental_arguments(args, source, target, unique_key, sequence_by, prune_by, delete_values,
                          source_columns) -}}
{%- set source, target, keys, sequence_by = args.source, args.target, args.keys, args.sequence_by -%}
{%- set prune_by, delete_values = args.prune_by, args.delete_values -%}
{%- set source_columns, source_lower = args.source_columns, args.source_lower -%}
{%- set target_lower, key_lower = args.target_lower, args.key_lower -%}
{%- set scd_columns = [valid_from, valid_to, is_current] + ([is_deleted] if delete_column else []) -%}
{%- if not keys -%}
{{ raise_error("scd2(): no unique_key; pass unique_key='id' (or a list) or set it in config()") }}
{%- endif -%}
{%- if not sequence_by -%}
{{ raise_error("scd2(): no sequence_by; versions of a key are ordered by it (pass sequence_by= or set it in config())") }}
{%- endif -%}
{%- for column in keys + [sequence_by] -%}
{%- if column | lower not in source_lower -%}
{{ raise_error("scd2(): '" ~ column ~ "' (unique_key / sequence_by) is not a column of " ~ source ~ " (" ~ source_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- for column in scd_columns + keys -%}
{%- if column | lower not in target_lower -%}
{{ raise_error("scd2(): " ~ target ~ " has no column '" ~ column ~ "'; add it to config(columns=...) (valid_from / valid_to have the type of " ~ sequence_by ~ ", is_current / is_deleted are BOOLEAN)") }}
{%- endif -%}
{%- endfor -%}
{%- if delete_column and delete_column | lower not in source_lower -%}
{{ raise_error("scd2(): delete_column '" ~ delete_column ~ "' is not a column of " ~ source) }}
{%- endif -%}
{%- if track_history_on is not none and track_history_except is not none -%}
{{ raise_error("scd2(): pass track_history_on or track_history_except, not both") }}
{%- endif -%}
{%- for column in (track_history_on or []) + (track_history_except or []) -%}
{%- if column | lower not in target_lower or column | lower in scd_columns | map('lower') | list -%}
{{ raise_error("scd2(): track_history column '" ~ column ~ "' is not a payload column of " ~ target ~ " (" ~ target_columns | join(', ') ~ ")") }}
{%- endif -%}
{%- endfor -%}
{%- for column in prune_by if column | lower not in key_lower -%}
{{ raise_error("scd2(): prune_by column '" ~ column ~ "' is not a unique_key column; SCD2 prunes on keys only") }}
{%- endfor -%}
{%- set scd_lower = scd_columns | map('lower') | list -%}
{%- set found = namespace(payload=[]) -%}
{%- for column in target_columns if column | lower in source_lower and column | lower not in scd_lower -%}
{%- set found.payload = found.payload + [column] -%}
{%- endfor -%}
{%- set payload = found.payload -%}
{%- set payload_lower = payload | map('lower') | list -%}
{%- set carried = payload + ([sequence_by] if sequence_by | lower not in payload_lower else [])
    + ([delete_column] if delete_column and delete_column | lower not in payload_lower else []) -%}
{%- set ties = source_columns | reject('in', keys + [sequence_by]) | list -%}
{%- set partial = track_history_on is not none or track_history_except is not none -%}
{%- if partial -%}
{%- set listed = (track_history_on if track_history_on is not none else track_history_except) | map('lower') | list -%}
{%- set found = namespace(tracked=[], untracked=[]) -%}
{%- for column in payload if column | lower not in key_lower and column | lower != sequence_by | lower -%}
{%- if (column | lower in listed) == (track_history_on is not none) -%}
{%- set found.tracked = found.tracked + [column] -%}
{%- else -%}
{%- set found.untracked = found.untracked + [column] -%}
{%- endif -%}
{%- endfor -%}
{%- set tracked = found.tracked -%}
{%- set untracked = found.untracked -%}
{%- set delete_test = ("coalesce(" ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false)") if delete_column else 'false' -%}
{%- endif -%}
{%- if partial %}
MERGE INTO {{ target }} AS t
USING (
  WITH versions AS (
    -- this batch's versions of each key (one per {{ sequence_by }}), newer than its current row
    SELECT b.*, c.__current_seq{{ ', c.__current_deleted' if delete_column }}{% for column in tracked %}, c.__current_{{ column }}{% endfor %}
    FROM (
      SELECT *, ROW_NUMBER() OVER (PARTITION BY {{ (keys + [sequence_by]) | join(', ') }}{{ ' ORDER BY ' ~ ties | join(', ') if ties }}) AS __row_number
      FROM {{ source }}
    ) AS b
    LEFT JOIN (
      SELECT {{ keys | join(', ') }}, {{ valid_from }}, {{ sequence_by }} AS __current_seq{{ (', ' ~ is_deleted ~ ' AS __current_deleted') if delete_column }}{% for column in tracked %}, {{ column }} AS __current_{{ column }}{% endfor %}
      FROM {{ target }}
      WHERE {{ is_current }}
      {%- for column in prune_by %} AND {{ batch_stats.predicate(column, '') }}{% endfor %}
    ) AS c
    ON {% for key in keys %}b.{{ key }} = c.{{ key }}{{ ' AND ' if not loop.last }}{% endfor %}
    WHERE b.__row_number = 1 AND (c.{{ valid_from }} IS NULL OR b.{{ sequence_by }} > c.__current_seq)
  ),
  changes AS (
    -- does the event change a tracked column (or delete), compared with the version before it?
    SELECT e.*,
      {{ delete_test }} OR coalesce(LAG({{ delete_test }}) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}), {{ 'e.__current_deleted' if delete_column else 'false' }}, false)
      {%- for column in tracked %}
        OR NOT (e.{{ column }} <=> CASE WHEN LAG({{ sequence_by }}) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) IS NULL THEN e.__current_{{ column }} ELSE LAG(e.{{ column }}) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) END)
      {%- endfor %}
        OR (LAG({{ sequence_by }}) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) IS NULL AND e.__current_seq IS NULL) AS __new_version
    FROM versions AS e
  ),
  grouped AS (
    -- an untracked change joins the version it follows: one group per new version
    SELECT *, sum(CASE WHEN __new_version THEN 1 ELSE 0 END) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) AS __group
    FROM changes
  ),
  collapsed AS (
    -- each group's last event carries the values; its first event's sequence starts the version
    SELECT * FROM (
      SELECT *, min({{ sequence_by }}) OVER (PARTITION BY {{ keys | join(', ') }}, __group) AS __group_start,
        ROW_NUMBER() OVER (PARTITION BY {{ keys | join(', ') }}, __group ORDER BY {{ sequence_by }} DESC) AS __last
      FROM grouped
    ) AS g
    WHERE __last = 1
  ),
  ordered AS (
    SELECT *,
      LEAD(__group_start) OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) AS __next_version,
      ROW_NUMBER() OVER (PARTITION BY {{ keys | join(', ') }} ORDER BY {{ sequence_by }}) AS __version
    FROM collapsed
  )
  -- group 0 (untracked changes) updates the key's current row in place; the first new
  -- version closes it ...
  SELECT 'close' AS __action, {% for key in keys %}{{ key }} AS __merge_{{ key }}, {% endfor %}{{ carried | join(', ') }}, __next_version, __group, __group_start
  FROM ordered
  WHERE __version = 1
  UNION ALL
  -- ... and every new version is inserted, valid from its first event until the next version
  SELECT 'insert' AS __action, {% for key in keys %}NULL AS __merge_{{ key }}, {% endfor %}{{ carried | join(', ') }}, __next_version, __group, __group_start
  FROM ordered
  WHERE __group > 0
) AS s
ON s.__action = 'close'
  {%- for key in keys %}
  AND t.{{ key }} = s.__merge_{{ key }}
  {%- endfor %}
  AND t.{{ is_current }}
{%- for column in prune_by %}
  AND {{ batch_stats.predicate(column, 't') }}
{%- endfor %}
WHEN MATCHED AND s.__group = 0 THEN UPDATE SET
{%- for column in payload if column | lower not in key_lower %}
  t.{{ column }} = s.{{ column }},
{%- endfor %}
  t.{{ valid_to }} = s.__next_version,
  t.{{ is_current }} = s.__next_version IS NULL
WHEN MATCHED THEN UPDATE SET
  t.{{ valid_to }} = s.__group_start,
  t.{{ is_current }} = false
WHEN NOT MATCHED AND s.__action = 'insert' THEN
  INSERT ({{ (payload + scd_columns) | join(', ') }})
  VALUES ({% for column in payload %}s.{{ column }}, {% endfor %}s.__group_start, s.__next_version, s.__next_version IS NULL
  {{- (", coalesce(s." ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false)") if delete_column }})
{%- else %}
{{- scd2_full_history(target, source, keys, sequence_by, delete_column, delete_values, scd_columns, prune_by, payload, carried, ties) }}
{%- endif %}
{%- endmacro %}


{#- scd2() without track_history_*: every event is a version, and a version arriving late is
    put at its place in the key's history. The batch's versions (one per sequence value) that
    the target does not hold yet are laid on the key's timeline beside the versions it holds;
    each version is valid until the next one starts. Held versions whose end moves (the one
    before each new version) are updated, new versions inserted. So the history does not
    depend on how events fall into batches nor on the order they arrive in. -#}
{%- macro scd2_full_history(target, source, keys, sequence_by, delete_column, delete_values,
                            scd_columns, prune_by, payload, carried, ties) -%}
{%- set valid_from, valid_to, is_current = scd_columns[0], scd_columns[1], scd_columns[2] -%}
{%- set by_key = keys | join(', ') -%}
{%- set same_key = namespace(terms=[]) -%}
{%- for key in keys -%}{%- set same_key.terms = same_key.terms + ['b.' ~ key ~ ' = h.' ~ key] -%}{%- endfor -%}
{%- set values = carried | reject('in', keys) | list -%}
MERGE INTO {{ target }} AS t
USING (
  WITH batch_versions AS (
    -- this batch's versions of each key, one per {{ sequence_by }}
    SELECT * FROM (
      SELECT *, ROW_NUMBER() OVER (PARTITION BY {{ (keys + [sequence_by]) | join(', ') }}{{ ' ORDER BY ' ~ ties | join(', ') if ties }}) AS __row_number
      FROM {{ source }}
    )
    WHERE __row_number = 1
  ),
  held AS (
    -- the versions the target holds of the batch's keys
    SELECT {{ keys | join(', ') }}, {{ valid_from }}, {{ valid_to }}
    FROM {{ target }} AS h
    LEFT SEMI JOIN batch_versions AS b ON {{ same_key.terms | join(' AND ') }}
    {%- for column in prune_by %}
    {{ 'WHERE' if loop.first else '  AND' }} {{ batch_stats.predicate(column, 'h') }}
    {%- endfor %}
  ),
  timeline AS (
    -- held and new versions of each key in {{ sequence_by }} order, each valid until the next
    SELECT *, LEAD(__valid_from) OVER (PARTITION BY {{ by_key }} ORDER BY __valid_from) AS __next_version
    FROM (
      SELECT 'close' AS __action, {{ keys | join(', ') }}, {{ valid_from }} AS __valid_from, {{ valid_to }} AS __valid_to{% for column in values %}, NULL AS {{ column }}{% endfor %}
      FROM held
      UNION ALL
      -- a version the target already holds (a redelivery) is not new
      SELECT 'insert' AS __action, {{ keys | join(', ') }}, {{ sequence_by }} AS __valid_from, NULL AS __valid_to{% for column in values %}, {{ column }}{% endfor %}
      FROM batch_versions AS b
      LEFT ANTI JOIN held AS h ON {{ same_key.terms | join(' AND ') }} AND h.{{ valid_from }} = b.{{ sequence_by }}
    )
  )
  -- new versions, and held versions whose end moved
  SELECT __action, {{ keys | join(', ') }}, __valid_from, __valid_to{% for column in values %}, {{ column }}{% endfor %}, __next_version
  FROM timeline
  WHERE __action = 'insert' OR NOT (__valid_to <=> __next_version)
) AS s
ON s.__action = 'close'
  {%- for key in keys %}
  AND t.{{ key }} = s.{{ key }}
  {%- endfor %}
  AND t.{{ valid_from }} = s.__valid_from
{%- for column in prune_by %}
  AND {{ batch_stats.predicate(column, 't') }}
{%- endfor %}
WHEN MATCHED THEN UPDATE SET
  t.{{ valid_to }} = s.__next_version,
  t.{{ is_current }} = s.__next_version IS NULL
WHEN NOT MATCHED AND s.__action = 'insert' THEN
  INSERT ({{ (payload + scd_columns) | join(', ') }})
  VALUES ({% for column in payload %}s.{{ column }}, {% endfor %}s.__valid_from, s.__next_version, s.__next_version IS NULL
  {{- (", coalesce(s." ~ delete_column ~ " IN ('" ~ delete_values | join("', '") ~ "'), false)") if delete_column }})
{%- endmacro %}
