"""target/run_results.json: dbt's shape, the statuses of a run that failed half-way, and the
JUnit XML written from the same results. No JVM."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runner.cli.run_record import RunRecord
from runner.junit import write_junit
from runner.model_tests.results import FAIL, TestResult
from runner.run_results import (
    NodeResult,
    junit_cases,
    node_of_test,
    run_results_data,
    shape_problems,
    write_run_results,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_the_document_has_dbts_shape(tmp_path: Path) -> None:
    results = [
        NodeResult("seed", "customers", "success", T0, T0 + timedelta(seconds=2)),
        NodeResult(
            "model",
            "orders_merge",
            "success",
            T0 + timedelta(seconds=2),
            T0 + timedelta(seconds=7.5),
            "3 batches, 9 rows in",
            adapter_response={"rows_affected": 9, "batches": 3},
        ),
        node_of_test(
            TestResult("unique_orders", "data", "orders_merge", status=FAIL, failures=2,
                       message="2 failing rows", seconds=1.0),
            T0 + timedelta(seconds=9),
        ),
    ]  # fmt: skip
    data = run_results_data(
        "shop", "build", results, T0, {"select": ["orders_merge+"]},
        completed_at=T0 + timedelta(seconds=10), invocation_id="abc",
    )  # fmt: skip
    path = write_run_results(tmp_path, data)
    assert path == tmp_path / "target" / "run_results.json"
    read = json.loads(path.read_text())
    assert shape_problems(read) == []
    assert read["elapsed_time"] == 10.0
    assert read["args"] == {"which": "build", "select": ["orders_merge+"]}
    assert read["metadata"]["generated_at"] == "2026-01-02T03:04:15.000000Z"
    model = read["results"][1]
    assert model["unique_id"] == "model.shop.orders_merge"
    assert model["execution_time"] == 5.5
    assert model["timing"] == [
        {
            "name": "execute",
            "started_at": "2026-01-02T03:04:07.000000Z",
            "completed_at": "2026-01-02T03:04:12.500000Z",
        }
    ]
    assert model["adapter_response"]["rows_affected"] == 9
    test = read["results"][2]
    assert (test["unique_id"], test["status"], test["failures"]) == (
        "test.shop.unique_orders",
        "fail",
        2,
    )
    assert test["execution_time"] == 1.0


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ({"results": "x"}, "results: missing or not a list"),
        ({"metadata": {}}, "metadata.generated_at: missing"),
        ({"results": [{"status": "ok"}]}, "results[0].status: 'ok' is not one of"),
        ({"results": [{"unique_id": "orders"}]}, "results[0].unique_id: not <resource_type>"),
    ],
)
def test_shape_problems_name_what_is_wrong(broken: dict, problem: str) -> None:
    data = run_results_data("shop", "run", [], T0, {}, completed_at=T0)
    assert shape_problems(data) == []
    problems = shape_problems({**data, **broken})
    assert any(p.startswith(problem) for p in problems), problems


def test_a_run_that_fails_half_way_has_success_error_and_skipped() -> None:
    record = RunRecord(["a", "b", "c"], started_at=T0)
    record.fail("b", "b.sql:3: Spark rejected the MERGE")
    statuses = [(r.name, r.status) for r in record.model_results()]
    assert statuses == [("a", "success"), ("b", "error"), ("c", "skipped")]
    assert record.model_results()[2].message == "skipped: b failed before it ran"

    unknown = RunRecord(["a", "b"], started_at=T0)
    unknown.fail(None, "interrupted")
    assert {r.status for r in unknown.model_results()} == {"error"}


def test_junit_counts_failures_errors_and_skips(tmp_path: Path) -> None:
    record = RunRecord(["a", "b", "c"], started_at=T0)
    record.fail("b", "boom")
    path = tmp_path / "junit.xml"
    write_junit(junit_cases(record.model_results()), path, suite="runner run shop")
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("errors"), suite.get("skipped")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["a"].find("*") is None
    assert cases["b"].find("error").get("message") == "boom"  # type: ignore[union-attr]
    assert cases["c"].find("skipped") is not None
