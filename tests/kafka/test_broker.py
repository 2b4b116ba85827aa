"""The local Kafka broker: it serves real clients, its CLI works, and a failed start says why."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from runner_devtools.kafka.broker import BrokerError, LocalBroker, free_port


def test_cli_starts_reports_and_stops_a_broker(tmp_path: Path) -> None:
    port, where = free_port(), tmp_path / "kafka"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "runner_devtools.kafka.broker", *args, "--dir", str(where)]
        return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)

    try:
        started = cli("start", "--port", str(port))
        assert started.returncode == 0, started.stderr
        assert f"broker started: 127.0.0.1:{port}" in started.stdout
        assert (where / "data" / "meta.properties").exists()  # KRaft log dir formatted
        status = cli("status")
        assert f"running: pid {LocalBroker(where).pid()}, 127.0.0.1:{port}, accepting" in (
            status.stdout
        )
        again = cli("start", "--port", str(port))
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        stopped = cli("stop")
    assert stopped.stdout.strip() == "broker stopped"
    assert cli("status").stdout.startswith("stopped")
    assert cli("stop").stdout.strip() == "no broker was running"


def test_broker_that_cannot_start_raises_with_its_log(tmp_path: Path) -> None:
    # Something else already listens on the controller port: the broker exits while starting.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        broker = LocalBroker(tmp_path, free_port(), controller_port=taken.getsockname()[1])
        with pytest.raises(BrokerError) as info:
            broker.start(timeout=120)
    text = str(info.value)
    assert "the Kafka broker exited with code" in text
    assert "last lines of the broker log:" in text
    assert "Address already in use" in text  # the broker's own words, from its log
    assert broker.pid() is None


def test_port_in_use_is_refused_before_starting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(BrokerError, match="port .* is already in use"):
            LocalBroker(tmp_path, taken.getsockname()[1]).start()
