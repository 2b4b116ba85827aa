"""Seeds, data tests and unit tests without a JVM: YAML specs, CSV checks, test SQL, diffs."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.model_tests.data_test_sql import data_test_sql
from runner.model_tests.diff import diff_rows, diff_table
from runner.model_tests.results import (
    FAIL,
    TestResult,
    failing_rows_table,
    plain_text,
    write_junit_xml,
)
from runner.model_tests.unit_columns import table_columns
from runner.project import load
from runner.specs.data_tests import load_data_tests
from runner.specs.seeds import SeedError, load_seeds, read_csv_rows
from runner.specs.unit_tests import checked_rows, load_unit_tests
from runner.specs.values import Column, check_value, parse_columns
from runner.suite_selection import load_suite, select_tests

NOW = datetime(2024, 1, 2, 12, 0, 0)


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("10.5", "DECIMAL(10,2)", "10.5"),
        ("10.50", "DECIMAL(10,2)", "10.50"),
        ("-3", "INT", "-3"),
        ("2024-01-01T10:00:00", "TIMESTAMP", "2024-01-01 10:00:00"),
        (datetime(2024, 1, 1, 10), "TIMESTAMP", "2024-01-01 10:00:00"),
        ("TRUE", "BOOLEAN", "true"),
        ("2023-03-01", "DATE", "2023-03-01"),
        ("", "INT", None),
        (None, "STRING", None),
    ],
)
def test_check_value_accepts_and_normalises(value, kind, expected) -> None:
    assert check_value(value, Column("x", kind)) == expected


@pytest.mark.parametrize(
    ("value", "kind"),
    [("abc", "DECIMAL(10,2)"), ("1.234", "DECIMAL(10,2)"), ("123456789", "DECIMAL(10,2)"),
     ("1.5", "INT"), ("3000000000", "INT"), ("yes", "BOOLEAN"), ("2024-13-01", "DATE"),
     ("soon", "TIMESTAMP")],
)  # fmt: skip
def test_check_value_rejects_what_does_not_fit(value: str, kind: str) -> None:
    with pytest.raises(ValueError) as error:
        check_value(value, Column("x", kind))
    assert str(error.value) == f"'{value}' is not a {kind}"


def test_parse_columns_rejects_nested_types() -> None:
    with pytest.raises(ValueError, match="type ARRAY<INT> is not supported"):
        parse_columns("id STRING, tags ARRAY<INT>")


AMOUNTS = parse_columns("id STRING, amount DECIMAL(10,2)")


def test_bad_csv_value_names_file_line_and_column() -> None:
    csv_text = "id,amount\na,1.00\n\nb,abc\n"
    with pytest.raises(SeedError) as error:
        read_csv_rows(io.StringIO(csv_text), Path("seeds/x.csv"), AMOUNTS)
    assert str(error.value) == "seeds/x.csv:4: column 'amount': 'abc' is not a DECIMAL(10,2)"


def test_csv_header_may_reorder_columns_and_must_name_them_all() -> None:
    rows = read_csv_rows(io.StringIO("amount,id\n1.5,a\n,b\n"), Path("x.csv"), AMOUNTS)
    assert rows == [("a", "1.5"), ("b", None)]
    with pytest.raises(SeedError, match="x.csv:1: the header does not match"):
        read_csv_rows(io.StringIO("id,total\n"), Path("x.csv"), AMOUNTS)
    with pytest.raises(SeedError, match="x.csv:1: 3 fields, but 2 columns"):
        read_csv_rows(io.StringIO("a,1,2\n"), Path("x.csv"), AMOUNTS, header=False)


def test_example_seed_and_tests_load(example_project: Path) -> None:
    project = load(example_project)
    suite = load_suite(project)
    assert suite.seeds["customers"].table == "ref.customers"
    kinds = {(t.model, t.kind, t.column) for t in suite.data_tests}
    assert ("orders_merge", "relationships", "customer_id") in kinds
    assert ("customer_totals", "expression_is_true", None) in kinds
    assert {t.model for t in suite.unit_tests} == {"orders_merge", "customer_totals"}
    units = select_tests(project, suite, ["orders_merge,test_type:unit"])
    assert not units.data_tests and {t.model for t in units.unit_tests} == {"orders_merge"}
    by_name = select_tests(project, suite, ["unique_customer_totals_customer_id"])
    assert [t.name for t in by_name.data_tests] == ["unique_customer_totals_customer_id"]


def _write_tests(root: Path, text: str) -> None:
    (root / "models" / "schema.yml").write_text(text)


def test_data_test_sql_for_each_kind(example_project: Path) -> None:
    _write_tests(
        example_project,
        "models:\n  orders_merge:\n"
        "    freshness: {column: updated_at, max_age: 2 hours}\n"
        "    columns:\n      status:\n        tests:\n"
        '          - accepted_values: {values: [paid, "o\'k"]}\n',
    )
    project = load(example_project)
    fresh, accepted = load_data_tests(project, load_seeds(project))
    assert data_test_sql(project, accepted, NOW).endswith("WHERE status NOT IN ('paid', 'o\\'k')")
    assert data_test_sql(project, fresh, NOW) == (
        "SELECT MAX(updated_at) AS newest, TIMESTAMP '2024-01-02 12:00:00' AS now, "
        "'2 HOURS' AS max_age\nFROM silver.orders\nHAVING MAX(updated_at) IS NULL OR "
        "MAX(updated_at) < TIMESTAMP '2024-01-02 12:00:00' - INTERVAL 2 HOURS"
    )


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("models:\n  orders_merge:\n    tests: [uniq]\n", "schema.yml:3: unknown data test 'uniq'"),
        ("models:\n  nope: {}\n", "schema.yml:2: tests for 'nope': no such model"),
        (
            "models:\n  orders_merge:\n    columns:\n      a:\n        tests:\n"
            "          - relationships: {to: \"ref('nobody')\", field: id}\n",
            "relationships to ref('nobody'): no model or seed named 'nobody'",
        ),
        (
            "models:\n  orders_merge:\n    freshness: {column: u, max_age: soon}\n",
            "freshness max_age 'soon' is not like '2 hours'",
        ),
    ],
)
def test_data_test_yaml_errors_are_located(example_project: Path, yaml_text, message) -> None:
    _write_tests(example_project, yaml_text)
    project = load(example_project)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_data_tests(project, load_seeds(project))


def test_unit_test_rows_are_checked_with_their_line(example_project: Path) -> None:
    (example_project / "models" / "unit_tests.yml").write_text(
        "unit_tests:\n  t:\n    model: orders_merge\n    batches: [[{order_id: o1}]]\n"
        "    expect:\n      - {order_id: o1}\n      - {order_id: o2, amount: lots}\n"
    )
    project = load(example_project)
    (test,) = load_unit_tests(project)
    columns = table_columns(project, project.models["orders_merge"])
    with pytest.raises(ConfigError) as error:
        checked_rows(test.expect, columns, "expect")
    assert "unit_tests.yml:7: expect: column 'amount': 'lots' is not a DECIMAL(10,2)" in str(
        error.value
    )


def test_row_diff_pairs_changed_rows_by_key() -> None:
    expected = [("o1", "shipped"), ("o2", "paid"), ("o3", "new")]
    actual = [("o1", "paid"), ("o2", "paid"), ("o4", "new")]
    diff = diff_rows(expected, actual, ["order_id", "status"], ["order_id"])
    assert diff.changed == [(("o1", "shipped"), ("o1", "paid"))]
    assert diff.missing == [("o3", "new")] and diff.unexpected == [("o4", "new")]
    assert diff.summary() == "1 changed, 1 missing, 1 unexpected"
    lines = plain_text([diff_table(diff, "target rows")]).splitlines()
    body = [line for line in lines if line.startswith("│")]
    cells = [[cell.strip() for cell in line.split("│")[1:4]] for line in body]
    assert cells == [["-", "o1", "shipped"], ["+", "o1", "paid"], ["-", "o3", "new"],
                     ["+", "o4", "new"]]  # fmt: skip
    assert diff_rows(actual, list(reversed(actual)), ["order_id", "status"]).ok


def test_junit_xml_has_a_testcase_per_test_and_the_diff(tmp_path: Path) -> None:
    diff = diff_rows([("o1", "a")], [("o1", "b")], ["id", "v"], ["id"])
    results = [
        TestResult("ok", "data", "m", seconds=0.5),
        TestResult("broken", "unit", "m", FAIL, 1.0, "target rows: 1 changed",
                   [diff_table(diff, "broken: target rows")]),
    ]  # fmt: skip
    path = tmp_path / "out" / "junit.xml"
    write_junit_xml(results, path, suite="runner test demo")
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["data.m", "unit.m"]
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "target rows: 1 changed"
    assert "o1" in (failure.text or "") and " - " in (failure.text or "")


def test_failing_rows_print_their_values_as_they_are() -> None:
    """Values and names are data: ``[idx]`` is not rich markup, ``:cd:`` not an emoji code."""
    rows = [("[red]x[/], a value wider than the title",), ("a:cd:b",)]
    text = plain_text([failing_rows_table("items[idx] unique", ["tags[0]"], rows, 2)])
    for shown in ("items[idx] unique: 2 failing rows", "tags[0]", "[red]x[/], a value", "a:cd:b"):
        assert shown in text
