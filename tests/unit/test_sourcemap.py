import jinja2
import pytest

from runner.templating.sourcemap import add_line_markers, strip_line_markers

TEMPLATES = [
    "SELECT 1\nFROM t\n",
    "{% if x %}\nSELECT 1\n{% endif %}\nSELECT 2",
    "SELECT a,\n  {%- for c in cols %}\n  {{ c }}{{ ',' if not loop.last }}\n"
    "  {%- endfor %}\nFROM t",
    "SELECT 1   \n{%- if x -%}\n\n  SELECT 2  \n{%- endif %}\n\nEND",
    "a {{ x }}\n{# note\n spanning #}\nb\n\n\nc",
    "{% raw %}{{ not jinja }}{% endraw %}\nSELECT 1",
    "{%- set y = 1 -%}\n   \n  value {{ y }}  \n   {{- ' tail' }}\n",
    # '}}' closing a nested dict, or inside a string, does not end the tag
    "{{ {'a': {'b': 1}}['a']['b']\n }} x\n{{ '}}' }}\n{% if '%}' %}y{% endif %}\n",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_markers_do_not_change_rendered_output(template: str) -> None:
    env = jinja2.Environment(keep_trailing_newline=True)
    context = {"x": True, "cols": ["c1", "c2"]}
    plain = env.from_string(template).render(context)
    marked = strip_line_markers(env.from_string(add_line_markers(template)).render(context))
    assert marked.text == plain


def test_rendered_lines_map_to_template_lines() -> None:
    template = (
        "{{ config(a=1) }}\n"  # 1
        "\n"  # 2
        "SELECT *\n"  # 3
        "{% if flag %}\n"  # 4
        "FROM wide\n"  # 5
        "{% endif %}\n"  # 6
        "{{ expand() }};\n"  # 7
        "MERGE INTO t\n"  # 8
    )
    env = jinja2.Environment(keep_trailing_newline=True)
    context = {"config": lambda **_: "", "flag": True, "expand": lambda: "x\ny\nz"}
    rendered = strip_line_markers(env.from_string(add_line_markers(template)).render(context))
    lines = rendered.text.split("\n")
    by_text = {text: rendered.source_line(i + 1) for i, text in enumerate(lines) if text}
    assert by_text["SELECT *"] == 3
    assert by_text["FROM wide"] == 5
    # a macro's multi-line output belongs to the line that calls it
    assert by_text["x"] == by_text["y"] == by_text["z;"] == 7
    assert by_text["MERGE INTO t"] == 8


def test_a_nested_dict_closing_with_two_braces_stays_inside_its_tag() -> None:
    """``config(expectations={'x': {...}},`` ends a line with ``}},`` inside ``{{ config(``:
    no marker may land there (Jinja would reject it), and the lines after still map."""
    template = (
        "{{ config(\n"  # 1
        "    expectations={'x': {'expect': 'a > 0', 'on_violation': 'drop'}},\n"  # 2
        "    tags=['t'],\n"  # 3
        ") }}\n"  # 4
        "SELECT *\n"  # 5
        "FROM t\n"  # 6
    )
    env = jinja2.Environment(keep_trailing_newline=True)
    rendered = strip_line_markers(
        env.from_string(add_line_markers(template)).render({"config": lambda **_: ""})
    )
    lines = rendered.text.split("\n")
    assert {text: rendered.source_line(i + 1) for i, text in enumerate(lines) if text} == {
        "SELECT *": 5,
        "FROM t": 6,
    }
