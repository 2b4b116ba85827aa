"""runner/object_paths.py: which paths live on object storage, their bucket and key, and the S3
settings a target gives (spark_conf first, then the AWS environment variables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.object_paths import (
    ObjectLocation,
    is_object_uri,
    parse_object_uri,
    s3_settings,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("s3a://lake/checkpoints", True),
        ("s3://lake/x", True),
        ("S3A://lake/x", True),
        ("abfss://data@acct.dfs.core.windows.net/x", True),
        ("gs://bucket/x", True),
        ("file:///tmp/x", False),
        ("hdfs://nn/x", False),
        ("target/checkpoints", False),
        (Path("/data/checkpoints"), False),
    ],
)
def test_is_object_uri(path: str | Path, expected: bool) -> None:
    assert is_object_uri(path) is expected


@pytest.mark.parametrize(
    ("uri", "location"),
    [
        ("s3a://lake/checkpoints", ObjectLocation("s3a", "lake", "checkpoints")),
        ("s3a://lake/a//b/", ObjectLocation("s3a", "lake", "a/b")),
        ("s3a://lake", ObjectLocation("s3a", "lake", "")),
        ("s3a://lake/", ObjectLocation("s3a", "lake", "")),
        (
            "abfss://data@acct.dfs.core.windows.net/ck",
            ObjectLocation("abfss", "data@acct.dfs.core.windows.net", "ck"),
        ),
    ],
)
def test_parse_object_uri(uri: str, location: ObjectLocation) -> None:
    assert parse_object_uri(uri) == location


def test_location_child_and_uri() -> None:
    root = parse_object_uri("s3a://lake/checkpoints/")
    assert root.child("orders.lock").uri == "s3a://lake/checkpoints/orders.lock"
    assert parse_object_uri("s3a://lake").child("/x/", "y").key == "x/y"
    assert root.bucket_uri == "s3a://lake"
    assert root.is_s3 and not parse_object_uri("gs://b/k").is_s3


@pytest.mark.parametrize("bad", ["target/ck", "hdfs://nn/x", "s3a:///key"])
def test_parse_rejects_what_is_not_an_object_uri(bad: str) -> None:
    with pytest.raises(ValueError, match=bad.split(":")[0]):
        parse_object_uri(bad)


def test_settings_come_from_spark_conf_first() -> None:
    conf = {
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.access.key": "conf-key",
        "spark.hadoop.fs.s3a.secret.key": "conf-secret",
        "spark.hadoop.fs.s3a.path.style.access": "true",
    }
    env = {
        "AWS_ENDPOINT_URL": "http://elsewhere",
        "AWS_ACCESS_KEY_ID": "env-key",
        "AWS_SECRET_ACCESS_KEY": "env-secret",
        "AWS_REGION": "eu-west-1",
    }
    settings = s3_settings(conf, env)
    assert settings.endpoint == "http://127.0.0.1:9000"
    assert (settings.access_key, settings.secret_key) == ("conf-key", "conf-secret")
    assert settings.path_style and settings.region == "eu-west-1"
    arguments = settings.client_arguments()
    assert arguments["aws_access_key_id"] == "conf-key"
    assert "conf-secret" not in repr(settings)  # credentials stay out of reprs and logs


def test_settings_fall_back_to_the_aws_environment() -> None:
    env = {"AWS_ENDPOINT_URL_S3": "http://s3.local", "AWS_ACCESS_KEY_ID": "k"}
    settings = s3_settings({}, env)
    assert settings.endpoint == "http://s3.local" and not settings.path_style
    # a key without its secret is left to boto3's own credential chain
    assert "aws_access_key_id" not in settings.client_arguments()
    assert s3_settings({}, {}).client_arguments() == {"region_name": "us-east-1"}


def test_endpoint_without_scheme_follows_the_ssl_setting() -> None:
    conf = {"spark.hadoop.fs.s3a.endpoint": "store:9000"}
    assert s3_settings(conf, {}).endpoint == "https://store:9000"
    conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false"
    assert s3_settings(conf, {}).endpoint == "http://store:9000"
