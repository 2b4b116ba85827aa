"""Values read from environment variables: used where they run, shown as ``env_var('NAME')``.

One concept, one place. ``env_var('NAME')`` (in a model or macro, in a project.yml
``spark_conf`` value, in a stream's ``options:``) yields a :class:`Secret`: a ``str`` holding
the value, so a template can compare it (``{% if env_var('ENV') == 'prod' %}``), whose text
form (``str()``, which is what Jinja writes into SQL and what ``config()`` keeps) is the value
wrapped in invisible markers that name its variable. That marked text flows through rendering,
the statement splitter, specs and artifacts like any other text. Two functions end its life:

- :func:`reveal`, where a value is executed (the SQL sent to Spark, the Spark conf, the
  ``readStream`` options): markers dropped, the value kept; a variable that is not set is an
  error there, naming it and where it is used, so commands that never start Spark
  (``lint``, ``compile``, ``docs generate``, ``test --show-sql``) run without the secret;
- :func:`redact`, at every output boundary (files under ``target/``, stdout and stderr, error
  messages): the marked span becomes ``env_var('NAME')``. It also hides any value that
  :func:`reveal` handed to Spark, should Spark quote it back in an error.

Pure Python.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from runner.errors import ConfigError

_OPEN, _SEP, _CLOSE = "\ue010", "\ue011", "\ue012"
# A marked span, raw or as JSON writes it with ensure_ascii (\ue010 ... \ue012), so a span
# that reached a JSON encoder before redaction is still found.
_O, _S, _C = (f"(?:{c}|\\\\u{ord(c):04x})" for c in (_OPEN, _SEP, _CLOSE))
_SPAN = re.compile(f"{_O}([A-Za-z_][A-Za-z0-9_]*)(?:{_S}(.*?))?{_C}", re.DOTALL)
# Values revealed to Spark, hidden again if text from Spark quotes them (value -> name).
# Shorter values are not searched for: replacing every 'on' or '1' would garble the output.
_REVEALED: dict[str, str] = {}
MIN_REVEALED_LENGTH = 4


class Secret(str):
    """The value of environment variable ``name`` ("" and ``is_set`` False when it is not
    set). Compares and hashes as its value; its text form is the marked span."""

    name: str
    is_set: bool

    def __new__(cls, name: str, value: str | None) -> Secret:
        secret = super().__new__(cls, "" if value is None else value)
        secret.name = name
        secret.is_set = value is not None
        return secret

    def __str__(self) -> str:
        return marked(self.name, str.__str__(self) if self.is_set else None)

    def __repr__(self) -> str:
        return shown(self.name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Secret, (self.name, str.__str__(self) if self.is_set else None))


def env_secret(
    name: str, default: str | None = None, environ: Mapping[str, str] | None = None
) -> Secret:
    """``env_var(name, default)``: the variable's value (or ``default``) as a :class:`Secret`;
    one that is not set and has no default is a Secret that :func:`reveal` refuses."""
    value = (os.environ if environ is None else environ).get(name, default)
    return Secret(name, None if value is None else str(value))


def marked(name: str, value: str | None) -> str:
    """The text form of a value from ``name``: ``value`` between markers naming it."""
    inner = name if value is None else f"{name}{_SEP}{value}"
    return f"{_OPEN}{inner}{_CLOSE}"


def shown(name: str) -> str:
    """What every output shows in place of the value of ``name``."""
    return f"env_var('{name}')"


def has_secrets(text: str) -> bool:
    """Whether ``text`` holds a value from an environment variable."""
    return _SPAN.search(text) is not None


def holds_secret(value: Any) -> bool:
    """Whether ``value`` (a string, or plain data holding strings) came from env_var()."""
    if isinstance(value, str):
        return isinstance(value, Secret) or has_secrets(value)
    if isinstance(value, Mapping):
        return any(holds_secret(k) or holds_secret(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(holds_secret(v) for v in value)
    return False


def redact(text: str) -> str:
    """``text`` as it may be shown or written: each value from an environment variable
    replaced by ``env_var('NAME')``, including values already handed to Spark."""
    if not isinstance(text, str):
        return text
    if _OPEN in text or "\\u" in text:
        text = _SPAN.sub(lambda m: shown(m.group(1)), str.__str__(text))
    for value, name in _REVEALED.items():
        if value in text:
            text = text.replace(value, shown(name))
    return text


def redact_data(value: Any) -> Any:
    """``redact`` applied to every string of plain data (dicts, lists, tuples), before it is
    encoded as JSON: keys and values."""
    if isinstance(value, str):
        return redact(str(value))
    if isinstance(value, Mapping):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


class SecretNotSet(ConfigError):
    """A value to execute reads an environment variable that is not set."""


def reveal(
    text: str, *, used_in: str, file: Path | str | None = None, line: int | None = None
) -> str:
    """``text`` as Spark must receive it: each value from an environment variable in place
    of its markers. A variable that is not set (and has no default) is a :class:`SecretNotSet`
    naming it, ``used_in`` (``spark_conf spark.x``) and ``file``/``line``."""
    if not isinstance(text, str):
        return text
    text = str(text)  # a Secret's text form is its marked span
    if _OPEN not in text:
        return text

    def value_of(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if value is None:
            raise SecretNotSet(
                f"{used_in} reads environment variable {name}, which is not set",
                file=file,
                line=line,
                hint=f"export {name}=... before running the runner "
                f"(or give a default: env_var('{name}', '...'))",
            )
        if len(value) >= MIN_REVEALED_LENGTH:
            _REVEALED[value] = name
        return value

    return _SPAN.sub(value_of, text)


def reveal_all(
    values: Mapping[str, str],
    *,
    used_in: str,
    file: Path | str | None = None,
    lines: Mapping[str, int] | None = None,
    line: int | None = None,
) -> dict[str, str]:
    """:func:`reveal` of every value of a mapping (options, a Spark conf); an error names the
    key (``used_in`` + key) and its line in ``lines`` (else ``line``)."""
    where = lines or {}
    return {
        key: reveal(value, used_in=f"{used_in} {key}", file=file, line=where.get(key, line))
        for key, value in values.items()
    }


_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_ENV_CALL = re.compile(
    r"^\s*env_var\(\s*(['\"])(?P<name>[A-Za-z_][A-Za-z0-9_]*)\1\s*"
    r"(?:,\s*(['\"])(?P<default>.*?)\3\s*)?\)\s*$",
    re.DOTALL,
)


def render_env_vars(value: str, *, what: str, file: Path | None, line: int | None) -> str:
    """A YAML value (a ``spark_conf`` or stream option) with each ``{{ env_var('NAME') }}`` or
    ``{{ env_var('NAME', 'default') }}`` replaced by the variable's marked value, anywhere in
    the string (``password='{{ env_var('KAFKA_PASSWORD') }}';``). Nothing is read yet that
    could fail: an unset variable fails only where the value is revealed. Any other template
    is a ConfigError at ``file``:``line``."""

    def one(match: re.Match[str]) -> str:
        call = _ENV_CALL.match(match.group(1))
        if call is None:
            raise ConfigError(
                f"{what}: the only template allowed here is {{{{ env_var('NAME') }}}} "
                "or {{ env_var('NAME', 'default') }}",
                file=file,
                line=line,
            )
        return str(env_secret(call.group("name"), call.group("default")))

    return _TEMPLATE.sub(one, value) if "{{" in value else value


class RedactingStream:
    """A text stream that writes through :func:`redact`: stdout and stderr of the CLI, so that
    nothing it prints (progress, tables, warnings, errors, ``--debug`` tracebacks) shows a
    value from an environment variable."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def redact_standard_streams() -> None:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`RedactingStream` (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
