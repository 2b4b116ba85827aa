"""A deterministic corpus of the statements models contain, valid ones and broken mutations.

Used by the differential test (tests/spark/test_lint_agreement.py): each statement is parsed by
Spark's own parser (with the Delta extension) and by the lint parser, which must agree. The
corpus is built in code from templates; mutations are chosen with a seeded random generator, so
every run tests the same statements.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

SEED = 13

TARGETS = ["silver.orders", "orders", "`silver`.`order items`", "delta.`/tmp/lint/orders`"]
SOURCES = [
    "orders_latest",
    "(SELECT * FROM orders_batch WHERE op <> 'D')",
    "(SELECT order_id, max(updated_at) AS updated_at FROM orders_batch GROUP BY order_id)",
]
CONDITIONS = [
    "t.order_id = s.order_id",
    "t.order_id = s.order_id AND t.region = s.region",
    "t.order_id <=> s.order_id",
]
MATCHED = [
    "WHEN MATCHED THEN UPDATE SET *",
    "WHEN MATCHED THEN DELETE",
    "WHEN MATCHED AND s.op = 'D' THEN DELETE",
    "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET t.status = s.status, "
    "t.amount = s.amount",
    "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *",
]
NOT_MATCHED = [
    "WHEN NOT MATCHED THEN INSERT *",
    "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *",
    "WHEN NOT MATCHED BY TARGET THEN INSERT (order_id, status) VALUES (s.order_id, s.status)",
    "WHEN NOT MATCHED THEN INSERT (order_id, amount) VALUES (s.order_id, coalesce(s.amount, 0))",
]
NOT_MATCHED_BY_SOURCE = [
    "WHEN NOT MATCHED BY SOURCE THEN DELETE",
    "WHEN NOT MATCHED BY SOURCE AND t.status = 'open' THEN UPDATE SET t.status = 'closed'",
]
QUERIES = [
    "SELECT * FROM orders_batch",
    "SELECT order_id, status FROM orders_batch WHERE op <> 'D'",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY updated_at "
    "DESC) AS rn FROM orders_batch) WHERE rn = 1",
    "SELECT customer_id, sum(amount) AS total FROM orders_batch GROUP BY customer_id",
    "WITH l AS (SELECT * FROM orders_batch) SELECT l.order_id FROM l JOIN customers c "
    "ON l.customer_id = c.id",
    "SELECT order_id FROM orders_batch UNION ALL SELECT order_id FROM late_orders",
    "SELECT CAST(amount AS DECIMAL(10, 2)) AS amount, current_timestamp() AS seen "
    "FROM orders_batch",
]


def _merges() -> list[str]:
    out = []
    clause_sets = itertools.product(
        [[], *[[m] for m in MATCHED], [MATCHED[2], MATCHED[4]]],
        [[], *[[n] for n in NOT_MATCHED]],
        [[], *[[b] for b in NOT_MATCHED_BY_SOURCE]],
    )
    for index, (matched, not_matched, by_source) in enumerate(clause_sets):
        clauses = [*matched, *not_matched, *by_source]
        if not clauses:
            continue
        target = TARGETS[index % len(TARGETS)]
        source = SOURCES[index % len(SOURCES)]
        on = CONDITIONS[index % len(CONDITIONS)]
        evolve = " WITH SCHEMA EVOLUTION" if index % 7 == 3 else ""
        alias = " AS t" if index % 2 else " t"
        out.append(
            f"MERGE{evolve} INTO {target}{alias}\nUSING {source} AS s\nON {on}\n"
            + "\n".join(clauses)
        )
    return out


def valid_statements() -> list[str]:
    """Statements Spark with the Delta extension parses (checked by the differential test)."""
    out = _merges()
    for index, query in enumerate(QUERIES):
        out += [
            f"CREATE OR REPLACE TEMPORARY VIEW orders_latest AS\n{query}",
            f"CREATE TEMPORARY VIEW v{index} AS {query}",
            f"INSERT INTO silver.orders {query}",
            f"INSERT OVERWRITE silver.orders {query}",
            f"INSERT INTO silver.orders (order_id, status) {query}",
            query,
        ]
    for target in TARGETS:
        out += [
            f"UPDATE {target} SET status = 'closed' WHERE order_id = '1'",
            f"UPDATE {target} SET status = 'closed', amount = amount + 1",
            f"DELETE FROM {target} WHERE op = 'D'",
            f"DELETE FROM {target}",
            f"DELETE FROM {target} WHERE order_id IN (SELECT order_id FROM orders_batch)",
            f"OPTIMIZE {target}",
            f"OPTIMIZE {target} ZORDER BY (customer_id)",
            f"OPTIMIZE {target} WHERE day >= '2024-01-01' ZORDER BY (customer_id, status)",
            f"VACUUM {target}",
            f"VACUUM {target} RETAIN 168 HOURS",
            f"VACUUM {target} RETAIN 200 HOURS DRY RUN",
            f"VACUUM {target} DRY RUN",
            f"DESCRIBE HISTORY {target}",
            f"DESCRIBE HISTORY {target} LIMIT 5",
        ]
    for target in TARGETS[:3]:
        out += [
            f"ALTER TABLE {target} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
            f"ALTER TABLE {target} SET TBLPROPERTIES ('a' = '1', 'b' = '2')",
            f"ALTER TABLE {target} UNSET TBLPROPERTIES ('a')",
            f"ALTER TABLE {target} UNSET TBLPROPERTIES IF EXISTS ('a', 'b')",
            f"RESTORE TABLE {target} TO VERSION AS OF 3",
            f"RESTORE TABLE {target} TO TIMESTAMP AS OF '2024-01-01 00:00:00'",
            f"RESTORE {target} VERSION AS OF 1",
            f"TRUNCATE TABLE {target}",
            f"CREATE SCHEMA IF NOT EXISTS silver{TARGETS.index(target)}",
        ]
    return out


# -- mutations -----------------------------------------------------------------------------

_KEYWORDS = (
    "MERGE", "INTO", "USING", "ON", "WHEN", "MATCHED", "THEN", "UPDATE", "SET", "INSERT",
    "VALUES", "DELETE", "FROM", "WHERE", "SELECT", "VIEW", "TEMPORARY", "AS", "BY", "ZORDER",
    "OPTIMIZE", "VACUUM", "RETAIN", "HOURS", "HISTORY", "TBLPROPERTIES", "TABLE", "RESTORE",
    "VERSION", "OF", "GROUP", "OVER", "PARTITION",
)  # fmt: skip


@dataclass(frozen=True)
class Mutation:
    kind: str
    sql: str


def _words(sql: str) -> list[re.Match[str]]:
    return [m for m in re.finditer(r"\b[A-Z]+\b", sql) if m.group() in _KEYWORDS]


def mutations(sql: str, rng: random.Random, others: list[str]) -> list[Mutation]:
    """A few broken variants of ``sql``: a keyword dropped or misspelled, an ON/THEN/INTO
    removed, a parenthesis unbalanced, another statement run into it."""
    out = []
    words = _words(sql)
    if words:
        word = rng.choice(words)
        out.append(Mutation("drop-keyword", sql[: word.start()] + sql[word.end() :]))
        word = rng.choice(words)
        typo = word.group()[:-1] if len(word.group()) > 2 else word.group() + "X"
        out.append(Mutation("misspell-keyword", sql[: word.start()] + typo + sql[word.end() :]))
    for keyword in ("ON", "THEN", "INTO"):
        found = [m for m in words if m.group() == keyword]
        if found:
            word = rng.choice(found)
            out.append(Mutation(f"missing-{keyword}", sql[: word.start()] + sql[word.end() :]))
    parens = [i for i, ch in enumerate(sql) if ch in "()"]
    if parens:
        at = rng.choice(parens)
        out.append(Mutation("unbalanced-paren", sql[:at] + sql[at + 1 :]))
    else:
        out.append(Mutation("unbalanced-paren", sql + " ("))
    out.append(Mutation("run-together", sql + "\n" + rng.choice(others)))
    return out


def corpus() -> list[tuple[str, str]]:
    """``(kind, sql)``: every valid statement (kind ``valid``) and its mutations, in a fixed
    order; duplicates removed."""
    rng = random.Random(SEED)
    valid = valid_statements()
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for sql in valid:
        for kind, text in [("valid", sql), *((m.kind, m.sql) for m in mutations(sql, rng, valid))]:
            if text not in seen:
                seen.add(text)
                out.append((kind, text))
    return out
