{#- The arguments merge() and scd2() share, resolved the same way for both: an argument left
    none takes its default from config() or the batch, and names that may be one column or a
    list of them become lists.

    incremental_arguments(args, source, target, unique_key, sequence_by, prune_by,
                          delete_values, source_columns)
      sets on the namespace `args`:
      source          source, else batch
      target          target, else this
      keys            unique_key (else config.unique_key) as a list
      sequence_by     sequence_by, else config.sequence_by (as given: a name or a list)
      prune_by        prune_by (else config.prune_by) as a list
      delete_values   delete_values as a list
      source_columns  source_columns, else batch_columns
      source_lower, target_lower, key_lower
                      the source's, the target's (target_columns) and the key's column names in
                      lower case, for comparing names the way Spark does
-#}
{%- macro incremental_arguments(args, source, target, unique_key, sequence_by, prune_by,
                                delete_values, source_columns) -%}
{%- set args.source = source if source is not none else batch -%}
{%- set args.target = target if target is not none else this -%}
{%- set unique_key = unique_key if unique_key is not none else config.unique_key -%}
{%- set args.keys = [unique_key] if unique_key is string else (unique_key or []) -%}
{%- set args.sequence_by = sequence_by if sequence_by is not none else config.sequence_by -%}
{%- set prune_by = prune_by if prune_by is not none else config.prune_by -%}
{%- set args.prune_by = [prune_by] if prune_by is string else prune_by -%}
{%- set args.delete_values = [delete_values] if delete_values is string else delete_values -%}
{%- set args.source_columns = source_columns if source_columns is not none else batch_columns -%}
{%- set args.source_lower = args.source_columns | map('lower') | list -%}
{%- set args.target_lower = target_columns | map('lower') | list -%}
{%- set args.key_lower = args.keys | map('lower') | list -%}
{%- endmacro %}
