"""JUnit XML, the test-report format CI systems read: one ``<testcase>`` per test, model or
seed, written in one place for ``runner test``, ``run`` and ``build``. Pure Python."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Outcome = Literal["pass", "failure", "error", "skipped"]


@dataclass(frozen=True)
class JunitCase:
    """One ``<testcase>``: a failure, error or skip carries its message and, as text, what
    there is to read (failing rows, a row diff, the error)."""

    classname: str
    name: str
    seconds: float
    outcome: Outcome = "pass"
    message: str = ""
    text: str = ""


def write_junit(cases: list[JunitCase], path: Path, suite: str) -> None:
    """Write ``cases`` as one ``<testsuite>`` named ``suite`` (parent folders created)."""
    root = ET.Element("testsuites")
    element = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c.outcome == "failure" for c in cases)),
        errors=str(sum(c.outcome == "error" for c in cases)),
        skipped=str(sum(c.outcome == "skipped" for c in cases)),
        time=f"{sum(c.seconds for c in cases):.3f}",
    )
    for case in cases:
        entry = ET.SubElement(
            element,
            "testcase",
            classname=case.classname,
            name=case.name,
            time=f"{case.seconds:.3f}",
        )
        if case.outcome == "skipped":
            ET.SubElement(entry, "skipped", message=case.message)
        elif case.outcome != "pass":
            outcome = ET.SubElement(entry, case.outcome, message=case.message, type=case.outcome)
            outcome.text = case.text or case.message
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
