"""The generated docs page in a real browser: Debian's chromium, headless, driven by Playwright
(the wheel ships its driver; the browser is /usr/bin/chromium, installed by scripts/bootstrap.sh).
The page is opened from file://, as a reader would open it. No JVM."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from runner.docs_site import generate_docs
from runner.project import load
from tests.unit.test_lineage import EXAMPLE_EDGES

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = REPO / "target" / "screenshots" / "docs-site.png"
# The flags that work on this kind of machine (closed network, root): see the README.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


def test_docs_page_shows_the_lineage_and_a_models_compiled_sql(example_project: Path) -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/bootstrap.sh (it installs chromium)")
    from playwright.sync_api import sync_playwright

    (example_project / "tests").mkdir()  # the example's singular test: a node of kind test
    shutil.copy(REPO / "tests" / "assert_no_negative_totals.sql", example_project / "tests")
    index = generate_docs(load(example_project))
    profile = tempfile.mkdtemp(prefix="runner-docs-chromium-")
    errors: list[str] = []
    try:
        with sync_playwright() as driver:
            context = driver.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000},
            )
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(index.as_uri())
            page.wait_for_function("window.cy && window.cy.nodes().length > 0")

            nodes = set(page.evaluate("window.cy.nodes().map(n => n.id())"))
            edges = {
                tuple(e)
                for e in page.evaluate(
                    "window.cy.edges().map(e => [e.source().id(), e.target().id(), e.data('kind')])"
                )
            }
            assert edges == EXAMPLE_EDGES
            assert nodes == {end for edge in EXAMPLE_EDGES for end in edge[:2]}

            # A real click on the model's box in the graph canvas.
            x, y = page.evaluate(
                "(() => { const p = window.cy.getElementById('model:orders_merge')"
                ".renderedPosition(); const r = document.getElementById('graph')"
                ".getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; })()"
            )
            page.mouse.click(x, y)
            page.wait_for_selector("#compiled-batch pre")
            assert page.inner_text("#details-title") == "model orders_merge"
            batch_sql = page.inner_text("#compiled-batch")
            assert "MERGE INTO silver.orders AS t" in batch_sql
            assert "CREATE OR REPLACE TEMPORARY VIEW orders_latest" in batch_sql
            assert "OPTIMIZE silver.orders" in page.inner_text("#compiled-maintenance")
            assert "unique on order_id" in page.inner_text("#tests")
            description = page.inner_text("#model-description")  # from models/docs.yml
            assert description.startswith("The latest state of each order")

            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))

            page.evaluate("window.cy.getElementById('test:assert_no_negative_totals').emit('tap')")
            page.wait_for_function(
                "document.getElementById('details-title').textContent.startsWith('test')"
            )
            assert "FROM gold.customer_totals" in page.inner_text("#details")  # its SQL
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert not errors, errors
    assert SCREENSHOT.stat().st_size > 10_000
