"""A stream whose path is on object storage is refused before Spark starts, naming the file and
line: the runner reads a stream's path as a local directory (docs/deploy.md, "The warehouse on
S3 on a cluster and over Connect"). Pure Python: no store is started."""

from __future__ import annotations

import pytest

from runner.errors import ConfigError
from runner.project import load

MODEL = "{{ config(unique_key='id') }}\nSELECT * FROM {{ source() }}\n"


@pytest.mark.parametrize("fmt", ["json", "delta"])
def test_a_stream_path_on_object_storage_names_the_line(project_factory, fmt: str) -> None:
    schema = "    schema: 'id INT'\n" if fmt == "json" else ""
    streams = f"streams:\n  orders:\n    format: {fmt}\n{schema}    path: s3a://lake/landing\n"
    root = project_factory({"m": MODEL}, streams=streams)
    with pytest.raises(ConfigError) as info:
        load(root)
    assert "path s3a://lake/landing is on object storage" in str(info.value)
    assert info.value.line == (5 if fmt == "json" else 4)
    assert info.value.file == root / "streams" / "orders.yml"
