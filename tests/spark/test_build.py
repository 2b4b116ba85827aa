"""`runner build` and `runner run` on the example project on real Spark and Delta: the DAG
order, a failing test stopping what is downstream, and target/run_results.json."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from pyspark.sql import SparkSession

from runner.run_results import shape_problems
from tests.conftest import REPO
from tests.spark.test_orders_pipeline import land_sample


def run_results(project: Path) -> dict:
    data = json.loads((project / "target" / "run_results.json").read_text())
    assert shape_problems(data) == []
    return data


def statuses(data: dict) -> dict[str, str]:
    return {r["unique_id"]: r["status"] for r in data["results"]}


def test_build_runs_in_dag_order_and_a_failing_test_skips_downstream(
    spark: SparkSession, cli, example_project: Path
) -> None:
    (example_project / "tests").mkdir()
    shutil.copy(REPO / "tests" / "assert_no_negative_totals.sql", example_project / "tests")
    land_sample(example_project, ["001.json", "002.json"])

    junit = example_project / "target" / "build.xml"
    selection = ["-s", "customers orders_merge+"]
    result = cli("build", "-p", example_project, *selection, "--junit-xml", junit)
    assert result.exit_code == 0, result.output
    out = result.stdout
    order = [
        out.index("seed customers: loaded"),
        out.index("orders_merge batch 0:"),
        out.index("PASS data unique_orders_merge_order_id"),
        out.index("PASS unit customer_totals_follow_order_changes"),
        out.index("customer_totals batch 0:"),
        out.index("PASS singular assert_no_negative_totals"),
    ]
    assert order == sorted(order), out
    done = re.search(r"Done\. PASS=(\d+) FAIL=0 ERROR=0 SKIP=0 TOTAL=(\d+)", out)
    assert done is not None and done.group(1) == done.group(2), out
    assert spark.table("gold.customer_totals").count() > 0
    data = run_results(example_project)
    assert data["args"]["which"] == "build"
    assert set(statuses(data).values()) == {"success", "pass"}
    model = next(r for r in data["results"] if r["unique_id"] == "model.orders_demo.orders_merge")
    assert model["adapter_response"]["batches"] == 2
    assert model["adapter_response"]["rows_affected"] > 0
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == done.group(2)

    # a data test of orders_merge fails: customer_totals and its tests are skipped, saying why
    (example_project / "tests" / "assert_no_orders.sql").write_text(
        "SELECT order_id, status FROM {{ ref('orders_merge') }}\n"
    )
    land_sample(example_project, ["003.json"])
    result = cli("build", "-p", example_project, *selection)
    assert result.exit_code == 1, result.output
    assert "FAIL singular assert_no_orders" in result.stdout
    assert "SKIP model customer_totals: test assert_no_orders failed" in result.stdout
    data = run_results(example_project)
    found = statuses(data)
    assert found["test.orders_demo.assert_no_orders"] == "fail"
    assert found["model.orders_demo.customer_totals"] == "skipped"
    assert found["test.orders_demo.assert_no_negative_totals"] == "skipped"
    assert found["model.orders_demo.orders_merge"] == "success"
    failing = next(r for r in data["results"] if r["status"] == "fail")
    assert failing["failures"] >= 1

    # `runner run` writes its own run_results.json: one result per model
    result = cli("run", "-p", example_project, "-s", "customer_totals")
    assert result.exit_code == 0, result.output
    data = run_results(example_project)
    assert data["args"]["which"] == "run"
    assert statuses(data) == {"model.orders_demo.customer_totals": "success"}
    (totals,) = data["results"]
    assert totals["adapter_response"]["batches"] >= 1
