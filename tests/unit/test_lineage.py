"""The lineage of the example project, as target/manifest.json records it. No JVM."""

import subprocess
import sys
from pathlib import Path

from runner.artifacts import build_manifest
from runner.project import load
from runner.selection import dependency_graph

EXAMPLE = Path(__file__).resolve().parents[2]

# Every edge of the example project: (from, to, kind), the way data flows.
EXAMPLE_EDGES = {
    ("source:json:target/landing/orders", "stream:orders", "reads"),
    ("stream:orders", "model:orders_merge", "feeds"),
    ("model:orders_merge", "table:silver.orders", "writes"),
    ("model:orders_merge", "quarantine:quarantine.orders_merge", "quarantines"),
    ("table:silver.orders", "stream:order_changes", "change_data_feed"),
    ("stream:order_changes", "model:customer_totals", "feeds"),
    ("model:customer_totals", "table:gold.customer_totals", "writes"),
    ("source:kafka:orders", "stream:orders_kafka", "reads"),
    ("stream:orders_kafka", "model:orders_kafka_merge", "feeds"),
    ("model:orders_kafka_merge", "table:silver.orders_from_kafka", "writes"),
    ("model:orders_kafka_merge", "quarantine:quarantine.orders_kafka_merge", "quarantines"),
    ("seed:customers", "table:ref.customers", "loads"),
    ("table:ref.customers", "model:orders_merge", "test_reads"),
    ("table:gold.customer_totals", "test:assert_no_negative_totals", "test_reads"),  # tests/*.sql
}


def test_manifest_lineage_of_the_example_lists_every_edge() -> None:
    manifest = build_manifest(load(EXAMPLE))
    lineage = manifest["lineage"]
    edges = {(e["source"], e["target"], e["kind"]) for e in lineage["edges"]}
    assert edges == EXAMPLE_EDGES
    nodes = {n["id"] for n in lineage["nodes"]}
    assert nodes == {end for edge in EXAMPLE_EDGES for end in edge[:2]}
    # customer_totals reads orders_merge's Change Data Feed: that is a model dependency.
    assert manifest["models"]["customer_totals"]["depends_on"]["models"] == ["orders_merge"]
    assert manifest["models"]["orders_merge"]["depends_on"]["models"] == []
    assert manifest["seeds"]["customers"]["table"] == "ref.customers"


def test_selection_and_manifest_share_one_graph() -> None:
    project = load(EXAMPLE)
    manifest = build_manifest(project)
    graph = dependency_graph(project)
    for name, entry in manifest["models"].items():
        assert sorted(graph[name]) == entry["depends_on"]["models"]


def test_docs_generation_stays_in_the_pure_half(example_project: Path) -> None:
    code = (
        "import sys; from runner.project import load; from runner.docs_site import generate_docs;"
        f"index = generate_docs(load({str(example_project)!r}));"
        "assert 'pyspark' not in sys.modules, 'pyspark was imported';"
        "assert index.read_text().count('model:orders_merge') >= 1"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_ref_in_sql_and_a_quarantine_expectation_are_edges(example_project: Path) -> None:
    """Beyond the example: ``ref()`` inside a model's SQL, and a model on a Delta stream (whose
    source quarantines nothing) with an expectation in quarantine mode."""
    (example_project / "models" / "big_customers.sql").write_text(
        "{{ config(stream='order_changes', target='gold.big_customers', unique_key='customer_id',\n"
        "          expectations={'positive': {'expect': 'amount > 0', "
        "'on_violation': 'quarantine'}}) }}\n"
        "MERGE INTO {{ this }} AS t\n"
        "USING (SELECT * FROM {{ ref('customer_totals') }} WHERE order_count > 3) AS s\n"
        "ON t.customer_id = s.customer_id\n"
        "WHEN NOT MATCHED THEN INSERT *;\n"
    )
    manifest = build_manifest(load(example_project))
    edges = {(e["source"], e["target"], e["kind"]) for e in manifest["lineage"]["edges"]}
    assert edges - EXAMPLE_EDGES == {
        ("stream:order_changes", "model:big_customers", "feeds"),
        ("table:gold.customer_totals", "model:big_customers", "ref"),
        ("model:big_customers", "table:gold.big_customers", "writes"),
        ("model:big_customers", "quarantine:quarantine.big_customers", "quarantines"),
    }
    depends_on = manifest["models"]["big_customers"]["depends_on"]["models"]
    assert depends_on == ["customer_totals", "orders_merge"]
