"""dbt's node selection grammar over the model graph, row by row against dbt's documented
semantics (docs.getdbt.com/reference/node-selection: syntax, set operators, graph operators,
methods, state). No JVM.

The DAG (``a -> b``: b reads a's target):

    orders -> totals -> report <- enrich
    orders -> audit
    other
"""

import json
import shutil
from pathlib import Path

import pytest

from runner.artifacts import write_compiled
from runner.errors import ConfigError
from runner.project import load
from runner.selection import mentioned_names, select_models, select_names


def model(target: str, *reads: str, tags: str = "[]", key: str = "order_id") -> str:
    source = " JOIN ".join(f"{{{{ ref('{r}') }}}}" for r in reads) if reads else "{{ batch }}"
    return (
        f"{{{{ config(stream='orders', target='{target}', tags={tags}, unique_key='{key}') }}}}\n"
        f"SELECT * FROM {source};"
    )


MODELS = {
    "orders": model("s.orders", tags="['core']"),
    "totals": model("g.totals", "orders", key="customer_id"),
    "enrich": model("s.enrich", key="customer_id"),
    "report": model("g.report", "totals", "enrich", tags="['core', 'report']"),
    "audit": model("g.audit", "orders"),
    "other": model("s.other", tags="['misc']"),
}
ALL = set(MODELS)


@pytest.fixture
def root(project_factory) -> Path:
    return project_factory(MODELS)


@pytest.fixture
def project(root):
    return load(root)


# (selectors, exclude, expected): dbt's documented meaning of each selector on the DAG above
ROWS = [
    # methods
    (["orders"], None, {"orders"}),
    (["tag:core"], None, {"orders", "report"}),
    (["path:models/orders.sql"], None, {"orders"}),
    (["models/orders.sql"], None, {"orders"}),  # a value with '/' is a path (dbt's default)
    (["path:models"], None, ALL),  # a directory: everything under it
    (["path:models/o*.sql"], None, {"orders", "other"}),  # globs
    (["o*"], None, {"orders", "other"}),  # name globs
    (["config.unique_key:customer_id"], None, {"totals", "enrich"}),
    (["config.tags:misc"], None, {"other"}),  # a list config matches a member
    (["config.enabled:true"], None, ALL),
    # graph operators
    (["orders+"], None, {"orders", "totals", "report", "audit"}),
    (["+report"], None, {"orders", "totals", "enrich", "report"}),
    (["1+report"], None, {"totals", "enrich", "report"}),  # parents one generation up
    (["orders+1"], None, {"orders", "totals", "audit"}),  # children one generation down
    (["2+report"], None, {"orders", "totals", "enrich", "report"}),
    (["+totals+"], None, {"orders", "totals", "report"}),
    (["@totals"], None, {"orders", "totals", "report", "enrich"}),  # + parents of descendants
    (["tag:core+"], None, {"orders", "totals", "report", "audit"}),
    # set operators: space and repeated --select union, comma intersects
    (["report other"], None, {"report", "other"}),
    (["report", "other"], None, {"report", "other"}),
    (["+report,+audit"], None, {"orders"}),  # common ancestors
    (["orders+,tag:core"], None, {"orders", "report"}),
    (["tag:core,config.unique_key:order_id"], None, {"orders", "report"}),
    (["orders,orders"], None, {"orders"}),
    # --exclude, same grammar, removed from the selection
    (["orders+"], ["report"], {"orders", "totals", "audit"}),
    (None, ["tag:core"], {"totals", "enrich", "audit", "other"}),
    (["orders+"], ["totals+ audit"], {"orders"}),
    (["tag:core"], ["tag:core,report"], {"orders"}),
]


@pytest.mark.parametrize(("selectors", "exclude", "expected"), ROWS)
def test_dbt_selection_semantics(project, selectors, exclude, expected) -> None:
    selected = select_models(project, selectors, exclude=exclude)
    assert set(selected) == expected
    order = {name: i for i, name in enumerate(selected)}  # upstream always first
    for up, down in (("orders", "totals"), ("totals", "report"), ("enrich", "report")):
        if up in order and down in order:
            assert order[up] < order[down]


def test_no_selector_means_every_model(project) -> None:
    assert set(select_models(project, None)) == ALL


def test_order_is_stable(project) -> None:
    assert select_models(project, None) == select_models(load(project.root), None)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("nope", "--select nope: no model named 'nope'"),
        ("nope+", "no model named 'nope'"),
        ("tag:nope", "no model has tag 'nope'"),
        ("path:models/nope.sql", "no model file under"),
        ("zz*", "no model name matches"),
        ("config.optimise_every:2", "config\\(\\) has no key 'optimise_every'"),
        ("colour:red", "unknown selector method 'colour:'"),
        ("@1+orders", "'@' and a leading '\\+' cannot be combined"),
        ("state:changed", "needs --state|not a state selector"),
        ("test_type:unit", "selects tests, not models"),
    ],
)
def test_bad_selectors_are_config_errors(project, selector, message) -> None:
    with pytest.raises(ConfigError, match=message):
        select_models(project, [selector])


def test_a_comma_between_two_model_names_is_an_error_with_the_space_hint(project) -> None:
    # until this release `-s a,b` meant a union; in dbt (and now here) it intersects to nothing
    with pytest.raises(ConfigError) as caught:
        select_models(project, ["report,other"])
    assert str(caught.value).startswith(
        "--select report,other: a comma now intersects (dbt); to select both, separate with a "
        "space: -s 'report other'"
    )
    with pytest.raises(ConfigError, match="--exclude a,b|--exclude orders,other"):
        select_models(project, None, exclude=["orders,other"])
    with pytest.raises(ConfigError, match="-m 'orders other'"):
        select_models(project, None, models=["orders,other"])
    # parts with operators or methods intersect quietly, as in dbt
    assert select_models(project, ["orders+,other"]) == []


def test_model_option_and_select_union(project) -> None:
    assert set(select_models(project, ["other"], models=["audit"])) == {"audit", "other"}


def test_names_of_other_resources_match_no_model(project) -> None:
    assert select_models(project, ["customers orders"], elsewhere={"customers"}) == ["orders"]


def test_mentioned_names() -> None:
    assert mentioned_names(["+a,tag:x b+1", "@c path:models/d.sql"]) == {"a", "b", "c"}


def test_seed_names_union_intersect_exclude() -> None:
    seeds = ["customers", "countries", "rates"]
    assert select_names(seeds, ["c*"], exclude=["countries"]) == ["customers"]
    assert select_names(seeds, ["rates customers"]) == ["customers", "rates"]
    assert select_names(seeds, None) == sorted(seeds)
    with pytest.raises(ConfigError, match="-s 'customers rates'"):
        select_names(seeds, ["customers,rates"])
    with pytest.raises(ConfigError, match="no seed named 'nope'"):
        select_names(seeds, ["nope"])
    with pytest.raises(ConfigError, match="by name or glob only"):
        select_names(seeds, ["customers+"])


# -- state:modified -------------------------------------------------------------------------


def _state_of(root: Path, where: Path) -> Path:
    """The manifest of a compile of the project as it is now, kept in ``where``."""
    write_compiled(load(root))
    where.mkdir()
    shutil.copy(root / "target" / "compiled" / "manifest.json", where / "manifest.json")
    return where


def test_state_modified_against_a_previous_manifest(root, tmp_path) -> None:
    state = _state_of(root, tmp_path / "state")
    assert select_models(load(root), ["state:modified"], state=state) == []
    # change totals' SQL, orders' config (tags alone do not count, as in dbt), add a model
    models = root / "models"
    text = (models / "totals.sql").read_text()
    (models / "totals.sql").write_text(text.replace("SELECT *", "SELECT customer_id"))
    text = (models / "audit.sql").read_text()
    (models / "audit.sql").write_text(text.replace("tags=[]", "tags=['new_tag']"))
    (models / "fresh.sql").write_text(model("s.fresh"))
    project = load(root)
    assert set(select_models(project, ["state:modified"], state=state)) == {"totals", "fresh"}
    assert select_models(project, ["state:new"], state=state) == ["fresh"]
    assert set(select_models(project, ["state:modified+"], state=state)) == {
        "totals",
        "report",
        "fresh",
    }
    assert select_models(project, ["state:modified"], exclude=["fresh"], state=state) == ["totals"]
    assert select_models(project, ["state:modified,tag:core"], state=state) == []


def test_state_modified_sees_config_and_stream_changes(root, tmp_path) -> None:
    state = _state_of(root, tmp_path / "state")
    text = (root / "models" / "enrich.sql").read_text()
    (root / "models" / "enrich.sql").write_text(text.replace("customer_id", "order_id"))
    assert select_models(load(root), ["state:modified"], state=state) == ["enrich"]
    stream = root / "streams" / "orders.yml"
    stream.write_text(stream.read_text().replace("maxFilesPerTrigger: 1", "maxFilesPerTrigger: 2"))
    assert set(select_models(load(root), ["state:modified"], state=state)) == ALL


def test_state_needs_a_readable_current_manifest(project, tmp_path) -> None:
    with pytest.raises(ConfigError, match="needs --state DIR"):
        select_models(project, ["state:modified"])
    with pytest.raises(ConfigError, match="no manifest.json there"):
        select_models(project, ["state:modified"], state=tmp_path)
    old = tmp_path / "manifest.json"
    old.write_text(json.dumps({"manifest_version": 2, "models": {"orders": {"file": "x"}}}))
    with pytest.raises(ConfigError, match="from an older runner"):
        select_models(project, ["state:modified"], state=tmp_path)
