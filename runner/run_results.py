"""``target/run_results.json``: what ``runner run``, ``test`` and ``build`` did, one result per
model, seed and test, in dbt's shape where it fits, so CI reads it as it reads dbt's.

```json
{"metadata": {"dbt_schema_version": ..., "generated_at": "...Z", "invocation_id": "...",
              "runner_version": "0.1.0", "command": "build"},
 "elapsed_time": 41.2,
 "args": {"which": "build", "select": ["orders_merge+"], "exclude": [], "target": "local"},
 "results": [{"unique_id": "model.orders_demo.orders_merge", "status": "success",
              "timing": [{"name": "execute", "started_at": "...", "completed_at": "..."}],
              "execution_time": 12.5, "thread_id": "main", "message": "3 batches, 9 rows",
              "failures": null, "adapter_response": {"rows_affected": 9, ...}}]}
```

Statuses are dbt's: a model or seed ``success`` / ``error`` / ``skipped``; a test ``pass`` /
``fail`` / ``error`` / ``skipped``; ``failures`` is a data test's count of failing rows.
What differs: a model's ``adapter_response`` sums its micro-batches (``batches``,
``rows_affected`` = rows in, and the MERGE's inserted / updated / deleted). Pure Python.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from runner.junit import JunitCase, Outcome
from runner.model_tests.results import TestResult, junit_case

RUN_RESULTS_PATH = Path("target") / "run_results.json"
# the dbt schema whose shape this follows (a subset: no compiled_code, no relation_name)
DBT_SCHEMA_VERSION = "https://schemas.getdbt.com/dbt/run-results/v6.json"
ResourceType = Literal["model", "seed", "test", "unit_test"]
Status = Literal["success", "error", "skipped", "pass", "fail"]
STATUSES: tuple[Status, ...] = ("success", "error", "skipped", "pass", "fail")
_MERGE_COUNTS = {
    "num_inserted_rows": "rows_inserted",
    "num_updated_rows": "rows_updated",
    "num_deleted_rows": "rows_deleted",
}


@dataclass
class NodeResult:
    """The outcome of one model, seed or test."""

    resource_type: ResourceType
    name: str
    status: Status
    started_at: datetime
    completed_at: datetime
    message: str = ""
    failures: int | None = None
    adapter_response: dict[str, Any] = field(default_factory=dict)
    model: str = ""  # a test's models ("a, b"), for JUnit's classname
    detail: str = ""  # longer text for JUnit (failing rows, a row diff)

    @property
    def seconds(self) -> float:
        return max(0.0, (self.completed_at - self.started_at).total_seconds())

    def unique_id(self, project: str) -> str:
        """dbt's ``<resource_type>.<project>.<name>`` (a unit test's: ``.<model>.<name>``)."""
        if self.resource_type == "unit_test" and self.model:
            return f"unit_test.{project}.{self.model}.{self.name}"
        return f"{self.resource_type}.{project}.{self.name}"


@dataclass
class ModelTally:
    """A model's micro-batches, summed as they finish (``runner run`` and ``build``)."""

    batches: int = 0
    rows: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, input_rows: int, merge_counts: dict[str, int]) -> None:
        self.batches += 1
        self.rows += input_rows
        for key, value in merge_counts.items():
            self.counts[key] = self.counts.get(key, 0) + value

    def adapter_response(self) -> dict[str, Any]:
        response: dict[str, Any] = {
            "_message": f"{self.batches} batch{'es' if self.batches != 1 else ''}",
            "batches": self.batches,
            "rows_affected": self.rows,
        }
        response |= {ours: self.counts.get(key, 0) for key, ours in _MERGE_COUNTS.items()}
        return response

    def message(self) -> str:
        return f"{self.batches} batch{'es' if self.batches != 1 else ''}, {self.rows} rows in"


def now_utc() -> datetime:
    return datetime.now(UTC)


def node_of_test(result: TestResult, completed_at: datetime) -> NodeResult:
    """A ``runner test`` result as a node: unit tests are dbt's ``unit_test`` resources."""
    failures = result.failures
    if failures is None and result.kind == "unit":
        failures = 0 if result.passed else 1
    started = datetime.fromtimestamp(completed_at.timestamp() - result.seconds, UTC)
    case = junit_case(result)
    return NodeResult(
        "unit_test" if result.kind == "unit" else "test",
        result.name,
        {"pass": "pass", "fail": "fail", "error": "error"}[result.status],  # type: ignore[arg-type]
        started,
        completed_at,
        message=result.message,
        failures=failures,
        model=result.model,
        detail=case.text,
    )


def run_results_data(
    project: str,
    command: str,
    results: list[NodeResult],
    started_at: datetime,
    args: dict[str, Any],
    *,
    completed_at: datetime | None = None,
    invocation_id: str | None = None,
) -> dict[str, Any]:
    """The document, as plain data."""
    completed_at = completed_at or now_utc()
    return {
        "metadata": {
            "dbt_schema_version": DBT_SCHEMA_VERSION,
            "generated_at": _iso(completed_at),
            "invocation_id": invocation_id or str(uuid.uuid4()),
            "runner_version": _runner_version(),
            "command": command,
        },
        "elapsed_time": round((completed_at - started_at).total_seconds(), 3),
        "args": {"which": command, **args},
        "results": [
            {
                "unique_id": r.unique_id(project),
                "status": r.status,
                "timing": [
                    {
                        "name": "execute",
                        "started_at": _iso(r.started_at),
                        "completed_at": _iso(r.completed_at),
                    }
                ],
                "thread_id": "main",
                "execution_time": round(r.seconds, 3),
                "message": r.message,
                "failures": r.failures,
                "adapter_response": r.adapter_response,
            }
            for r in results
        ],
    }


def write_run_results(root: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` to ``<root>/target/run_results.json``; returns the path."""
    path = root / RUN_RESULTS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def junit_cases(results: list[NodeResult]) -> list[JunitCase]:
    """Each result as a JUnit test case (classname ``model`` / ``seed`` / ``test.<model>``)."""
    outcomes: dict[Status, Outcome] = {
        "success": "pass",
        "pass": "pass",
        "fail": "failure",
        "error": "error",
        "skipped": "skipped",
    }
    return [
        JunitCase(
            f"{r.resource_type}.{r.model}" if r.model else r.resource_type,
            r.name,
            r.seconds,
            outcomes[r.status],
            r.message,
            r.detail or r.message,
        )
        for r in results
    ]


def _runner_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("delta-stream-runner")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _iso(moment: datetime) -> str:
    """dbt's timestamps: UTC, ISO 8601 with microseconds and a ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_command_results(
    root: Path,
    project: str,
    command: str,
    results: list[NodeResult],
    started_at: datetime,
    *,
    target: str,
    select: list[str] | None = None,
    exclude: list[str] | None = None,
) -> Path:
    """``run_results.json`` of one command (``run``, ``test``, ``build``) with its selection."""
    args = {"select": list(select or []), "exclude": list(exclude or []), "target": target}
    return write_run_results(root, run_results_data(project, command, results, started_at, args))


# the keys of dbt's run-results document and of each result, with their JSON types
_NUMBER = (int, float)
_DOCUMENT_KEYS: dict[str, tuple[type, ...]] = {
    "metadata": (dict,),
    "elapsed_time": _NUMBER,
    "args": (dict,),
    "results": (list,),
}
_RESULT_KEYS: dict[str, tuple[type, ...]] = {
    "unique_id": (str,),
    "status": (str,),
    "timing": (list,),
    "thread_id": (str,),
    "execution_time": _NUMBER,
    "message": (str,),
    "failures": (int, type(None)),
    "adapter_response": (dict,),
}


def shape_problems(data: Any) -> list[str]:
    """What keeps ``data`` from being a run_results document of the shape above ([] when it
    is one): for CI scripts and the tests that read one back."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    problems = [
        f"{key}: missing or not a {kinds[0].__name__}"
        for key, kinds in _DOCUMENT_KEYS.items()
        if not isinstance(data.get(key), kinds)
    ]
    for key in ("dbt_schema_version", "generated_at", "invocation_id"):
        if not isinstance(data.get("metadata", {}).get(key), str):
            problems.append(f"metadata.{key}: missing")
    results = data.get("results")
    for index, result in enumerate(results if isinstance(results, list) else []):
        where = f"results[{index}]"
        if not isinstance(result, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        for key, kinds in _RESULT_KEYS.items():
            if key not in result or not isinstance(result[key], kinds):
                problems.append(f"{where}.{key}: missing or of the wrong type")
        if result.get("status") not in STATUSES:
            problems.append(f"{where}.status: {result.get('status')!r} is not one of {STATUSES}")
        if str(result.get("unique_id", "")).count(".") < 2:
            problems.append(f"{where}.unique_id: not <resource_type>.<project>.<name>")
        for timing in result.get("timing") or []:
            if {"name", "started_at", "completed_at"} - set(timing):
                problems.append(f"{where}.timing: needs name, started_at and completed_at")
    return problems
