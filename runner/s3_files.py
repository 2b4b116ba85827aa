"""Files on S3 through boto3: what ``runner/storage.py`` uses for an ``s3a://`` (``s3://``)
location on a Spark Connect target, where this process has no JVM and so no Hadoop FileSystem.
The client reaches the bucket itself with the target's ``spark.hadoop.fs.s3a.*`` settings (as
the checkpoint lease does), and sees what the server's S3A wrote there: S3A keeps a directory
as the keys under ``path/``. Other object stores stay refused on a Connect target.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from runner.error_text import first_line
from runner.object_paths import (
    S3_SCHEMES,
    ObjectLocation,
    S3Settings,
    parse_object_uri,
    s3_settings,
)
from runner.s3_client import http_status as _status
from runner.specs.target import TargetSpec
from runner.storage import StorageUnavailable, reachable, scheme_of, use_remote_files

_NOT_FOUND = (404,)


class S3Files:
    """``runner.storage.RemoteFiles`` over boto3, for ``s3a://`` and ``s3://`` URIs."""

    def __init__(self, settings: S3Settings) -> None:
        self._settings = settings
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from runner.s3_client import s3_client

            self._client = s3_client(self._settings)
        return self._client

    def _call(self, what: str, location: ObjectLocation, method: str, **arguments: Any) -> Any:
        """``client.method(**arguments)``; a store that cannot be reached (or refuses) becomes
        one line naming the location; a missing key is the caller's (``_missing``)."""
        try:
            return getattr(self.client, method)(**arguments)
        except Exception as exc:
            if _status(exc) in _NOT_FOUND:
                raise
            raise StorageUnavailable(
                f"cannot {what} {location.uri}: {first_line(exc)[:300]}",
                hint="check that the object store is reachable and the target's "
                "spark.hadoop.fs.s3a.* settings (endpoint, credentials)",
            ) from None

    def _keys(self, location: ObjectLocation, *, delimiter: bool) -> Iterator[dict[str, Any]]:
        """The listing pages under ``location``'s key as a directory (``key/``)."""
        prefix = location.key.rstrip("/") + "/" if location.key else ""
        arguments: dict[str, Any] = {"Bucket": location.bucket, "Prefix": prefix}
        if delimiter:
            arguments["Delimiter"] = "/"
        while True:
            page = self._call("list", location, "list_objects_v2", **arguments)
            yield page
            if not page.get("IsTruncated"):
                return
            arguments["ContinuationToken"] = page["NextContinuationToken"]

    def _head(self, location: ObjectLocation) -> dict[str, Any] | None:
        if not location.key:
            return None
        try:
            head: dict[str, Any] = self._call(
                "look for", location, "head_object", Bucket=location.bucket, Key=location.key
            )
        except Exception as exc:
            if _status(exc) in _NOT_FOUND:
                return None
            raise
        return head

    def exists(self, uri: str) -> bool:
        location = parse_object_uri(uri)
        return self._head(location) is not None or self.is_dir(uri)

    def is_dir(self, uri: str) -> bool:
        location = parse_object_uri(uri)
        page = next(self._keys(location, delimiter=True))
        return bool(page.get("Contents") or page.get("CommonPrefixes"))

    def list_names(self, uri: str) -> list[str]:
        location = parse_object_uri(uri)
        names = []
        for page in self._keys(location, delimiter=True):
            for common in page.get("CommonPrefixes", []):
                names.append(common["Prefix"].rstrip("/").rsplit("/", 1)[-1])
            for item in page.get("Contents", []):
                name = item["Key"].rsplit("/", 1)[-1]
                if name:  # not S3A's marker of the directory itself
                    names.append(name)
        return names

    def read(self, uri: str) -> bytes:
        location = parse_object_uri(uri)
        try:
            found = self._call(
                "read", location, "get_object", Bucket=location.bucket, Key=location.key
            )
        except Exception as exc:
            if _status(exc) in _NOT_FOUND:
                raise FileNotFoundError(uri) from None
            raise
        return bytes(found["Body"].read())

    def write(self, uri: str, data: bytes) -> None:
        location = parse_object_uri(uri)
        self._call(
            "write", location, "put_object", Bucket=location.bucket, Key=location.key, Body=data
        )

    def delete(self, uri: str) -> bool:
        """Delete the object at ``uri`` and everything under ``uri/`` (as Hadoop's recursive
        delete). True if there was anything."""
        location = parse_object_uri(uri)
        keys = [item["Key"] for item in self._under(location)]
        if self._head(location) is not None:
            keys.append(location.key)
        for start in range(0, len(keys), 1000):  # DeleteObjects takes 1000 keys a call
            batch = [{"Key": key} for key in keys[start : start + 1000]]
            self._call(
                "delete",
                location,
                "delete_objects",
                Bucket=location.bucket,
                Delete={"Objects": batch, "Quiet": True},
            )
        return bool(keys)

    def _under(self, location: ObjectLocation) -> Iterator[dict[str, Any]]:
        for page in self._keys(location, delimiter=False):
            yield from page.get("Contents", [])

    def files_under(self, uri: str) -> list[str]:
        location = parse_object_uri(uri)
        return [
            ObjectLocation(location.scheme, location.bucket, item["Key"]).uri
            for item in self._under(location)
            if not item["Key"].endswith("/")
        ]

    def modified_ms(self, uri: str) -> float | None:
        head = self._head(parse_object_uri(uri))
        return None if head is None else head["LastModified"].timestamp() * 1000


def target_s3_settings(target: TargetSpec) -> S3Settings | None:
    """How a process without a JVM reaches ``target``'s warehouse and checkpoints on S3 (the
    target's S3A settings); None when neither is on S3."""
    schemes = {scheme_of(target.warehouse), scheme_of(target.checkpoint_root)}
    if not schemes & set(S3_SCHEMES):
        return None
    return s3_settings(target.revealed_conf())


def reach_s3_without_jvm(target: TargetSpec) -> None:
    """In a process with no session of its own, such as a Connect server's foreachBatch worker
    (the batch function runs there, and reads the checkpoint's ``metadata``): reach ``target``'s
    S3 storage with boto3 from now on. Nothing changes where the storage is reachable already;
    elsewhere than on S3 each access still says why it cannot."""
    if reachable(target.checkpoint_root):
        return
    settings = target_s3_settings(target)
    if settings is not None:
        use_remote_files(S3Files(settings))
