"""Files on object storage through Hadoop's FileSystem in the session's JVM: what
``runner/storage.py`` uses for a ``s3a://`` (``abfss://``, ``gs://``) location once a session
runs, with the session's Hadoop settings (endpoint, credentials) and the connector Spark and
Delta write with.

A Spark Connect session has no JVM in this process: there, a location on S3 is reached with
boto3 and the target's S3A settings (``runner/s3_files.py``); any other is refused with a
message saying so.
"""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from runner.object_paths import S3Settings
from runner.storage import refuse_remote_files, use_remote_files

_NOT_FOUND = "java.io.FileNotFoundException"


def attach_session_files(
    spark: SparkSession, *, remote: bool, s3: S3Settings | None = None
) -> None:
    """Reach object storage through ``spark``'s JVM from now on (``remote``: a Spark Connect
    session, which has none: then through boto3 with ``s3``, the settings of a target whose
    storage is on S3)."""
    if remote and s3 is not None:
        from runner.s3_files import S3Files

        use_remote_files(S3Files(s3))
        return
    if remote:
        refuse_remote_files(
            "on a Spark Connect target this process has no JVM to reach object storage "
            "through; run the command on a target with master local[*] or spark://HOST:PORT "
            "(the same warehouse and checkpoints)"
        )
        return
    use_remote_files(HadoopFiles(spark))


def _not_found(exc: Py4JJavaError) -> bool:
    return bool(exc.java_exception.getClass().getName() == _NOT_FOUND)


class HadoopFiles:
    """``runner.storage.RemoteFiles`` over ``org.apache.hadoop.fs.FileSystem``."""

    def __init__(self, spark: SparkSession) -> None:
        jvm = spark._jvm
        assert jvm is not None
        self._jvm: Any = jvm
        self._conf = spark._jsc.hadoopConfiguration()

    def _fs(self, uri: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self._conf), path

    def exists(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path))

    def is_dir(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        try:
            return bool(fs.getFileStatus(path).isDirectory())
        except Py4JJavaError as exc:
            if _not_found(exc):
                return False
            raise

    def list_names(self, uri: str) -> list[str]:
        fs, path = self._fs(uri)
        try:
            statuses = fs.listStatus(path)
        except Py4JJavaError as exc:
            if _not_found(exc):
                return []
            raise
        return [str(status.getPath().getName()) for status in statuses]

    def read(self, uri: str) -> bytes:
        fs, path = self._fs(uri)
        try:
            stream = fs.open(path)
        except Py4JJavaError as exc:
            if _not_found(exc):
                raise FileNotFoundError(uri) from None
            raise
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def write(self, uri: str, data: bytes) -> None:
        fs, path = self._fs(uri)
        out = fs.create(path, True)  # overwrite: on object storage one PUT at close
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def delete(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.delete(path, True))

    def modified_ms(self, uri: str) -> float | None:
        fs, path = self._fs(uri)
        try:
            return float(fs.getFileStatus(path).getModificationTime())
        except Py4JJavaError as exc:
            if _not_found(exc):
                return None
            raise

    def files_under(self, uri: str) -> list[str]:
        fs, path = self._fs(uri)
        try:
            found = fs.listFiles(path, True)
        except Py4JJavaError as exc:
            if _not_found(exc):
                return []
            raise
        uris = []
        while found.hasNext():
            uris.append(str(found.next().getPath().toString()))
        return uris
