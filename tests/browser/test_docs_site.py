"""The generated docs page in a real browser: Debian's chromium, headless, driven by Playwright
(the wheel ships its driver; the browser is /usr/bin/chromium, installed by scripts/bootstrap.sh).
The page is opened from file://, as a reader would open it. No JVM.

One chromium serves the module (a start costs seconds); each test gets a fresh page and fails if
the page raised a JavaScript error."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runner.backfill_record import backfill_record, write_backfill_record
from runner.backfill_report import BackfillDiff, RowSample, SourceGap
from runner.docs_site import generate_docs
from runner.project import load
from tests.unit.test_lineage import EXAMPLE_EDGES

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = REPO / "target" / "screenshots" / "docs-site.png"
# The flags that work on this kind of machine (closed network, root): see docs/docs-site.md.
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


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/bootstrap.sh (it installs chromium)")
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="runner-docs-chromium-")
    try:
        with sync_playwright() as driver:
            context = driver.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000},
            )
            yield context
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def docs_url(example_project: Path) -> str:
    """The example's docs page; customer_totals has a tag (for search to find) and an
    expectation that drops rows (which adds no lineage edge)."""
    model = example_project / "models" / "customer_totals.sql"
    extra = (
        "    tags=['finance'],\n"
        "    expectations={'known_customer': {'expect': 'customer_id IS NOT NULL', "
        "'on_violation': 'drop'}},\n"
    )
    text = model.read_text().replace(
        "unique_key='customer_id',\n", f"unique_key='customer_id',\n{extra}", 1
    )
    assert extra in text
    model.write_text(text)
    (example_project / "tests").mkdir()  # the example's singular test: a node of kind test
    shutil.copy(REPO / "tests" / "assert_no_negative_totals.sql", example_project / "tests")
    return generate_docs(load(example_project)).as_uri()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    errors: list[str] = []
    page = browser.new_page()
    page.set_default_timeout(10_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not errors, errors


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("window.cy && window.cy.nodes().length > 0")


def shown(page: Page) -> str:
    """The details pane's title, once the pane shows the node the URL's hash names: the page
    redraws it on ``hashchange``, which fires after the URL has changed (so ``wait_for_url``
    alone can still read the previous node's title)."""
    page.wait_for_function(
        "document.getElementById('details').dataset.node"
        " === decodeURIComponent(window.location.hash.slice(1))"
    )
    return page.inner_text("#details-title")


def test_the_graph_shows_the_lineage_and_a_click_opens_a_model(page: Page, docs_url: str) -> None:
    open_page(page, docs_url)
    nodes = set(page.evaluate("window.cy.nodes().map(n => n.id())"))
    edges = {
        tuple(e)
        for e in page.evaluate(
            "window.cy.edges().map(e => [e.source().id(), e.target().id(), e.data('kind')])"
        )
    }
    assert edges == EXAMPLE_EDGES
    assert nodes == {end for edge in EXAMPLE_EDGES for end in edge[:2]}
    assert shown(page) == "project orders_demo"

    # A real click on the model's box in the graph canvas.
    x, y = page.evaluate(
        "(() => { const p = window.cy.getElementById('model:orders_merge')"
        ".renderedPosition(); const r = document.getElementById('graph')"
        ".getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; })()"
    )
    page.mouse.click(x, y)
    page.wait_for_selector("#compiled-batch pre")
    assert shown(page) == "model orders_merge"
    assert page.url.endswith("#model:orders_merge")
    batch_sql = page.inner_text("#compiled-batch")
    assert "MERGE INTO silver.orders AS t" in batch_sql
    assert "CREATE OR REPLACE TEMPORARY VIEW orders_latest" in batch_sql
    assert "OPTIMIZE silver.orders" in page.inner_text("#compiled-maintenance")
    assert "unique on order_id" in page.inner_text("#tests")
    assert page.inner_text("#description").startswith("The latest state of each order")

    # The two alternatives of setup[1] say when each runs, as `runner compile` does.
    heads = page.locator("#compiled-setup .stmt-head").all_inner_texts()
    setup_1 = [h for h in heads if h.startswith("setup[1]")]
    assert len(setup_1) == 2
    assert "when no Delta table exists at the target's location" in setup_1[0]
    assert "when a Delta table exists there: register it under its name" in setup_1[1]

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_a_deep_link_survives_a_reload_and_links_lead_up_and_downstream(
    page: Page, docs_url: str
) -> None:
    open_page(page, f"{docs_url}#model:customer_totals")
    assert shown(page) == "model customer_totals"
    assert page.evaluate("window.cy.$(':selected').map(n => n.id())") == ["model:customer_totals"]
    tests = page.inner_text("#tests")
    assert "expectation known_customer: customer_id IS NOT NULL (on violation: drop)" in tests
    page.reload()
    page.wait_for_selector("#details-title")
    assert shown(page) == "model customer_totals"

    page.click("#upstream-models a")  # customer_totals reads orders_merge's Change Data Feed
    page.wait_for_url("**#model:orders_merge")
    assert shown(page) == "model orders_merge"
    assert page.inner_text("#model-columns").count("The order's key, one row per order.") == 1
    page.click("#downstream-models a")
    page.wait_for_url("**#model:customer_totals")
    assert shown(page) == "model customer_totals"

    page.go_back()
    page.wait_for_url("**#model:orders_merge")
    assert shown(page) == "model orders_merge"
    page.go_forward()
    page.wait_for_url("**#model:customer_totals")
    assert shown(page) == "model customer_totals"

    # from a model to its stream, the stream's source, and back through the lineage links
    page.click("#model-facts a[href='#stream:order_changes']")
    page.wait_for_url("**#stream:order_changes")
    assert "orders_merge" in page.inner_text("#stream-facts")  # the model whose target it reads
    page.click("#upstream a[href='#table:silver.orders']")
    page.wait_for_url("**#table:silver.orders")
    assert "orders_merge" in page.inner_text("#table-facts")


@pytest.mark.parametrize(
    ("query", "models"),
    [
        ("orders_kafka", ["orders_kafka_merge"]),  # a name
        ("late events ignored", ["orders_merge"]),  # its description
        ("total_amount", ["customer_totals"]),  # a column
        ("finance", ["customer_totals"]),  # a tag
    ],
)
def test_search_filters_the_list_and_opens_a_model(
    page: Page, docs_url: str, query: str, models: list[str]
) -> None:
    open_page(page, docs_url)
    assert len(page.locator("#node-list a[data-node^='model:']").all()) == 3
    page.fill("#search", query)
    listed = page.locator("#node-list a[data-node^='model:']").all_inner_texts()
    assert listed == models
    page.press("#search", "Enter")
    page.wait_for_selector("#details-title")
    first = page.locator("#node-list a").first.get_attribute("data-node")
    page.wait_for_url(f"**#{first}")
    page.fill("#search", "no such thing anywhere")
    assert page.inner_text("#no-match") == 'nothing matches "no such thing anywhere"'


# Every kind of node has a page; each line: the address, its title, and text it must show.
NODE_PAGES = [
    (
        "seed:customers",
        "seed customers",
        ["The shop's customers", "seeds/customers.csv", "3", "tier"],
    ),
    (
        "stream:orders",
        "stream orders",
        ["Order events from the shop", "target/landing/orders", "DECIMAL(10,2)"],
    ),
    ("stream:orders_kafka", "stream orders_kafka", ["localhost:9092", "order_id, updated_at, op"]),
    ("source:kafka:orders", "source kafka:orders", ["localhost:9092", "stream:orders_kafka"]),
    (
        "source:json:target/landing/orders",
        "source json:target/landing/orders",
        ["target/landing/orders"],
    ),
    (
        "quarantine:quarantine.orders_merge",
        "quarantine table quarantine.orders_merge",
        ["lines that do not parse", "target/local/warehouse/_quarantine/orders_merge", "reason"],
    ),
    (
        "table:silver.orders",
        "table silver.orders",
        ["The order's key", "delta.enableChangeDataFeed"],
    ),
    ("table:ref.customers", "table ref.customers", ["loaded by", "signed_up"]),
    (
        "test:relationships_orders_merge_customer_id",
        "test relationships_orders_merge_customer_id",
        ["relationships on column customer_id", "ref.customers", "models/schema.yml:14"],
    ),
    (
        "test:assert_no_negative_totals",
        "test assert_no_negative_totals",
        ["singular test", "tests/assert_no_negative_totals.sql", "FROM gold.customer_totals"],
    ),
    (
        "unit_test:orders_merge_deletes_an_order",
        "unit test orders_merge_deletes_an_order",
        ["op D removes o3", "models/unit_tests.yml"],
    ),
    ("model:nothing_here", "no node model:nothing_here", ["pick one in the list"]),
]


@pytest.mark.parametrize(("node", "title", "texts"), NODE_PAGES, ids=[n[0] for n in NODE_PAGES])
def test_every_node_kind_has_a_page(
    page: Page, docs_url: str, node: str, title: str, texts: list[str]
) -> None:
    open_page(page, f"{docs_url}#{node}")
    assert shown(page) == title
    details = (
        page.inner_text("#details")
        + " "
        + " ".join(
            page.locator("#details a").evaluate_all(
                "links => links.map(a => a.getAttribute('href'))"
            )
        )
    )
    for text in texts:
        assert text in details, f"{node}: {text!r} not on its page"
    if not title.startswith("no node"):
        current = page.locator("#node-list a.current").get_attribute("data-node")
        assert current == node  # the list marks the open node


def test_a_model_page_shows_its_last_backfill(page: Page, example_project: Path) -> None:
    """A report as `runner backfill` records it (written here: no Spark), a dry run with a gap."""
    project = load(example_project)
    diff = BackfillDiff(
        model="orders_merge",
        live_table="silver.orders",
        shadow_table="silver.orders__backfill",
        key=("order_id",),
        live_rows=4,
        shadow_rows=3,
        only_live=1,
        only_shadow=0,
        changed=2,
        columns={"status": 2, "customer_id": 1},
        samples=(
            RowSample("only_live", {"order_id": "o7"}, {"status": "created"}, {}),
            RowSample("changed", {"order_id": "o2"}, {"status": "paid"}, {"status": "shipped"}),
        ),
        shadow_batches=5,
        compared=("customer_id", "status"),
    )
    gap = SourceGap(
        True, ("target/landing/orders/000.json",), "1 of the 6 file(s) the live model read are gone"
    )
    ran_at = datetime(2026, 11, 25, 15, 50, 2, tzinfo=UTC)
    write_backfill_record(project, backfill_record(diff, gap, False, None, ran_at))
    url = generate_docs(project).as_uri()

    open_page(page, f"{url}#model:orders_merge")
    assert shown(page) == "model orders_merge"
    assert page.inner_text("#backfill-run").startswith(
        "dry run, 2026-11-25T15:50:02Z: silver.orders (live) vs silver.orders__backfill (shadow)"
    )
    counts = dict(
        zip(
            page.locator("#backfill-counts th").all_inner_texts(),
            page.locator("#backfill-counts td").all_inner_texts(),
            strict=True,
        )
    )
    assert counts == {
        "rows in live": "4",
        "rows in shadow": "3",
        "only in live": "1",
        "only in shadow": "0",
        "changed": "2",
    }
    assert page.locator("#backfill-columns th").all_inner_texts() == ["status", "customer_id"]
    samples = page.inner_text("#backfill-samples")
    assert "order_id=o7" in samples and "status=paid" in samples and "status=shipped" in samples
    assert page.inner_text("#backfill-gap") == (
        "source gap: 1 of the 6 file(s) the live model read are gone: "
        "target/landing/orders/000.json"
    )
    assert "--apply would insert 0, update 2, keep the 1 row(s) only in live" in page.inner_text(
        "#backfill-apply"
    )

    page.goto(f"{url}#model:customer_totals")  # never backfilled: no section
    page.wait_for_selector("#compiled-batch")
    assert shown(page) == "model customer_totals"
    assert page.locator("#backfill").count() == 0
