"""YAML loading that remembers line numbers, so config errors can name file and line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from runner.errors import ConfigError


class YamlMap(dict):
    """A mapping from YAML that knows its file and the line of each key (1-based)."""

    file: Path | None = None
    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)

    def child(self, key: str) -> YamlMap:
        """The mapping under ``key`` (an empty one, located at this map, when absent)."""
        value = self.get(key)
        if value is None:
            empty = YamlMap()
            empty.file, empty.line, empty.key_lines = self.file, self.line_of(key), {}
            return empty
        if not isinstance(value, YamlMap):
            raise ConfigError(
                f"'{key}' must be a mapping, got {type(value).__name__}",
                file=self.file,
                line=self.line_of(key),
            )
        return value


def check_keys(raw: YamlMap, allowed: Iterable[str], what: str) -> None:
    """The one key checker of every YAML file the runner reads: a ConfigError at the first key
    of ``raw`` not in ``allowed``, with the file, the line and a "did you mean" for typos.

    Example: ``check_keys(target, TARGET_KEYS, "target 'local'")`` on ``warehous: x`` raises
    ``project.yml:9: target 'local': unknown key 'warehous' (did you mean 'warehouse'?)``.
    """
    known = list(allowed)
    unknown = [str(k) for k in raw if str(k) not in known]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
    guess = f" (did you mean '{close[0]}'?)" if close else ""
    raise ConfigError(
        f"{what}: unknown key '{unknown[0]}'{guess}",
        file=raw.file,
        line=raw.line_of(unknown[0]),
        hint=f"known keys: {', '.join(known)}",
    )


def untemplated(raw: YamlMap, key: str, default: str, hint: str) -> str:
    """``raw[key]`` (or ``default``) as text, where a template is an error at its line: a path
    is written into every compiled statement and artifact, so it cannot hang on env_var()."""
    given = raw.get(key)
    value = default if given is None else str(given)
    if "{{" in value:
        raise ConfigError(
            f"{key}: templates such as env_var() are not allowed in a path",
            file=raw.file,
            line=raw.line_of(key),
            hint=hint,
        )
    return value


class _LineLoader(yaml.SafeLoader):
    file: Path | None = None


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> YamlMap:
    loader.flatten_mapping(node)
    result = YamlMap()
    result.file = loader.file
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result.key_lines:  # YAML keeps the last silently: a typo'd copy, usually
            raise ConfigError(
                f"duplicate key '{key}' (first at line {result.key_lines[key]})",
                file=loader.file,
                line=key_node.start_mark.line + 1,
                hint="keep one of them",
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path) -> YamlMap:
    """Parse ``path``; the top level must be a mapping. Errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", file=path) from exc
    loader = _LineLoader(text)
    loader.file = path
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML: {problem}", file=path, line=line) from exc
    finally:
        loader.dispose()
    if data is None:
        data = YamlMap()
        data.file, data.line, data.key_lines = path, 1, {}
    if not isinstance(data, YamlMap):
        raise ConfigError("the top level must be a mapping", file=path, line=1)
    return data
