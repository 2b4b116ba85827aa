"""``description:`` of models, columns, streams and seeds reaches the manifest and the docs
site's data. No JVM."""

import json
import shutil
from pathlib import Path

import pytest

from runner.artifacts import build_manifest, write_compiled
from runner.docs_site import site_data
from runner.errors import ConfigError
from runner.project import load
from runner.selection import select_models


def test_descriptions_reach_the_manifest(example_project: Path) -> None:
    manifest = build_manifest(load(example_project))
    merge = manifest["models"]["orders_merge"]
    assert merge["description"].startswith("The latest state of each order")
    assert merge["columns"]["order_id"] == {
        "name": "order_id",
        "description": "The order's key, one row per order.",
    }
    assert "status" not in merge["columns"]  # a column with tests but no description
    assert manifest["models"]["customer_totals"]["description"] == ""
    assert manifest["streams"]["orders"]["description"].startswith("Order events")
    assert manifest["seeds"]["customers"]["description"].startswith("The shop's customers")


def test_descriptions_reach_the_docs_site_data(example_project: Path) -> None:
    data = site_data(load(example_project))
    assert data["models"]["orders_merge"]["description"].startswith("The latest state")
    assert data["models"]["orders_merge"]["columns"]["order_id"]["description"]
    assert data["streams"]["orders"]["description"] and data["seeds"]["customers"]["description"]


def test_dbt_list_style_columns_carry_descriptions(example_project: Path) -> None:
    (example_project / "models" / "docs.yml").write_text(
        "models:\n  customer_totals:\n    description: per customer\n"
        "    columns:\n      - name: order_count\n        description: orders kept\n"
    )
    entry = build_manifest(load(example_project))["models"]["customer_totals"]
    assert entry["description"] == "per customer"
    assert entry["columns"]["order_count"]["description"] == "orders kept"


MODEL_DOCS = "models:\n  customer_totals:\n    description: [a]\n"


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("models/docs.yml", MODEL_DOCS, "model 'customer_totals': description must be text"),
        ("streams/orders.yml", None, "stream 'orders': description must be text"),
    ],
)
def test_a_description_must_be_text(example_project: Path, file, text, message) -> None:
    path = example_project / file
    if text is None:
        text = path.read_text().replace("description: Order events", "description:\n      - Order")
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        build_manifest(load(example_project))


def test_a_description_is_not_a_modification(example_project: Path, tmp_path: Path) -> None:
    write_compiled(load(example_project))
    state = tmp_path / "state"
    shutil.copytree(example_project / "target" / "compiled", state)
    for file in ("streams/orders.yml", "models/docs.yml", "seeds/seeds.yml"):
        path = example_project / file
        path.write_text(path.read_text().replace("description: ", "description: Changed. "))
    project = load(example_project)
    assert json.loads((state / "manifest.json").read_text())["streams"]["orders"]["description"]
    assert select_models(project, ["state:modified"], state=state) == []


def test_a_model_with_a_description_and_no_columns_loads(example_project: Path) -> None:
    # `columns:` absent was "columns must be a mapping, got dict"
    (example_project / "models" / "docs.yml").write_text(
        "models:\n  customer_totals:\n    description: per customer\n"
    )
    entry = build_manifest(load(example_project))["models"]["customer_totals"]
    assert entry == {**entry, "description": "per customer", "columns": {}}


def test_descriptions_of_one_model_in_two_files_are_merged(example_project: Path) -> None:
    schema = example_project / "models" / "schema.yml"
    schema.write_text(
        schema.read_text().replace(
            "      status:\n", "      status:\n        description: Where the order is.\n", 1
        )
    )
    entry = build_manifest(load(example_project))["models"]["orders_merge"]
    assert entry["description"].startswith("The latest state")  # from models/docs.yml
    assert entry["columns"]["status"]["description"] == "Where the order is."
    assert entry["columns"]["order_id"]["description"]
