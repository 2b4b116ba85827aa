"""SQL parsing helpers (sqlglot-based Delta Lake dialect)."""
