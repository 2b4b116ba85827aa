"""A model unit test's scratch copy of the project, without a JVM: the target renamed into a
schema of its own, files under the scratch root, no shared catalog; and the refusal of a model
that names its own target directly."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.model_sql import CompiledStatement, compile_batch
from runner.model_tests.scratch import SCHEMA_PREFIX, names_target_directly, scratch_for
from runner.project import load
from runner.specs.catalog import CatalogSpec


def test_the_scratch_target_is_a_table_of_its_own_and_nothing_else_moves(
    example_project: Path, tmp_path: Path
) -> None:
    project = load(example_project)
    model = project.models["orders_merge"]
    first = scratch_for(project, model, tmp_path / "scratch")
    second = scratch_for(project, model, tmp_path / "scratch2")

    assert first.table.startswith(SCHEMA_PREFIX) and first.table.endswith("_silver.orders")
    assert first.schema == first.table.split(".")[0] != second.schema  # two tests never share
    assert first.project.target.warehouse == tmp_path / "scratch" / "warehouse"
    assert first.project.target.checkpoint_root == tmp_path / "scratch" / "checkpoints"
    assert first.project.target.table_location(first.table).is_relative_to(tmp_path / "scratch")
    assert first.project.models["orders_merge"] is first.model
    assert first.project.models["customer_totals"] is project.models["customer_totals"]
    assert model.target_table == "silver.orders"  # the loaded project is unchanged

    merge = [s.sql for s in compile_batch(first.project, first.model, 0) if "MERGE" in s.sql]
    assert len(merge) == 1 and f"MERGE INTO {first.table} AS t" in merge[0]
    names_target_directly(compile_batch(first.project, first.model, 0), model, "silver.orders")


def test_a_shared_catalog_is_left_out_of_the_scratch_copy(
    example_project: Path, tmp_path: Path
) -> None:
    loaded = load(example_project)
    shared = CatalogSpec(url="jdbc:postgresql://127.0.0.1:5432/metastore", user="u", password="p")
    project = dataclasses.replace(loaded, target=dataclasses.replace(loaded.target, catalog=shared))
    scratch = scratch_for(project, project.models["orders_merge"], tmp_path)
    assert project.target.catalog is shared and scratch.project.target.catalog is None


@pytest.mark.parametrize("written", ["silver.orders", "`silver`.`orders`", "SILVER.orders"])
def test_a_model_that_names_its_target_directly_is_refused_at_its_line(
    example_project: Path, tmp_path: Path, written: str
) -> None:
    model_file = example_project / "models" / "orders_merge.sql"
    source = model_file.read_text()
    model_file.write_text(source.replace("MERGE INTO {{ this }}", f"MERGE INTO {written}"))
    line = next(
        number
        for number, text in enumerate(model_file.read_text().splitlines(), start=1)
        if text.startswith("MERGE INTO")
    )
    project = load(example_project)
    model = project.models["orders_merge"]
    scratch = scratch_for(project, model, tmp_path)

    with pytest.raises(ConfigError, match="names its target silver.orders directly") as raised:
        names_target_directly(
            compile_batch(scratch.project, scratch.model, 0), model, "silver.orders"
        )
    assert (raised.value.file, raised.value.line) == (model.file, line)
    assert "{{ this }}" in (raised.value.hint or "")


def test_a_similar_name_or_a_comment_is_not_the_target(example_project: Path) -> None:
    statements = [
        CompiledStatement("batch", 0, "SELECT * FROM silver.orders_archive", Path("m.sql"), 3),
        CompiledStatement("batch", 1, "SELECT * FROM bronze_silver.orders", Path("m.sql"), 4),
        CompiledStatement("batch", 2, "-- fills silver.orders\nSELECT 1", Path("m.sql"), 5),
        CompiledStatement("batch", 3, "SELECT 1 /* not\nsilver.orders */", Path("m.sql"), 6),
        CompiledStatement("batch", 4, "SELECT 'silver.orders' AS t", Path("m.sql"), 8),
    ]
    model = load(example_project).models["orders_merge"]
    names_target_directly(statements, model, "silver.orders")
