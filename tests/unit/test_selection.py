"""dbt-style selectors over the model graph. No JVM."""

import pytest

from runner.errors import ConfigError
from runner.project import load
from runner.selection import select_models


def model(target: str, reads: str = "", tags: str = "[]") -> str:
    source = f"{{{{ ref('{reads}') }}}}" if reads else "{{ batch }}"
    return (
        f"{{{{ config(stream='orders', target='{target}', tags={tags}) }}}}\n"
        f"SELECT * FROM {source};"
    )


@pytest.fixture
def project(project_factory):
    root = project_factory(
        {
            "orders": model("s.orders", tags="['core']"),
            "totals": model("g.totals", reads="orders"),
            "report": model("g.report", reads="totals", tags="['core', 'report']"),
            "other": model("s.other"),
        }
    )
    return load(root)


@pytest.mark.parametrize(
    ("selectors", "expected"),
    [
        (["orders"], ["orders"]),
        (["orders+"], ["orders", "totals", "report"]),
        (["+report"], ["orders", "totals", "report"]),
        (["+totals"], ["orders", "totals"]),
        (["totals+"], ["totals", "report"]),
        (["tag:core"], ["orders", "report"]),
        (["report,other"], ["other", "report"]),
        (["report other"], ["other", "report"]),
    ],
)
def test_selectors(project, selectors, expected) -> None:
    selected = select_models(project, selectors)
    assert sorted(selected) == sorted(expected)
    # upstream always comes before downstream
    order = {name: i for i, name in enumerate(selected)}
    for up, down in (("orders", "totals"), ("totals", "report")):
        if up in order and down in order:
            assert order[up] < order[down]


def test_no_selector_means_every_model(project) -> None:
    assert sorted(select_models(project, None)) == ["orders", "other", "report", "totals"]


@pytest.mark.parametrize("selector", ["nope", "tag:nope", "nope+"])
def test_unknown_selector_is_a_config_error(project, selector) -> None:
    with pytest.raises(ConfigError, match="--select"):
        select_models(project, [selector])
