"""Macro modules are built once per thread and reused: each render must still see its own
names (``this``, ``var``, ...), in every thread, and a macro file whose top level reads them is
built again for every render. No JVM."""

from __future__ import annotations

import threading
from pathlib import Path

import jinja2
import pytest

from runner import project as project_loader
from runner.errors import TemplateError
from runner.model_sql import compile_batch
from runner.templating.environment import TemplateEnvironment
from runner.templating.macro_modules import defines_only_macros

HEADER = "{{{{ config(stream='orders', target='silver.{name}', unique_key='order_id') }}}}\n"


def _tree(text: str) -> jinja2.nodes.Template:
    return jinja2.Environment().parse(text)


def test_only_files_that_just_define_macros_are_built_once() -> None:
    assert defines_only_macros(_tree("-- doc\n{% macro a() %}{{ this }}{% endmacro %}\n{# c #}\n"))
    assert not defines_only_macros(_tree("{% set p = var('p') %}{% macro a() %}{% endmacro %}"))
    assert not defines_only_macros(_tree("{{ this }}{% macro a() %}{% endmacro %}"))
    assert not defines_only_macros(_tree("{% import 'x' as x %}{% macro a() %}{% endmacro %}"))


def test_each_render_sees_its_own_names(project_factory) -> None:
    macro = "{% macro target_of() %}{{ this }}/{{ batch_id }}{% endmacro %}"
    models = {name: HEADER.format(name=name) + "SELECT '{{ target_of() }}';" for name in "ab"}
    project = project_loader.load(project_factory(models, macros={"where": macro}))
    for batch_id in (0, 3):
        for name in "ab":
            (statement,) = compile_batch(project, project.model(name), batch_id)
            assert statement.sql == f"SELECT 'silver.{name}/{batch_id}'"


def test_a_file_whose_top_level_reads_names_is_built_for_every_render(project_factory) -> None:
    macro = "{% set prefix = this ~ ':' %}{% macro tagged(x) %}{{ prefix }}{{ x }}{% endmacro %}"
    models = {name: HEADER.format(name=name) + "SELECT '{{ tagged(1) }}';" for name in "ab"}
    project = project_loader.load(project_factory(models, macros={"tag": macro}))
    assert compile_batch(project, project.model("a"), 0)[0].sql == "SELECT 'silver.a:1'"
    assert compile_batch(project, project.model("b"), 0)[0].sql == "SELECT 'silver.b:1'"


def test_threads_render_with_their_own_names(tmp_path: Path) -> None:
    (tmp_path / "slow.sql").write_text(
        "{% macro show() %}{% for _ in range(200) %}{{ who }}{% endfor %}{% endmacro %}"
    )
    env = TemplateEnvironment([tmp_path / "slow.sql"])
    results: dict[str, set[str]] = {}

    def render(who: str) -> None:
        results[who] = {env.render_macro("show", {"who": who}) for _ in range(50)}

    threads = [threading.Thread(target=render, args=(who,)) for who in "xyz"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {who: {who * 200} for who in "xyz"}


def test_an_edited_macro_file_is_read_again_in_the_same_process(tmp_path: Path) -> None:
    """A macro file's outline (its macros, whether it defines only macros) is kept per process
    by file and text: an edit, a new top level or a syntax error is seen at the next load."""
    file = tmp_path / "m.sql"
    file.write_text("{% macro first() %}1{% endmacro %}")
    assert list(TemplateEnvironment([file]).macro_names).count("first") == 1
    file.write_text("{% macro second() %}{{ this }}{% endmacro %}")
    names = TemplateEnvironment([file]).macro_names
    assert "second" in names and "first" not in names
    file.write_text("{% set p = this %}{% macro second() %}{{ p }}{% endmacro %}")
    env = TemplateEnvironment([file])
    assert env.render_macro("second", {"this": "silver.a"}) == "silver.a"
    assert env.render_macro("second", {"this": "silver.b"}) == "silver.b"  # built again
    file.write_text("{% macro broken( %}")
    with pytest.raises(TemplateError, match="Jinja syntax error in macro file") as raised:
        TemplateEnvironment([file])
    assert raised.value.file == file
