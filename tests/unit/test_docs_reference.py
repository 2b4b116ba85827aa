"""The docs site against the code: every command, option and configuration key is in the
reference, every relative link points to a file, and every `runner/...` path the docs name
exists, so a renamed option or a moved module cannot leave the docs behind.

The key sets are read from the code that validates them, found by name wherever it lives in
`runner/`, so a module move does not break this test, only a key the docs do not mention does.
(`mkdocs build --strict` itself runs in scripts/test.sh.)
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer.main

from runner.cli.app import app

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
REFERENCE = DOCS / "reference"
# every Markdown file a reader meets: the README, the project files, the bench notes, the site
PAGES = sorted(
    [
        REPO / "README.md",
        REPO / "CONTRIBUTING.md",
        REPO / "CHANGELOG.md",
        REPO / "bench" / "README.md",
        *(p for p in DOCS.rglob("*.md") if "examples" not in p.relative_to(DOCS).parts),
    ]
)


def cli_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "scripts" / "cli_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def defined(name: str) -> Any:
    """The object a module of `runner/` defines at top level as ``name`` (a class, a function or
    a constant), wherever that module is."""
    pattern = re.compile(rf"^(class {name}\b|def {name}\b|{name}\s*[:=])", re.MULTILINE)
    found = [p for p in sorted((REPO / "runner").rglob("*.py")) if pattern.search(p.read_text())]
    assert len(found) == 1, f"{name} should be defined once in runner/, found in {found}"
    parts = found[0].relative_to(REPO).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return getattr(importlib.import_module(module), name)


def in_code(key: str, text: str) -> bool:
    """Whether ``key`` is written as code (inside backticks) somewhere in ``text``."""
    return re.search(rf"`[^`\n]*(?<![\w-]){re.escape(key)}(?![\w-])[^`\n]*`", text) is not None


# -- the command-line reference -------------------------------------------------------------


def test_cli_reference_is_current() -> None:
    for path, text in cli_docs().pages().items():
        assert path.read_text() == text, f"{path} is stale: run scripts/cli_docs.py"


def cli_commands() -> list[Any]:
    root = typer.main.get_command(app)
    found = [("runner", root), *cli_docs().commands(root, "runner")]
    return [pytest.param(name, command, id=name) for name, command in found]


@pytest.mark.parametrize("name,command", cli_commands())
def test_every_command_and_option_is_in_the_cli_reference(name: str, command: Any) -> None:
    page = (REFERENCE / "cli.md").read_text()
    sections = re.split(r"^## ", page, flags=re.MULTILINE)
    section = next((s for s in sections if s.startswith(f"`{name}`\n")), None)
    assert section is not None, f"docs/reference/cli.md has no section for `{name}`"
    for param in command.params:
        if param.name == "help":
            continue
        names = [*param.opts, *param.secondary_opts] if param.param_type_name == "option" else []
        for option in names or [param.human_readable_name]:
            assert f"`{option}`" in section, f"`{name} {option}` is missing from its section"


# -- configuration keys ---------------------------------------------------------------------


def stream_keys() -> set[str]:
    keys_of = defined("stream_keys")
    return {key for fmt in defined("SOURCE_FORMATS") for key in keys_of(fmt)}


KEY_SETS = {
    "model config()": (lambda: defined("ModelConfig").field_names(), "model-config.md"),
    "project.yml": (lambda: defined("PROJECT_KEYS"), "project-yml.md"),
    "a target": (lambda: defined("TARGET_KEYS"), "project-yml.md"),
    "a target's catalog": (lambda: defined("CATALOG_KEYS"), "project-yml.md"),
    "paths": (lambda: defined("DEFAULT_PATHS"), "project-yml.md"),
    "a stream (every format)": (stream_keys, "streams.md"),
    "a Kafka stream": (lambda: defined("KAFKA_KEYS"), "streams.md"),
}


@pytest.mark.parametrize("what", sorted(KEY_SETS))
def test_every_config_key_is_in_the_reference(what: str) -> None:
    read_keys, page = KEY_SETS[what]
    keys = list(read_keys())
    assert keys, f"no keys read for {what}"
    text = (REFERENCE / page).read_text()
    missing = [key for key in keys if not in_code(key, text)]
    assert not missing, f"docs/reference/{page} does not mention keys of {what}: {missing}"


def test_in_code_reads_only_whole_keys_in_backticks() -> None:
    assert in_code("master", "| `targets.<t>.master` / `remote` |")
    assert not in_code("master", "the master listens")
    assert not in_code("path", "`paths`")
    assert not in_code("targets", "`clean-targets`")


# -- links and paths --------------------------------------------------------------------------

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
RUNNER_PATH = re.compile(r"(?<![\w./~-])runner/[\w./-]*[\w/]")


def prose(page: Path) -> str:
    """The page without its fenced code blocks (which show output, not links)."""
    return FENCE.sub("", page.read_text())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_to_a_file(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # another site, or an anchor on this page
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)} links to missing files: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_runner_path_in_the_docs_exists(page: Path) -> None:
    stale = sorted(
        {p for p in RUNNER_PATH.findall(page.read_text()) if not (REPO / p.rstrip("/")).exists()}
    )
    assert not stale, f"{page.relative_to(REPO)} names paths that do not exist: {stale}"


def test_runner_path_pattern_skips_paths_that_only_end_in_runner() -> None:
    text = "`runner/spark` at <warehouse>/_runner/event_log, ~/.cache/delta-stream-runner/x"
    assert RUNNER_PATH.findall(text) == ["runner/spark"]
