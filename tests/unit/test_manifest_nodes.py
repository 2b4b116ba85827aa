"""What the manifest says about streams, seeds and quarantine tables (each has a page in the docs
site), and the set-up statements' conditions, which `runner compile` and the site share. No JVM."""

from pathlib import Path

from runner.artifacts import build_manifest, render_compiled_model, setup_steps
from runner.docs_site import site_data
from runner.lineage import QUARANTINE_COLUMNS
from runner.project import load


def test_streams_say_where_they_read(example_project: Path) -> None:
    streams = build_manifest(load(example_project))["streams"]
    assert streams["orders"]["path"] == "target/landing/orders"
    assert streams["orders"]["line"] == 4
    assert streams["order_changes"]["ref"] == "orders_merge"
    assert streams["order_changes"]["change_data_feed"] is True
    kafka = streams["orders_kafka"]["kafka"]
    assert list(kafka["topics"]) == ["orders"] and kafka["bootstrap_servers"] == "localhost:9092"
    assert list(kafka["required"]) == ["order_id", "updated_at", "op"]
    assert streams["orders"]["kafka"] is None


def test_a_seed_counts_its_rows_and_a_bad_value_leaves_the_count_unknown(
    example_project: Path,
) -> None:
    seed = build_manifest(load(example_project))["seeds"]["customers"]
    assert seed["rows"] == 3
    assert seed["declared_in"] == "seeds/seeds.yml:4"
    with (example_project / "seeds" / "customers.csv").open("a") as csv:
        csv.write("c9,Nine,gold,not a date\n")
    assert build_manifest(load(example_project))["seeds"]["customers"]["rows"] is None


def test_quarantine_tables_say_what_lands_there(example_project: Path) -> None:
    (example_project / "models" / "big_customers.sql").write_text(
        "{{ config(stream='order_changes', target='gold.big_customers', unique_key='customer_id',\n"
        "          expectations={'positive': {'expect': 'amount > 0', "
        "'on_violation': 'quarantine'}}) }}\n"
        "MERGE INTO {{ this }} AS t USING orders_merge__batch AS s\n"
        "ON t.customer_id = s.customer_id WHEN NOT MATCHED THEN INSERT *;\n"
    )
    quarantine = build_manifest(load(example_project))["quarantine"]
    assert sorted(quarantine) == [
        "quarantine.big_customers",
        "quarantine.orders_kafka_merge",
        "quarantine.orders_merge",
    ]
    merge = quarantine["quarantine.orders_merge"]
    assert merge["model"] == "orders_merge"
    assert merge["location"] == "target/local/warehouse/_quarantine/orders_merge"
    assert merge["columns"] == QUARANTINE_COLUMNS
    assert merge["receives"] == [
        "lines that do not parse or hold a value of the wrong type for the schema "
        "(stream orders, json)"
    ]
    assert quarantine["quarantine.orders_kafka_merge"]["receives"][0].startswith(
        "records whose value is not valid JSON"
    )
    assert quarantine["quarantine.big_customers"]["receives"] == [
        "rows failing expectation positive: amount > 0"
    ]


def test_the_site_labels_each_setup_statement_as_compile_does(example_project: Path) -> None:
    project = load(example_project)
    model = project.model("orders_merge")
    compiled = render_compiled_model(project, model)
    shown = site_data(project)["models"]["orders_merge"]["compiled"]["setup"]
    steps = setup_steps(project, model)
    assert [(s["label"], s["when"]) for s in shown] == [(s.label, when) for s, when in steps]
    assert [s["label"] for s in shown] == ["setup[0]", "setup[1]", "setup[1]", "setup[2]"]
    assert shown[1]["when"] != shown[2]["when"]
    for statement in shown:
        assert f"-- {statement['label']}: {statement['when']}\n{statement['sql']};" in compiled
