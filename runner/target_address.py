"""Where a target's Spark is: in this process (``local[*]``), a standalone cluster
(``master: spark://HOST:PORT``), Kubernetes (``master: k8s://https://HOST:PORT``: executors are
pods) or a Spark Connect server (``remote: sc://HOST:PORT``).

Pure: parsing and a plain TCP probe, so a target that cannot be reached fails in seconds with
one line naming it, before any JVM starts. Never imports pyspark.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Literal

from runner.errors import ConfigError

TargetKind = Literal["local", "standalone", "kubernetes", "connect"]
REACH_TIMEOUT_SECONDS = 3.0

_LOCAL = re.compile(r"^local(\[(\*|\d+)(,\s*\d+)?\])?$")
_HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
# Spark's own form: k8s://https://HOST[:PORT] (https when no scheme is given; port 443 by default)
_KUBERNETES = re.compile(
    r"^k8s://(?:(?P<scheme>https?)://)?(?P<host>[A-Za-z0-9.\-]+)(?::(?P<port>\d{1,5}))?/?$"
)


@dataclass(frozen=True)
class Address:
    """A cluster endpoint: ``spark://HOST:PORT``, ``sc://HOST:PORT`` or a Kubernetes API
    server (``k8s://HOST:PORT``)."""

    scheme: Literal["spark", "sc", "k8s"]
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_master(value: str) -> tuple[TargetKind, Address | None]:
    """``local[*]`` -> ('local', None); ``spark://h:7077`` -> ('standalone', Address);
    ``k8s://https://h:6443`` -> ('kubernetes', the API server's Address).
    Raises ValueError with what is expected."""
    if _LOCAL.match(value):
        return "local", None
    if value.startswith("spark://"):
        return "standalone", _host_port("spark", value.removeprefix("spark://"), value)
    if value.startswith("k8s://"):
        return "kubernetes", _kubernetes(value)
    raise ValueError(
        f"master must be local, local[N], local[*], spark://HOST:PORT or "
        f"k8s://https://HOST:PORT, got {value!r} (for Spark Connect use remote: sc://HOST:PORT)"
    )


def _kubernetes(value: str) -> Address:
    match = _KUBERNETES.match(value)
    port = int(match.group("port") or 443) if match else 0
    if match is None or not 0 < port < 65536:
        raise ValueError(
            f"expected k8s://https://HOST:PORT (the Kubernetes API server) with a port 1-65535, "
            f"got {value!r}"
        )
    return Address("k8s", match.group("host"), port)


def parse_remote(value: str) -> Address:
    """``sc://h:15002`` (optionally followed by ``/;param=value``) -> Address."""
    if not value.startswith("sc://"):
        raise ValueError(f"remote must be sc://HOST:PORT, got {value!r}")
    rest = value.removeprefix("sc://").split("/", 1)[0]
    return _host_port("sc", rest, value)


def _host_port(scheme: Literal["spark", "sc"], text: str, whole: str) -> Address:
    match = _HOST_PORT.match(text)
    if match is None or not 0 < int(match.group("port")) < 65536:
        raise ValueError(f"expected {scheme}://HOST:PORT with a port 1-65535, got {whole!r}")
    return Address(scheme, match.group("host").strip("[]"), int(match.group("port")))


class TargetUnreachable(ConfigError):
    """Nothing answers at a target's cluster address (a problem found before Spark runs)."""


def check_reachable(
    target_name: str, address: Address, timeout: float = REACH_TIMEOUT_SECONDS
) -> None:
    """Open and close a TCP connection to ``address``; one clear line if that fails."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout):
            return
    except TimeoutError:
        reason = f"no answer within {timeout:g} s"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    raise TargetUnreachable(unreachable_message(target_name, address, reason.lower()))


def unreachable_message(target_name: str, address: Address, reason: str) -> str:
    """The one line every unreachable-target error prints."""
    return (
        f"target '{target_name}' cannot be reached at {address}: {reason} "
        "(is it running? `python -m runner_devtools.cluster start` starts one on this machine, "
        "`python -m runner_devtools.cluster status` shows it)"
    )
