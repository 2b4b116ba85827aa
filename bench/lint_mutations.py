"""The mutation corpus of the lint/analyzer differential test: correct models, broken on purpose.

The bases are correct models: the example project's, docs/examples/same_events', and every
lint rule's good fixture models (tests/unit/fixtures/lint/<CODE>/models/good*.sql, each code's
in its own copy of the fixture project). Each mutation changes one thing in one base model's
SQL (never its config(), so the target a mutated model writes is the base's): a column renamed
or dropped, a value of another type, WHEN clauses reordered or without their condition, a
relation swapped, a function unknown or called with the wrong number of arguments, a column
outside GROUP BY, or one appended statement (OPTIMIZE WHERE / ZORDER BY, INSERT, UPDATE,
VACUUM) with a right or a wrong column. Every mutation is a model of its own, next to its base,
so Spark's analyzer (``runner lint --analyze``'s machinery) and the no-JVM lint judge the same
file.

Deterministic: the same seed gives the same corpus, byte for byte (the recorded Spark verdicts
in bench/results/lint_agreement.json are keyed by each model's text).
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.project import load
from runner.specs.model import ModelSpec

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "unit" / "fixtures" / "lint"
SEED = 32
PER_OPERATOR = 16  # sites of one operator sampled per base model
PER_BASE_APPENDED = 22  # appended statements sampled per base model

# Words that look like calls but are keywords or types
_NOT_FUNCTIONS = frozenset(
    {"in", "as", "and", "or", "not", "over", "values", "insert", "using", "on", "exists",
     "from", "select", "where", "when", "then", "else", "end", "by", "decimal", "table",
     "view", "struct", "array", "map", "with", "partition", "into", "set", "config", "is",
     "join", "interval", "if", "update", "delete", "merge", "matched", "cast", "row_number",
     "case", "filter", "group", "order", "zorder", "this", "batch", "ref", "var", "dedupe",
     "scd2", "merge_into", "source", "env_var", "rank", "dense_rank", "lag", "lead"}
)  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    """One model of the corpus: ``base``'s text with one ``kind`` of change (``kind`` is
    ``valid`` for an unchanged base)."""

    project: str  # name of the corpus project it belongs to
    name: str  # the model's name (its file's stem)
    base: str  # the model it was made from
    kind: str
    change: str  # what changed, for the disagreement list
    source: str


@dataclass(frozen=True)
class CorpusProject:
    name: str
    root: Path
    mutants: tuple[Mutant, ...]


def base_projects() -> list[tuple[str, Path, list[str]]]:
    """(corpus project name, where its files come from, the base models' file names)."""
    found = [
        ("example", REPO, sorted(p.name for p in (REPO / "models").glob("*.sql"))),
        (
            "same_events",
            REPO / "docs" / "examples" / "same_events",
            sorted(p.name for p in (REPO / "docs/examples/same_events/models").glob("*.sql")),
        ),
    ]
    for code in sorted(p.name for p in FIXTURES.iterdir() if p.name.startswith("DL")):
        goods = sorted(p.name for p in (FIXTURES / code / "models").glob("good*.sql"))
        if goods:
            found.append((f"fixture_{code}", FIXTURES / code, goods))
    return found


def build_corpus(out: Path, seed: int = SEED) -> list[CorpusProject]:
    """Write every corpus project under ``out`` (one directory each) and return them."""
    rng = random.Random(seed)
    projects = []
    for name, source, bases in base_projects():
        root = out / name
        _copy_project(name, source, root)
        loaded = load(root, tolerate_model_errors=True)
        if loaded.model_errors:
            raise RuntimeError(f"a base model of {name} does not load: {loaded.model_errors}")
        mutants: list[Mutant] = []
        for file_name in bases:
            stem = file_name.removesuffix(".sql")
            model = loaded.models.get(stem)
            if model is None:
                continue
            # a mutant writes its base's target: one target, many writers, on purpose
            text = re.sub(
                r"config\(",
                "config(shared_target=true, ",
                (root / "models" / file_name).read_text(),
                count=1,
            )
            (root / "models" / file_name).write_text(text)
            mutants.append(Mutant(name, stem, stem, "valid", "the base model, unchanged", text))
            columns = _column_vocabulary(loaded, model)
            for kind, change, mutated in _mutations(text, model, columns, rng):
                index = len(mutants)
                mutant = Mutant(name, f"{stem}__m{index:03d}", stem, kind, change, mutated)
                (root / "models" / f"{mutant.name}.sql").write_text(mutated)
                mutants.append(mutant)
        projects.append(CorpusProject(name, root, tuple(mutants)))
    return projects


def _copy_project(name: str, source: Path, root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    if name.startswith("fixture_"):
        shutil.copytree(FIXTURES / "_project", root)
        shutil.copytree(source, root, dirs_exist_ok=True)
        for bad in (root / "models").glob("bad*.sql"):
            bad.unlink()
        return
    root.mkdir(parents=True)
    for item in ("project.yml", "models", "macros", "streams", "seeds"):
        if (source / item).is_dir():
            shutil.copytree(source / item, root / item)
        elif (source / item).exists():
            shutil.copy2(source / item, root / item)


def _column_vocabulary(project, model: ModelSpec) -> tuple[list[str], list[str]]:  # noqa: ANN001
    """(the target's columns, the batch's columns) of ``model``."""
    target = [c.strip("`").lower() for c in project.target_column_names(model)]
    batch = [c.lower() for c in project.stream_column_names(model.config.stream) or []]
    return target, batch


# -- mutation operators ----------------------------------------------------------------------

Mutation = tuple[str, str, str]  # (kind, what changed, the model's new text)


def _split(text: str) -> tuple[str, str]:
    """(config() header, body): mutations change only the body."""
    match = re.search(r"\{\{\s*config\(.*?\)\s*\}\}", text, re.DOTALL)
    if match is None:
        return "", text
    return text[: match.end()], text[match.end() :]


def _mutations(
    text: str, model: ModelSpec, columns: tuple[list[str], list[str]], rng: random.Random
) -> Iterator[Mutation]:
    head, body = _split(text)
    for operator in OPERATORS:
        found = list(operator(body, model, columns))
        cap = PER_BASE_APPENDED if operator is appended else PER_OPERATOR
        if len(found) > cap:
            found = rng.sample(found, cap)
        for kind, change, new_body in found:
            if new_body != body:
                yield kind, change, head + new_body


def _code_spans(body: str) -> list[tuple[int, int]]:
    """Spans of ``body`` outside SQL comments (mutating a comment changes nothing)."""
    spans, at = [], 0
    for comment in re.finditer(r"--[^\n]*|\{#.*?#\}", body, re.DOTALL):
        spans.append((at, comment.start()))
        at = comment.end()
    spans.append((at, len(body)))
    return spans


def _matches(pattern: str, body: str, flags: int = re.IGNORECASE) -> list[re.Match[str]]:
    spans = _code_spans(body)
    return [
        m
        for m in re.finditer(pattern, body, flags)
        if any(start <= m.start() and m.end() <= end for start, end in spans)
    ]


def _replace(body: str, match: re.Match[str], new: str, group: int = 0) -> str:
    return body[: match.start(group)] + new + body[match.end(group) :]


def rename_column(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A column name misspelled at one place (in SQL or in a macro's arguments)."""
    names = sorted(set(columns[0]) | set(columns[1]))
    for name in names:
        for match in _matches(rf"(?<![\w.'])(\w+\.)?({re.escape(name)})(?![\w(])", body):
            typo = name[:-1] if len(name) > 3 else name + "x"
            yield "rename-column", f"{name} -> {typo}", _replace(body, match, typo, 2)
        for match in _matches(rf"'({re.escape(name)})'", body):
            yield "rename-column", f"'{name}' -> '{name}x'", _replace(body, match, name + "x", 1)


def drop_list_item(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """One item of a comma-separated list dropped (a projection, INSERT's columns or values)."""
    for match in _matches(r",(\s*)((?:\w+\.)?\w+)(?=\s*[,)\n])", body):
        yield "drop-item", f"dropped ', {match.group(2)}'", _replace(body, match, "")


def change_type(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A column reference replaced by a value of another type."""
    names = sorted(set(columns[0]) | set(columns[1]))
    wrappers = ("array({})", "CAST({} AS BOOLEAN)", "map('k', {})", "named_struct('v', {})")
    for name in names:
        for match in _matches(rf"(?<![\w.'])(\w+\.)?{re.escape(name)}(?![\w('])", body):
            wrapper = wrappers[(match.start() + len(name)) % len(wrappers)]
            new = wrapper.format(match.group(0))
            yield "change-type", f"{match.group(0)} -> {new}", _replace(body, match, new)


def when_clauses(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A MERGE's WHEN clauses reordered, dropped, or without their condition."""
    whens = _matches(r"^WHEN\b.*?(?=^WHEN\b|;)", body, re.MULTILINE | re.DOTALL | re.IGNORECASE)
    for first, second in zip(whens, whens[1:], strict=False):
        a, b = first.group(0), second.group(0)
        swapped = body[: first.start()] + b + a + body[second.end() :]
        yield "when-reorder", f"swapped '{a.split(chr(10))[0]}' and the next WHEN", swapped
    for when in whens:
        yield "when-drop", f"dropped '{when.group(0).split(chr(10))[0]}'", _replace(body, when, "")
        condition = re.match(r"(WHEN\s+(?:NOT\s+)?MATCHED)\s+AND\s+.*?\s+(THEN)", when.group(0),
                             re.DOTALL | re.IGNORECASE)  # fmt: skip
        if condition:
            plain = f"{condition.group(1)} {condition.group(2)}"
            new = plain + when.group(0)[condition.end() :]
            yield (
                "when-no-condition",
                f"'{condition.group(0)}' -> '{plain}'",
                (_replace(body, when, new)),
            )


def swap_relation(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A relation read replaced by another one of the model (a view, the batch, the target)."""
    relations = sorted(
        {m.group(1) for m in _matches(r"\bVIEW\s+(\w+)", body)} | {"{{ batch }}", "{{ this }}"}
    )
    for match in _matches(r"\b(?:FROM|USING|JOIN)\s+(\{\{\s*\w+\s*\}\}|\w+)", body):
        for other in relations:
            if other.replace(" ", "") != match.group(1).replace(" ", ""):
                yield (
                    "swap-relation",
                    f"{match.group(1)} -> {other}",
                    (_replace(body, match, other, 1)),
                )


def functions(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A function call renamed to an unknown function, or given one argument too many/few."""
    for match in _matches(r"\b([A-Za-z_]\w*)\(", body):
        name = match.group(1)
        if (
            name.lower() in _NOT_FUNCTIONS
            or "{{" in body[max(0, match.start() - 3) : match.start()]
        ):
            continue
        if _inside_jinja(body, match.start()):
            continue
        yield "unknown-function", f"{name}( -> {name}x(", _replace(body, match, name + "x", 1)
        close = _closing_paren(body, match.end() - 1)
        if close is None:
            continue
        inside = body[match.end() : close]
        yield (
            "arity",
            f"{name}({inside.strip()}) + one argument",
            (body[:close] + (", 1" if inside.strip() else "1") + body[close:]),
        )
        if inside.strip():
            yield (
                "arity",
                f"{name}({inside.strip()}) -> {name}()",
                body[: match.end()] + body[close:],
            )


def _inside_jinja(body: str, at: int) -> bool:
    return body.rfind("{{", 0, at) > body.rfind("}}", 0, at)


def _closing_paren(body: str, open_at: int) -> int | None:
    depth = 0
    for index in range(open_at, len(body)):
        if body[index] == "(":
            depth += 1
        elif body[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def group_by(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """A column outside GROUP BY next to aggregates, or an aggregate next to plain columns."""
    for match in _matches(r"\bSELECT\b(\s+)", body):
        rest = body[match.end() :]
        statement = rest.split(";", 1)[0]
        if re.search(r"\bGROUP\s+BY\b", statement, re.IGNORECASE):
            for name in columns[1][:3]:
                yield (
                    "not-grouped",
                    f"SELECT {name}, ... GROUP BY",
                    (body[: match.end()] + f"{name}, " + rest),
                )
        elif not re.match(r"\*|\{\{", rest.lstrip()):
            yield (
                "not-grouped",
                "count(*) next to plain columns",
                (body[: match.end()] + "count(*) AS n_rows, " + rest),
            )


def appended(body: str, model: ModelSpec, columns: tuple[list[str], list[str]]):
    """One statement appended: OPTIMIZE WHERE / ZORDER BY, INSERT, UPDATE, VACUUM; some right,
    some wrong."""
    target, batch = columns
    if not target:
        return
    partitions = [c.lower() for c in model.config.partitioned_by]
    plain = [c for c in target if c not in partitions]
    end = body.rstrip()
    end = end if end.endswith(";") else end + "\n;"

    def add(kind: str, change: str, statement: str) -> Mutation:
        return kind, change, f"{end}\n\n{statement};\n"

    for column in [*partitions, *plain[:2], "no_such_column"]:
        yield add("optimize-where", f"OPTIMIZE WHERE {column}",
                  f"OPTIMIZE {{{{ this }}}} WHERE {column} IS NOT NULL")  # fmt: skip
    for column in [*partitions, *plain[:3], "no_such_column"]:
        yield add("zorder", f"ZORDER BY {column}",
                  f"OPTIMIZE {{{{ this }}}} ZORDER BY ({column})")  # fmt: skip
    shared = [c for c in target if c in batch]
    if len(shared) == len(target):
        listed = ", ".join(target)
        yield add("insert", "INSERT of every target column",
                  f"INSERT INTO {{{{ this }}}} SELECT {listed} FROM {{{{ batch }}}}")  # fmt: skip
        fewer = ", ".join(target[:-1])
        yield add("insert", "INSERT with one column too few",
                  f"INSERT INTO {{{{ this }}}} SELECT {fewer} FROM {{{{ batch }}}}")  # fmt: skip
        yield add("insert", "INSERT with one column too many",
                  f"INSERT INTO {{{{ this }}}} SELECT {listed}, 1 AS extra "
                  "FROM {{ batch }}")  # fmt: skip
    if shared:
        yield add("insert", "INSERT of named columns",
                  f"INSERT INTO {{{{ this }}}} ({', '.join(shared)}) SELECT {', '.join(shared)} "
                  "FROM {{ batch }}")  # fmt: skip
        yield add("insert", "INSERT with more values than named columns",
                  f"INSERT INTO {{{{ this }}}} ({', '.join(shared[:1])}) "
                  f"SELECT {', '.join(shared[:2])}, 1 FROM {{{{ batch }}}}")  # fmt: skip
    for column in target[:3]:
        for value, what in VALUES:
            yield add("store-assignment", f"UPDATE SET {column} = {what}",
                      f"UPDATE {{{{ this }}}} SET {column} = {value} "
                      f"WHERE {target[0]} IS NULL")  # fmt: skip
    for hours in (0, 100, 168, 200):
        yield add("vacuum", f"VACUUM RETAIN {hours} HOURS",
                  f"VACUUM {{{{ this }}}} RETAIN {hours} HOURS")  # fmt: skip


VALUES = (
    ("array(1)", "an array"),
    ("true", "a boolean"),
    ("'x'", "a string"),
    ("1", "an integer"),
    ("current_timestamp()", "a timestamp"),
)
OPERATORS: tuple[Callable[..., Iterator[Mutation]], ...] = (
    rename_column,
    drop_list_item,
    change_type,
    when_clauses,
    swap_relation,
    functions,
    group_by,
    appended,
)
