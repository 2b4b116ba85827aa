"""`runner compile`: labelled, deterministic files under target/compiled/. No JVM."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.artifacts import maintenance_schedule, render_compiled_model, write_compiled
from runner.cli.app import app
from runner.errors import ConfigError
from runner.model_sql import compile_setup
from runner.project import load
from runner.sql.dialect import parse_statement
from runner.templating.splitter import split_statements


def _compiled_bytes(root: Path) -> dict[str, bytes]:
    out = root / "target" / "compiled"
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_compile_twice_is_byte_identical(example_project: Path) -> None:
    result = CliRunner().invoke(app, ["compile", "-p", str(example_project)])
    assert result.exit_code == 0, result.output
    first = _compiled_bytes(example_project)
    models = {p.name for p in (example_project / "models").glob("*.sql")}
    assert "orders_merge.sql" in models
    assert set(first) == models | {"manifest.json"}
    result = CliRunner().invoke(app, ["compile", "-p", str(example_project)])
    assert result.exit_code == 0, result.output
    assert _compiled_bytes(example_project) == first


def test_compile_is_identical_from_two_copies_of_the_project(
    example_project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "somewhere" / "else" / "copy"
    shutil.copytree(example_project, elsewhere)
    write_compiled(load(example_project))
    write_compiled(load(elsewhere))
    first, second = _compiled_bytes(example_project), _compiled_bytes(elsewhere)
    assert first == second
    text = b"".join(first.values()).decode()
    assert str(tmp_path) not in text  # no absolute path leaks into the output


def test_compiled_model_has_labelled_sections_and_relative_paths(example_project: Path) -> None:
    project = load(example_project)
    text = render_compiled_model(project, project.model("orders_merge"), batch_id=0)
    assert text.startswith("-- Compiled by `runner compile` from models/orders_merge.sql.")
    sections = [line for line in text.splitlines() if line.startswith("-- SET-UP") or
                line.startswith("-- PER BATCH") or line.startswith("-- MAINTENANCE")]  # fmt: skip
    assert sections == [
        "-- SET-UP: runs once, before the first batch of each start",
        "-- PER BATCH: the statements of batch 0, in order",
        "-- MAINTENANCE: after every 2nd batch (batch ids 1, 3, 5, ...); not due after batch 0",
    ]
    assert "LOCATION 'target/local/warehouse/silver/orders'" in text
    assert "-- batch[1]: models/orders_merge.sql:18\n" in text
    assert "OPTIMIZE silver.orders ZORDER BY (customer_id);" in text
    assert text.endswith(";\n")


def test_every_compiled_statement_parses_with_the_delta_dialect(example_project: Path) -> None:
    project = load(example_project)
    text = render_compiled_model(project, project.model("orders_merge"))
    statements = split_statements(text)
    kinds = [type(parse_statement(s.sql)).__name__ for s in statements]
    assert kinds == ["Create", "Create", "Create", "Alter", "Create", "Merge", "Optimize"]


def test_batch_id_changes_the_rendered_batch(project_factory: Callable[..., Path]) -> None:
    model = (
        "{{ config(stream='orders', target='silver.o', optimize_every=3) }}\n"
        "SELECT {{ batch_id }} AS b FROM {{ batch }};\n"
    )
    project = load(project_factory({"m": model}))
    text = render_compiled_model(project, project.model("m"), batch_id=5)
    assert "SELECT 5 AS b FROM m__batch;" in text
    assert "after every 3rd batch (batch ids 2, 5, 8, ...); due after batch 5" in text


def test_location_root_only_changes_the_rendered_location(example_project: Path) -> None:
    project = load(example_project)
    model = project.model("orders_merge")
    absolute = compile_setup(project, model)
    relative = compile_setup(project, model, location_root=project.root)
    assert absolute.location == relative.location  # Spark still gets the absolute path
    assert f"LOCATION '{absolute.location}'" in absolute.create.sql
    assert relative.create.sql == absolute.create.sql.replace(
        str(absolute.location), "target/local/warehouse/silver/orders"
    )


@pytest.mark.parametrize(
    ("every", "batch_id", "expected"),
    [
        (1, 0, "after every batch (batch ids 0, 1, 2, ...); due after batch 0"),
        (2, 0, "after every 2nd batch (batch ids 1, 3, 5, ...); not due after batch 0"),
        (11, 10, "after every 11th batch (batch ids 10, 21, 32, ...); due after batch 10"),
        (21, 0, "after every 21st batch (batch ids 20, 41, 62, ...); not due after batch 0"),
    ],
)
def test_maintenance_schedule_label(every: int, batch_id: int, expected: str) -> None:
    assert maintenance_schedule(every, batch_id) == expected


def test_manifest_lists_models_streams_targets_and_refs(
    project_factory: Callable[..., Path],
) -> None:
    upstream = (
        "{{ config(stream='orders', target='silver.orders', unique_key='order_id', "
        "table_properties={'delta.enableChangeDataFeed': true}) }}\nSELECT 1;\n"
    )
    downstream = (
        "{{ config(stream='orders', target='gold.totals') }}\n"
        "SELECT * FROM table_changes('{{ ref(\"upstream\") }}', 0);\n"
    )
    root = project_factory({"upstream": upstream, "downstream": downstream})
    write_compiled(load(root))
    text = (root / "target" / "compiled" / "manifest.json").read_text()
    manifest = json.loads(text)
    assert text == json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    assert sorted(manifest["models"]) == ["downstream", "upstream"]
    assert manifest["models"]["downstream"]["depends_on"] == {
        "models": ["upstream"],
        "streams": ["orders"],
    }
    assert manifest["models"]["upstream"]["file"] == "models/upstream.sql"
    assert manifest["targets"]["silver.orders"]["table_properties"] == {
        "delta.enableChangeDataFeed": "true"
    }
    assert manifest["targets"]["gold.totals"]["location"] == "target/warehouse/gold/totals"
    assert manifest["streams"]["orders"]["path"] == "landing/orders"


def test_select_writes_only_those_models_and_unknown_is_a_config_error(
    project_factory: Callable[..., Path],
) -> None:
    model = "{{ config(stream='orders', target='silver.%s') }}\nSELECT 1;\n"
    root = project_factory({"a": model % "a", "b": model % "b"})
    runner = CliRunner()
    result = runner.invoke(app, ["compile", "-p", str(root), "--select", "b"])
    assert result.exit_code == 0, result.output
    assert sorted(_compiled_bytes(root)) == ["b.sql", "manifest.json"]
    result = runner.invoke(app, ["compile", "-p", str(root), "--select", "nope"])
    assert result.exit_code == 2
    with pytest.raises(ConfigError, match="no model named 'nope'"):
        write_compiled(load(root), ["nope"])


def test_compile_removes_files_of_deleted_models(project_factory: Callable[..., Path]) -> None:
    model = "{{ config(stream='orders', target='silver.%s') }}\nSELECT 1;\n"
    root = project_factory({"a": model % "a", "b": model % "b"})
    write_compiled(load(root))
    (root / "models" / "b.sql").unlink()
    write_compiled(load(root))
    assert sorted(_compiled_bytes(root)) == ["a.sql", "manifest.json"]
