"""The runner's own files on S3 through boto3 (runner/s3_files.py), as a Spark Connect client
reaches them: against the local store, the layout S3A writes (a directory is the keys under
``path/``). No JVM."""

from __future__ import annotations

import dataclasses

import pytest

from runner.s3_files import S3Files
from runner.storage import StorageUnavailable
from runner_devtools.object_store import LocalBucket


def test_s3_files_read_write_list_delete(s3: LocalBucket) -> None:
    files = S3Files(s3.settings)
    root = s3.uri("s3files", "checkpoints")
    files.write(f"{root}/orders/metadata", b'{"id": "q"}')
    files.write(f"{root}/orders/commits/0", b"v1")
    files.write(f"{root}/orders/commits/1", b"v1")
    files.write(f"{root}/orders.lock", b"held")

    assert files.read(f"{root}/orders/metadata") == b'{"id": "q"}'
    with pytest.raises(FileNotFoundError):
        files.read(f"{root}/orders/offsets/0")
    assert files.exists(f"{root}/orders/metadata") and files.exists(f"{root}/orders")
    assert files.is_dir(f"{root}/orders") and not files.is_dir(f"{root}/orders/metadata")
    assert not files.exists(f"{root}/customers")
    assert sorted(files.list_names(root)) == ["orders", "orders.lock"]
    assert sorted(files.list_names(f"{root}/orders")) == ["commits", "metadata"]
    assert files.list_names(f"{root}/customers") == []
    assert sorted(files.files_under(f"{root}/orders")) == [
        f"{root}/orders/commits/0",
        f"{root}/orders/commits/1",
        f"{root}/orders/metadata",
    ]
    modified = files.modified_ms(f"{root}/orders/metadata")
    assert modified is not None and modified > 0
    assert files.modified_ms(f"{root}/orders/gone") is None

    # recursive, as Hadoop's delete: the directory goes, its sibling lease object stays
    assert files.delete(f"{root}/orders") is True
    assert not files.exists(f"{root}/orders")
    assert files.list_names(root) == ["orders.lock"]
    assert files.delete(f"{root}/orders") is False


def test_an_unreachable_store_is_one_line_naming_the_location(s3: LocalBucket) -> None:
    gone = dataclasses.replace(s3.settings, endpoint="http://127.0.0.1:9")
    with pytest.raises(StorageUnavailable) as info:
        S3Files(gone).read(s3.uri("s3files", "metadata"))
    message = info.value.message
    assert message.startswith(f"cannot read {s3.uri('s3files', 'metadata')}: ")
    assert "\n" not in message
