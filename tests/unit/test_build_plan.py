"""`runner build`'s order and what a failure stops (runner/build_plan.py), on the example
project's graph. No JVM."""

from __future__ import annotations

from runner.build_plan import BuildState, BuildStep, build_steps
from runner.project import load
from runner.selection import dependency_graph, select_models
from runner.suite_selection import load_suite
from tests.conftest import REPO


def example_steps() -> tuple[list[BuildStep], dict[str, set[str]]]:
    project = load(REPO)
    suite = load_suite(project)
    steps = build_steps(select_models(project, None), sorted(suite.seeds), suite)
    return steps, dependency_graph(project)


def fresh_state() -> tuple[dict[str, BuildStep], BuildState]:
    """The example's steps by name, and a build where nothing has failed yet."""
    steps, graph = example_steps()
    return {s.name: s for s in steps}, BuildState(graph)


def test_seeds_then_each_model_after_its_unit_tests_and_before_its_data_tests() -> None:
    steps, _ = example_steps()
    order = [(s.kind, s.name) for s in steps]
    assert order[0] == ("seed", "customers")
    position = {name: i for i, (_, name) in enumerate(order)}
    assert position["orders_merge"] < position["customer_totals"]  # upstream first
    assert position["unique_orders_merge_order_id"] > position["orders_merge"]
    assert position["unique_orders_merge_order_id"] < position["customer_totals"]
    assert position["customer_totals_follow_order_changes"] < position["customer_totals"]
    assert position["assert_no_negative_totals"] > position["customer_totals"]
    assert len(order) == len(set(order))  # every step once


def test_a_failing_data_test_skips_what_is_downstream_of_its_model_only() -> None:
    by_name, state = fresh_state()
    state.record(by_name["unique_orders_merge_order_id"], ok=False)
    assert state.skip_reason(by_name["customer_totals"]) == (
        "test unique_orders_merge_order_id failed"
    )
    assert state.skip_reason(by_name["not_null_orders_merge_order_id"]) is None  # same model
    assert state.skip_reason(by_name["orders_kafka_merge"]) is None  # not downstream


def test_a_skipped_model_skips_its_tests_and_its_downstream_with_the_first_reason() -> None:
    by_name, state = fresh_state()
    state.record(by_name["orders_merge"], ok=False)
    why = state.skip_reason(by_name["customer_totals"])
    assert why == "model orders_merge failed"
    state.record(by_name["customer_totals"], ok=False, skipped=why)
    assert state.skip_reason(by_name["assert_no_negative_totals"]) == "model orders_merge failed"


def test_a_failing_unit_test_stops_its_model_and_a_failed_seed_its_readers() -> None:
    by_name, state = fresh_state()
    state.record(by_name["customer_totals_follow_order_changes"], ok=False)
    assert state.skip_reason(by_name["customer_totals"]) == (
        "unit test customer_totals_follow_order_changes failed"
    )
    state.record(by_name["customers"], ok=False)
    relationships = next(s for s in by_name.values() if s.seeds == ("customers",))
    assert state.skip_reason(relationships) == "seed customers failed to load"
