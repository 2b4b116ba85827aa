"""Write runner/lint/spark_functions.py: the names of Spark's built-in functions, and which of
them are aggregates, as the pinned Spark (with Delta's extension) registers them.

    .venv/bin/python scripts/spark_functions.py

The no-JVM lint reads that file to know an unknown function (`UNRESOLVED_ROUTINE`), an
aggregate (`MISSING_AGGREGATION`) and a call with the wrong number of arguments
(`WRONG_NUM_ARGS`). Re-run it when the pinned pyspark changes;
tests/spark/test_spark_functions.py checks the file against the running Spark.
"""

from __future__ import annotations

import logging
import re
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "runner" / "lint" / "spark_functions.py"


def _listed(function_registry) -> list:  # noqa: ANN001 - a JVM FunctionRegistry
    """The function identifiers ``function_registry`` lists."""
    found = []
    iterator = function_registry.listFunction().iterator()
    while iterator.hasNext():
        found.append(iterator.next())
    return found


def table_functions(spark) -> frozenset[str]:  # noqa: ANN001 - a SparkSession
    """The names Spark has only as table functions (Delta's table_changes, ...): called in a
    FROM, not as a value (range, explode, ... are both)."""
    state = spark._jsparkSession.sessionState()
    scalar = {i.funcName().lower() for i in _listed(state.functionRegistry())}
    return frozenset(i.funcName().lower() for i in _listed(state.tableFunctionRegistry())) - scalar


def registry(spark) -> tuple[list[str], list[str]]:  # noqa: ANN001 - a SparkSession
    """(every built-in function's name, the aggregates' names), sorted, lower-case."""
    function_registry = spark._jsparkSession.sessionState().functionRegistry()
    names, aggregates = set(), set()
    for identifier in _listed(function_registry):
        name = identifier.funcName().lower()
        names.add(name)
        info = function_registry.lookupFunction(identifier)
        if info.isDefined() and info.get().getGroup() == "agg_funcs":
            aggregates.add(name)
    # table functions (range, explode, Delta's table_changes, ...) are called the same way
    table_registry = spark._jsparkSession.sessionState().tableFunctionRegistry()
    names.update(i.funcName().lower() for i in _listed(table_registry))
    return sorted(names), sorted(aggregates)


PROBED_UP_TO = 6  # argument counts tried: 0 to this; accepting this many means "or more"
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


# what Spark says of a wrong argument count: its own functions', and Delta's table functions'
_WRONG_COUNT = ("WRONG_NUM_ARGS", "INCORRECT_NUMBER_OF_ARGUMENTS")


def arities(
    spark,  # noqa: ANN001 - a SparkSession
    names: list[str],
    tables: frozenset[str] = frozenset(),
) -> dict[str, tuple[tuple[int, ...], bool]]:
    """For each function Spark refuses some argument count of (``WRONG_NUM_ARGS``): the counts
    from 0 to PROBED_UP_TO it accepts, and whether it accepts PROBED_UP_TO (then more are taken
    as accepted too). Probed by analysing ``SELECT (fn(NULL, ...))``, or ``SELECT * FROM
    fn(NULL, ...)`` for a name in ``tables`` that Spark has only as a table function (Delta's
    table_changes); any other error (a type error, a generator where a value is expected) means
    the count itself was accepted. A name the parser treats as syntax is left out."""
    from pyspark.errors import AnalysisException, ParseException

    # pyspark logs every failed query with its stack trace; thousands are expected here
    logging.getLogger("SQLQueryContextLogger").disabled = True
    found: dict[str, tuple[tuple[int, ...], bool]] = {}
    for name in names:
        if not _NAME.fullmatch(name):
            continue
        accepted, refused, parsed = [], False, True
        for count in range(PROBED_UP_TO + 1):
            try:
                # in parentheses: a bare `current_timestamp(x)` in a SELECT list is read as
                # the keyword with an alias list, while in an expression it is a call
                call = f"{name}({', '.join(['NULL'] * count)})"
                spark.sql(f"SELECT * FROM {call}" if name in tables else f"SELECT ({call})")
            except ParseException:
                parsed = False
                break
            except AnalysisException as error:
                if (error.getCondition() or "").startswith(_WRONG_COUNT):
                    refused = True
                    continue
            except Exception as error:  # noqa: BLE001 - any other error: the count is accepted
                # Delta's count error reaches pyspark only as a Java error naming its class
                if any(code in str(error) for code in _WRONG_COUNT):
                    refused = True
                    continue
            accepted.append(count)
        if parsed and refused:
            found[name] = (tuple(accepted), PROBED_UP_TO in accepted)
    return found


def render(
    version: str,
    names: list[str],
    aggregates: list[str],
    counts: dict[str, tuple[tuple[int, ...], bool]],
) -> str:
    def listing(items: list[str]) -> str:
        return "\n".join(f'        "{item}",' for item in items)

    arity_lines = "\n".join(
        f'    "{name}": ({accepted!r}, {more}),'
        for name, (accepted, more) in sorted(counts.items())
    )
    return f'''"""Spark {version}'s built-in functions, as its function registry lists them
(generated by scripts/spark_functions.py; do not edit). The no-JVM lint's source of truth for
an unknown function, an aggregate, and the number of arguments a function takes."""

FUNCTIONS = frozenset(
    {{
{listing(names)}
    }}
)

AGGREGATES = frozenset(
    {{
{listing(aggregates)}
    }}
)

# The argument counts (0 to ARITY_PROBED_UP_TO) each function accepts, and whether it also
# accepts more; only functions Spark refuses some count of (WRONG_NUM_ARGS) are listed.
ARITY_PROBED_UP_TO = {PROBED_UP_TO}
ARITIES: dict[str, tuple[tuple[int, ...], bool]] = {{
{arity_lines}
}}
'''


def main() -> None:
    from pyspark import __version__

    from runner.project import load
    from runner.spark.analyze import analysis_session

    scratch = Path(tempfile.mkdtemp(prefix="spark-functions-"))
    spark = analysis_session(load(REPO), scratch)
    try:
        names, aggregates = registry(spark)
        counts = arities(spark, names, table_functions(spark))
    finally:
        spark.stop()
    OUT.write_text(render(__version__, names, aggregates, counts))
    print(
        f"{OUT.relative_to(REPO)}: {len(names)} functions, {len(aggregates)} aggregates, "
        f"{len(counts)} with a fixed number of arguments"
    )


if __name__ == "__main__":
    main()
