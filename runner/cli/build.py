"""`runner build`: seeds, models and tests in DAG order, as `dbt build` does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from runner.cli.errors import EXIT_FAILURE, reported_errors
from runner.cli.ls import LsSelect
from runner.cli.options import Debug, Exclude, JunitXml, NoServer, ProjectDir, State, Target, Vars
from runner.cli.stream import AdoptState, FullRefresh, Verbose

if TYPE_CHECKING:  # imported where used: `runner --help` loads only its own
    from datetime import datetime

    from pyspark.sql import SparkSession

    from runner.build_plan import BuildStep
    from runner.cli.run_record import RunRecord
    from runner.cli.stream import RunChoices
    from runner.project import Project
    from runner.run_results import NodeResult
    from runner.specs.suite import TestSuite


def build(
    select: LsSelect = None,
    exclude: Exclude = None,
    state: State = None,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    full_refresh: FullRefresh = False,
    adopt_state: AdoptState = False,
    verbose: Verbose = False,
    junit_xml: JunitXml = None,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Load the seeds, then run each model (as `runner run` does: what its source holds now)
    upstream first, each after its unit tests and followed by its data tests (models/*.yml and
    tests/*.sql). A failing test stops what depends on the model it tests: those models and
    their tests are skipped, with the reason. Writes target/run_results.json. Exit 0 when
    everything passed, 1 otherwise.

    Example: runner build --select orders_merge+ --junit-xml target/junit.xml
    """
    from datetime import UTC, datetime

    from runner.build_plan import BuildState, build_steps
    from runner.checkpoint_lock import CheckpointLocks
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.cli.run_record import RunRecord
    from runner.cli.stream import RunChoices, check_before_spark
    from runner.listing import list_resources
    from runner.project import load
    from runner.selection import dependency_graph
    from runner.specs.suite import TestSuite
    from runner.suite_selection import load_suite

    now = datetime.now(UTC).replace(tzinfo=None)  # the freshness tests' reference time
    choices = RunChoices(full_refresh, adopt_state, verbose, no_server)
    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        chosen = list_resources(project, select, exclude=exclude, state=state)
        names = {
            kind: [r.name for r in chosen if r.resource_type == kind]
            for kind in ("model", "seed", "test")
        }
        every = load_suite(project)
        tests = set(names["test"])
        suite = TestSuite(
            every.seeds,
            [t for t in every.data_tests if t.name in tests],
            [t for t in every.unit_tests if t.name in tests],
            [t for t in every.singular_tests if t.name in tests],
        )
        steps = build_steps(names["model"], names["seed"], suite)
        if not steps:
            console.print("nothing to build: the selection matches nothing.")
            return
        models = [project.models[name] for name in names["model"]]
        record = RunRecord(names["model"])
        with CheckpointLocks(project.target.revealed_conf) as locks:
            check_before_spark(project, models, choices, locks, waits=False)
            from runner.spark.streaming.pipeline import session_for

            spark = session_for(project, models, no_server=choices.no_server)
            plan = BuildState(dependency_graph(project))
            results: list[NodeResult] = []
            try:
                for step in steps:
                    why = plan.skip_reason(step)
                    if why is not None:
                        results.append(_skipped(step, why))
                        console.print(f"SKIP {step.kind} {step.name}: {why}")
                    else:
                        results.append(_run_step(spark, project, suite, step, record, choices, now))
                    plan.record(
                        step, results[-1].status in ("success", "pass"), _skip_of(results[-1])
                    )
            finally:
                selected = list(select or [])
                record.write(
                    project,
                    "build",
                    select=selected,
                    exclude=exclude,
                    junit_xml=junit_xml,
                    results=results,
                )
    console.print(_summary(results))
    if junit_xml is not None:
        console.print(f"wrote {junit_xml}")
    if any(r.status not in ("success", "pass") for r in results):
        raise typer.Exit(EXIT_FAILURE)


def _run_step(
    spark: SparkSession,
    project: Project,
    suite: TestSuite,
    step: BuildStep,
    record: RunRecord,
    choices: RunChoices,
    now: datetime,
) -> NodeResult:
    from runner.run_results import node_of_test, now_utc

    if step.kind == "seed":
        return _load_seed(spark, project, suite, step.name)
    if step.kind == "model":
        return _run_model(project, step.name, record, choices)
    from runner.cli.test import print_test_result
    from runner.spark.testing.data_tests import run_data_test
    from runner.spark.testing.singular_tests import run_singular_test
    from runner.spark.testing.unit_tests import run_unit_test

    unit = {t.name: t for t in suite.unit_tests}
    data = {t.name: t for t in suite.data_tests}
    singular = {t.name: t for t in suite.singular_tests}
    if step.kind == "unit_test":
        result = run_unit_test(spark, project, unit[step.name])
    elif step.name in data:
        result = run_data_test(spark, project, suite.seeds, data[step.name], now)
    else:
        result = run_singular_test(spark, project, suite.seeds, singular[step.name])
    print_test_result(result)
    return node_of_test(result, now_utc())


def _load_seed(spark: SparkSession, project: Project, suite: TestSuite, name: str) -> NodeResult:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from runner.cli.progress import console
    from runner.error_text import first_line
    from runner.errors import RunnerError
    from runner.run_results import NodeResult, now_utc
    from runner.spark.testing.seeds import load_seed
    from runner.specs.seeds import read_seed

    began = now_utc()
    try:
        report = load_seed(spark, project, suite.seeds[name], read_seed(suite.seeds[name]))
    except (RunnerError, PySparkException, Py4JError) as exc:
        message = str(exc) if isinstance(exc, RunnerError) else first_line(exc)
        console.print(f"ERROR seed {name}: {message}")
        return NodeResult("seed", name, "error", began, now_utc(), message)
    state = "loaded" if report.written else "unchanged,"
    message = f"{state} {report.rows} rows in {report.table} (version {report.version})"
    console.print(f"seed {name}: {message}")
    response = {"_message": message, "rows_affected": report.rows if report.written else 0}
    return NodeResult("seed", name, "success", began, now_utc(), message, None, response)


def _run_model(project: Project, name: str, record: RunRecord, choices: RunChoices) -> NodeResult:
    from runner.cli.errors import while_running
    from runner.cli.progress import console
    from runner.cli.stream import failure_of, run_models
    from runner.errors import RunnerError
    from runner.specs.stream import TriggerSpec

    model = project.models[name]
    record.start(name)
    try:
        with while_running():
            run_models(project, [model], choices, TriggerSpec(kind="available_now"), record)
    except RunnerError as exc:
        record.finish(name)
        _, message = failure_of(exc, [model])
        console.print(f"ERROR model {name}: {message}")
        return record.model_result(name, "error", message)
    record.finish(name)
    return record.model_result(name, "success")


def _skipped(step: BuildStep, why: str) -> NodeResult:
    from runner.run_results import NodeResult, now_utc

    moment = now_utc()
    return NodeResult(step.kind, step.name, "skipped", moment, moment, f"skipped: {why}")


def _skip_of(result: NodeResult) -> str | None:
    return result.message.removeprefix("skipped: ") if result.status == "skipped" else None


def _summary(results: list[NodeResult]) -> str:
    """dbt's last line: ``Done. PASS=7 ERROR=0 SKIP=0 TOTAL=7`` (FAIL: failed tests)."""
    passed = sum(r.status in ("success", "pass") for r in results)
    failed = sum(r.status == "fail" for r in results)
    errors = sum(r.status == "error" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    return f"Done. PASS={passed} FAIL={failed} ERROR={errors} SKIP={skipped} TOTAL={len(results)}"
