"""Cluster targets in project.yml: master spark://HOST:PORT and remote sc://HOST:PORT are
validated with file and line, and an address nobody answers fails in seconds, in one line, with
exit code 2, before any JVM starts."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.processes import free_port
from runner.project import load
from runner.secrets import redact
from runner.target_address import Address, parse_master, parse_remote
from runner_devtools.local_cluster import LocalCluster
from tests.conftest import write_project

RUNNER = str(Path(sys.executable).parent / "runner")
CLUSTER = [sys.executable, "-m", "runner_devtools.cluster"]  # run from REPO: a dev package
REPO = Path(__file__).resolve().parents[2]
MODEL = "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n" + (
    "SELECT * FROM {{ batch }}\n"
)


def with_targets(root: Path, targets: str) -> Path:
    write_project(root, {"orders_merge": MODEL})
    text = (root / "project.yml").read_text()
    (root / "project.yml").write_text(text + targets)
    return root


@pytest.mark.parametrize(
    ("value", "kind", "address"),
    [
        ("local[*]", "local", None),
        ("local", "local", None),
        ("local[2]", "local", None),
        ("spark://127.0.0.1:7077", "standalone", Address("spark", "127.0.0.1", 7077)),
        (
            "spark://node-1.example.com:7077",
            "standalone",
            Address("spark", "node-1.example.com", 7077),
        ),
        ("k8s://https://10.0.0.1:6443", "kubernetes", Address("k8s", "10.0.0.1", 6443)),
        (
            "k8s://kubernetes.default.svc",
            "kubernetes",
            Address("k8s", "kubernetes.default.svc", 443),
        ),
    ],
)
def test_masters_parse(value: str, kind: str, address: Address | None) -> None:
    assert parse_master(value) == (kind, address)


@pytest.mark.parametrize(
    "value",
    ["yarn", "spark://host", "spark://host:99999", "local[x]", "sc://host:15002", "k8s://h:0"],
)
def test_bad_masters_say_what_is_expected(value: str) -> None:
    with pytest.raises(ValueError, match="spark://HOST:PORT|k8s://https://HOST:PORT"):
        parse_master(value)


def test_a_kubernetes_target_needs_the_executors_image(tmp_path: Path) -> None:
    """Validated only: nothing here runs a Kubernetes cluster (docs/deploy.md says so)."""
    root = with_targets(
        tmp_path,
        "  k8s:\n    master: k8s://https://10.0.0.1:6443\n    spark_conf:\n"
        "      spark.kubernetes.container.image: registry.example.com/runner:1.0\n"
        "  bare:\n    master: k8s://https://10.0.0.1:6443\n",
    )
    target = load(root, "k8s").target
    assert (target.kind, str(target.address)) == ("kubernetes", "k8s://10.0.0.1:6443")
    with pytest.raises(ConfigError, match="does not set spark.kubernetes.container.image") as e:
        load(root, "bare")
    lines = (root / "project.yml").read_text().splitlines()
    assert e.value.line is not None and lines[e.value.line - 1].strip().startswith("master:")


def test_remotes_parse() -> None:
    assert parse_remote("sc://127.0.0.1:15002") == Address("sc", "127.0.0.1", 15002)
    assert parse_remote("sc://h:1/;user_id=a") == Address("sc", "h", 1)
    with pytest.raises(ValueError, match="sc://HOST:PORT"):
        parse_remote("grpc://h:1")


def test_targets_load_with_their_kind(tmp_path: Path) -> None:
    root = with_targets(
        tmp_path,
        "  cluster:\n    master: spark://127.0.0.1:7077\n"
        "  connect:\n    remote: sc://127.0.0.1:15002\n",
    )
    cluster = load(root, "cluster").target
    assert (cluster.kind, str(cluster.address)) == ("standalone", "spark://127.0.0.1:7077")
    connect = load(root, "connect").target
    assert (connect.kind, str(connect.address)) == ("connect", "sc://127.0.0.1:15002")
    assert connect.shown == "sc://127.0.0.1:15002"
    assert load(root, "local").target.kind == "local"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("  bad:\n    master: yarn\n", "target 'bad': master must be"),
        ("  bad:\n    remote: http://h:1\n", "target 'bad': remote must be sc://HOST:PORT"),
        (
            "  bad:\n    master: local[2]\n    remote: sc://h:1\n",
            "target 'bad' sets both master and remote",
        ),
    ],
)
def test_misconfigured_targets_name_file_and_line(
    tmp_path: Path, target: str, message: str
) -> None:
    root = with_targets(tmp_path, target)
    with pytest.raises(ConfigError, match=message) as caught:
        load(root, "bad")
    assert caught.value.file == root / "project.yml"
    lines = (root / "project.yml").read_text().splitlines()
    assert caught.value.line is not None
    assert lines[caught.value.line - 1].strip().startswith(("master:", "remote:"))


@pytest.mark.parametrize(
    ("key", "scheme", "command"),
    [
        ("master", "spark", ["run", "-m", "orders_merge"]),
        ("remote", "sc", ["stream", "-m", "orders_merge"]),
        ("remote", "sc", ["history", "-m", "orders_merge"]),
    ],
)
def test_unreachable_targets_fail_fast_in_one_line(
    tmp_path: Path, key: str, scheme: str, command: list[str]
) -> None:
    port = free_port()  # nothing listens there
    root = with_targets(tmp_path, f"  far:\n    {key}: {scheme}://127.0.0.1:{port}\n")
    started = time.monotonic()
    result = subprocess.run(
        [RUNNER, *command, "-p", str(root), "-t", "far"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    seconds = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1, result.stderr
    assert f"target 'far' cannot be reached at {scheme}://127.0.0.1:{port}" in errors[0]
    assert "connection refused" in errors[0]
    assert seconds < 15, f"took {seconds:.1f} s"


def test_spark_conf_reads_secrets_from_the_environment_and_never_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = with_targets(
        tmp_path,
        "  s3:\n    master: local[2]\n    spark_conf:\n"
        "      spark.hadoop.fs.s3a.secret.key: \"{{ env_var('TEST_S3_SECRET') }}\"\n"
        "      spark.hadoop.fs.s3a.endpoint: "
        "\"{{ env_var('TEST_S3_ENDPOINT', 'http://x:9000') }}\"\n",
    )
    monkeypatch.delenv("TEST_S3_SECRET", raising=False)
    unset = load(root, "s3").target  # loading (lint, compile, docs) needs no secret
    with pytest.raises(ConfigError, match="reads environment variable TEST_S3_SECRET") as caught:
        unset.revealed_conf()  # building a session does
    lines = (root / "project.yml").read_text().splitlines()
    assert caught.value.line is not None
    assert lines[caught.value.line - 1].strip().startswith("spark.hadoop.fs.s3a.secret.key:")

    monkeypatch.setenv("TEST_S3_SECRET", "s3cr3t-value")
    target = load(root, "s3").target
    conf = target.revealed_conf()
    assert conf["spark.hadoop.fs.s3a.secret.key"] == "s3cr3t-value"
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://x:9000"
    assert "s3cr3t" not in repr(target)
    shown = redact(str(target.spark_conf))
    assert "s3cr3t" not in shown and "env_var('TEST_S3_SECRET')" in shown


def test_cluster_status_and_stop_without_a_cluster(tmp_path: Path) -> None:
    status = subprocess.run(
        [*CLUSTER, "status", "--dir", str(tmp_path / "none")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 1
    assert f"no cluster in {tmp_path / 'none'}" in status.stdout
    stop = subprocess.run(
        [*CLUSTER, "stop", "--dir", str(tmp_path / "none")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (stop.returncode, stop.stdout.strip()) == (0, "nothing was running")


def test_a_stale_pid_file_reads_as_stopped(tmp_path: Path) -> None:
    (tmp_path / "master.pid").write_text("999999999\n")  # no such process
    (tmp_path / "cluster.json").write_text('{"master": "spark://127.0.0.1:1"}')
    cluster = LocalCluster(tmp_path)
    assert cluster.pids() == {"master": None}
    assert cluster.status()[0].startswith("master    stopped spark://127.0.0.1:1")
    assert cluster.stop() == [] and not (tmp_path / "master.pid").exists()
