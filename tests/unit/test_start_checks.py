"""What `run` and `stream` check before Spark starts, without a JVM: a file stream's path
(runner/source_paths.py) and the checkpoint files Spark resumes from
(runner/checkpoint_files.py). Each problem is one line naming the stream or the file, and what
to do. tests/spark/test_clear_failures.py runs the Spark halves."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.checkpoint_files import CorruptCheckpointFile, check_checkpoint_files
from runner.cli.app import app
from runner.project import load
from runner.source_paths import check_source_paths

MODEL = (
    "{{ config(stream='orders', target='s.t') }}\n"
    "INSERT INTO {{ this }} SELECT * FROM {{ batch }};\n"
)
runner = CliRunner()


def test_run_on_a_missing_source_path_names_the_stream_and_the_path(project_factory) -> None:
    root = project_factory({"m": MODEL})  # its stream reads landing/orders, never created
    path = root / "landing" / "orders"

    warnings = check_source_paths(load(root), [load(root).model("m")], waits=False)

    assert warnings == [
        f"{root / 'streams' / 'orders.yml'}:3: stream 'orders' (json): path {path} did not "
        "exist: created it, nothing to read yet (if it is a typo, fix path: and delete that "
        "directory)"
    ]
    assert path.is_dir()
    assert check_source_paths(load(root), [load(root).model("m")], waits=False) == []


def test_a_source_path_that_is_a_file_names_the_stream_and_the_path(project_factory) -> None:
    root = project_factory({"m": MODEL})
    (root / "landing").mkdir()
    (root / "landing" / "orders").write_text('{"order_id": "o1"}\n')

    for command in ("run", "stream"):
        result = runner.invoke(app, [command, "-m", "m", "-p", str(root)])

        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines()[0] == (
            f"error: {root / 'streams' / 'orders.yml'}:3: stream 'orders' (json): path "
            f"{root / 'landing' / 'orders'} is a file, not a directory: a stream reads the "
            "files that land in a directory"
        )


def checkpoint_with(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "ckpt"
    for name, text in {
        "metadata": '{"id":"4b4a7c29-6f3c-4a52-9d1e-0a0b0c0d0e0f"}\n',
        "offsets/0": 'v1\n{"batchWatermarkMs":0}\n{"logOffset":0}',
        "commits/0": 'v1\n{"nextBatchWatermarkMs":0}',
        **files,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("damaged", "text", "problem"),
    [
        ("metadata", "", "not the JSON Spark writes"),
        ("metadata", '{"x": 1}', "no query id"),
        ("offsets/0", "", "empty"),
        ("offsets/0", "\x00\x00garbage", "first line is not a log version such as v1"),
        ("commits/0", 'v1\n{"nextBatch', "line 2 is not JSON"),
        ("commits/0", "v1", "truncated after its version line"),
    ],
)
def test_a_damaged_checkpoint_file_is_named_with_what_to_do(
    tmp_path: Path, damaged: str, text: str, problem: str
) -> None:
    checkpoint = checkpoint_with(tmp_path, {damaged: text})

    with pytest.raises(CorruptCheckpointFile) as raised:
        check_checkpoint_files("m", checkpoint)

    message = raised.value.message
    assert message.startswith(f"model 'm': checkpoint file {checkpoint / damaged} is damaged (")
    assert problem in message
    newest_commit = damaged == "commits/0"
    assert ("delete it and its checksum" in (raised.value.hint or "")) is newest_commit
    assert ("--full-refresh" in (raised.value.hint or "")) is not newest_commit


def test_a_sound_or_new_checkpoint_passes(tmp_path: Path) -> None:
    check_checkpoint_files("m", checkpoint_with(tmp_path, {}))
    check_checkpoint_files("m", tmp_path / "none")
