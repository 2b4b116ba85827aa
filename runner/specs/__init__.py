"""The specs of a project: typed, immutable values read from its files and validated, with the
file and line of each error.

- ``target``: where the project runs (project.yml's ``targets:``); ``lint``: its ``lint:`` key;
- ``stream``, ``kafka``: the sources of ``streams/*.yml``; ``model``: a model and its ``config()``;
- ``seeds``, ``data_tests``, ``unit_tests``, ``models_yaml``, ``suite``: what ``seeds/*.yml``
  and ``models/*.yml`` declare; ``values``: the checks of their values against declared types;
- ``layout``: where a project keeps its files.

A specs module imports only other specs modules, the errors, YAML loading, the pure value
parsers they use (``runner.choices``, ``ddl``, ``secrets``, ``target_address``, ``expectations``,
``error_text``), the SQL grammar (``runner.sql``: expectations parse their conditions) and the
standard library: a spec is read and checked, never run or rendered (the import-graph test,
tests/unit/test_import_graph.py, holds this). What turns a spec into SQL or runs it lives
elsewhere: ``runner.model_sql``, ``runner.seed_sql``, ``runner.model_tests``, ``runner.spark``.
"""
