"""Object-store locations (``s3a://bucket/key``) and how to reach an S3 endpoint. Pure Python.

Which paths live on object storage, their bucket and key, and the S3 endpoint and credentials a
target's ``spark_conf`` gives the S3A connector (``spark.hadoop.fs.s3a.*``), falling back to the
standard AWS environment variables, so code outside Spark (the checkpoint lock, which runs
before Spark starts) talks to the same store with the same settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import urlsplit

# Hadoop's object-store filesystems: S3 (s3a is Hadoop's connector; s3 is what EMR and the AWS
# SDKs write), Azure Data Lake Storage Gen2 (abfs, abfss) and Google Cloud Storage.
OBJECT_SCHEMES = ("s3a", "s3", "abfs", "abfss", "gs")
S3_SCHEMES = ("s3a", "s3")

S3A = "spark.hadoop.fs.s3a."
ENDPOINT_KEY = f"{S3A}endpoint"
ACCESS_KEY_KEY = f"{S3A}access.key"
SECRET_KEY_KEY = f"{S3A}secret.key"
SESSION_TOKEN_KEY = f"{S3A}session.token"
PATH_STYLE_KEY = f"{S3A}path.style.access"
REGION_KEY = f"{S3A}endpoint.region"


@dataclass(frozen=True)
class ObjectLocation:
    """``s3a://bucket/some/key`` as its parts. For ADLS the bucket is the authority
    (``container@account.dfs.core.windows.net``)."""

    scheme: str
    bucket: str
    key: str  # no leading slash; '' for the bucket's root

    @property
    def uri(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key}" if self.key else self.bucket_uri

    @property
    def bucket_uri(self) -> str:
        return f"{self.scheme}://{self.bucket}"

    @property
    def is_s3(self) -> bool:
        return self.scheme in S3_SCHEMES

    def child(self, *names: str) -> ObjectLocation:
        """The location of ``names`` under this one: ``child('orders.lock')``."""
        key = "/".join(part.strip("/") for part in (self.key, *names) if part.strip("/"))
        return ObjectLocation(self.scheme, self.bucket, key)


def scheme_of(path: str | os.PathLike[str]) -> str | None:
    """``'s3a'`` for ``s3a://b/k``; None for a local path (``/data``, ``target/x``)."""
    text = os.fspath(path)
    if "://" not in text:
        return None
    return text.split("://", 1)[0].lower()


def is_object_uri(path: str | os.PathLike[str]) -> bool:
    """True for a path on object storage (``s3a://``, ``s3://``, ``abfss://``, ``gs://``)."""
    return scheme_of(path) in OBJECT_SCHEMES


def parse_object_uri(uri: str | os.PathLike[str]) -> ObjectLocation:
    """``s3a://bucket/a/b/`` -> ObjectLocation('s3a', 'bucket', 'a/b'). ValueError for a path
    that is not an object-store URI or has no bucket."""
    text = os.fspath(uri)
    scheme = scheme_of(text)
    if scheme not in OBJECT_SCHEMES:
        raise ValueError(
            f"{text!r} is not an object-store URI (expected one of "
            f"{', '.join(s + '://' for s in OBJECT_SCHEMES)})"
        )
    parts = urlsplit(text)
    if not parts.netloc:
        raise ValueError(f"{text!r} names no bucket: write {scheme}://BUCKET/path")
    key = str(PurePosixPath("/", parts.path)).lstrip("/")  # '//' and trailing '/' folded
    return ObjectLocation(scheme, parts.netloc, key)


@dataclass(frozen=True)
class S3Settings:
    """How to reach an S3 endpoint: what the S3A connector is given, for boto3. None leaves a
    setting to boto3's own defaults (AWS, its credential chain)."""

    endpoint: str | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    path_style: bool = False

    def client_arguments(self) -> dict[str, object]:
        """Keyword arguments for ``boto3.client('s3', ...)`` (a ``config`` needs botocore, so
        the caller adds the addressing style from ``path_style``)."""
        arguments: dict[str, object] = {}
        if self.endpoint:
            arguments["endpoint_url"] = self.endpoint
        if self.access_key and self.secret_key:
            arguments["aws_access_key_id"] = self.access_key
            arguments["aws_secret_access_key"] = self.secret_key
            if self.session_token:
                arguments["aws_session_token"] = self.session_token
        arguments["region_name"] = self.region or "us-east-1"
        return arguments


def s3_settings(spark_conf: Mapping[str, str], env: Mapping[str, str] | None = None) -> S3Settings:
    """The S3 endpoint and credentials of a target: its ``spark_conf`` (values already revealed,
    ``TargetSpec.revealed_conf()``) first, then ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``,
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION`` /
    ``AWS_DEFAULT_REGION``. An endpoint without a scheme (S3A accepts ``host:port``) gets
    ``https://``, or ``http://`` when ``fs.s3a.connection.ssl.enabled`` is false."""
    env = os.environ if env is None else env

    def first(*values: str | None) -> str | None:
        return next((v.strip() for v in values if v and v.strip()), None)

    endpoint = first(
        spark_conf.get(ENDPOINT_KEY), env.get("AWS_ENDPOINT_URL_S3"), env.get("AWS_ENDPOINT_URL")
    )
    if endpoint and "://" not in endpoint:
        ssl = spark_conf.get(f"{S3A}connection.ssl.enabled", "true").strip().lower() != "false"
        endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
    return S3Settings(
        endpoint=endpoint,
        access_key=first(spark_conf.get(ACCESS_KEY_KEY), env.get("AWS_ACCESS_KEY_ID")),
        secret_key=first(spark_conf.get(SECRET_KEY_KEY), env.get("AWS_SECRET_ACCESS_KEY")),
        session_token=first(spark_conf.get(SESSION_TOKEN_KEY), env.get("AWS_SESSION_TOKEN")),
        region=first(
            spark_conf.get(REGION_KEY), env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION")
        ),
        path_style=spark_conf.get(PATH_STYLE_KEY, "false").strip().lower() == "true",
    )
