"""Issue 34's first acceptance test: in a fresh virtual environment outside the repository,
`pip install` of the project, `runner init`, `runner build`: tables written, tests passed,
run_results.json valid.

The virtualenv comes from the base Python (``python -m venv``), and pip installs the runner
with every dependency the way a user would (from pip's cache when the wheels are there: then
nothing is downloaded), without byte-compiling them. The venv's runner reads the shared jar
cache (RUNNER_JARS_DIR), so no jar is downloaded either. Minutes: pip copies pyspark (450 MB)
and the build starts a JVM.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from runner.run_results import shape_problems
from runner.spark.session.jars import default_cache_dir
from tests.conftest import REPO, Report

PACKAGE_FILES = ("pyproject.toml", "README.md", "runner")


def run(
    args: list[str | Path], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, check=False, env=env, cwd=cwd
    )


def test_pip_install_init_and_build_in_a_fresh_virtualenv(tmp_path: Path, report: Report) -> None:
    assert not tmp_path.is_relative_to(REPO)
    source = tmp_path / "source"  # a copy: pip's in-tree build writes build/ and *.egg-info
    source.mkdir()
    for name in PACKAGE_FILES:
        if (REPO / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(REPO / name, source / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, source / name)

    started = time.monotonic()
    venv = tmp_path / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    made = run([base_python, "-m", "venv", venv])
    assert made.returncode == 0, made.stderr
    venv_seconds = time.monotonic() - started
    started = time.monotonic()
    # --no-compile: pip would byte-compile pyspark's thousands of modules first (CPU the
    # suite does not need: Python compiles what it imports)
    pip = run(
        [venv / "bin" / "pip", "install", "--disable-pip-version-check", "--no-compile", source]
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    pip_seconds = time.monotonic() - started
    downloads = pip.stdout.count("Downloading ")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["RUNNER_JARS_DIR"] = str(default_cache_dir())
    runner = venv / "bin" / "runner"
    show_module = "import runner; print(runner.__file__)"  # outside the checkout: not its copy
    where = run([venv / "bin" / "python", "-c", show_module], env=env, cwd=tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout  # the installed copy, not the repo

    project = tmp_path / "shop"
    init = run([runner, "init", project], env=env)
    assert init.returncode == 0, init.stderr
    started = time.monotonic()
    build = run([runner, "build"], env=env, cwd=project)
    build_seconds = time.monotonic() - started
    assert build.returncode == 0, build.stdout + build.stderr
    assert "Done. PASS=5 FAIL=0 ERROR=0 SKIP=0 TOTAL=5" in build.stdout
    assert "PASS singular assert_no_negative_prices" in build.stdout
    assert "incubator" not in build.stderr  # Java's warning is dropped

    assert (project / "target/local/warehouse/silver/items/_delta_log").is_dir()
    results = json.loads((project / "target" / "run_results.json").read_text())
    assert shape_problems(results) == []
    statuses = {r["unique_id"]: r["status"] for r in results["results"]}
    assert statuses == {
        "unit_test.shop.items.items_keeps_the_newest_version": "pass",
        "model.shop.items": "success",
        "test.shop.unique_items_item_id": "pass",
        "test.shop.not_null_items_item_id": "pass",
        "test.shop.assert_no_negative_prices": "pass",
    }
    model = next(r for r in results["results"] if r["unique_id"] == "model.shop.items")
    assert model["adapter_response"]["rows_affected"] == 3
    assert model["adapter_response"]["rows_inserted"] == 2
    report(
        "fresh install",
        [
            f"python -m venv: {venv_seconds:.0f} s; pip install: {pip_seconds:.0f} s "
            f"({downloads} downloads); runner build: {build_seconds:.0f} s"
        ],
    )
