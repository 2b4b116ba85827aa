// The runner's docs page: a list of every node with a search box, a lineage graph (Cytoscape.js
// + dagre) and a page per node, addressed by the URL's hash (#model:orders_merge).
// All data is in window.RUNNER_DOCS, written by `runner docs generate`; nothing is fetched.
"use strict";

const DOCS = window.RUNNER_DOCS;
const COLORS = {
  source: "#8d6e63", stream: "#1e88e5", model: "#43a047",
  table: "#546e7a", quarantine: "#e53935", seed: "#fb8c00",
};
const EDGE_STYLES = {
  change_data_feed: { color: "#8e24aa", style: "solid", label: "CDF" },
  quarantines: { color: "#e53935", style: "dashed", label: "bad records" },
  test_reads: { color: "#9e9e9e", style: "dotted", label: "tests read" },
  ref: { color: "#43a047", style: "solid", label: "ref()" },
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  return node;
}

function label(node) {
  if (node.kind === "stream") return `${node.name}\n(${node.detail})`;
  if (node.kind === "source") return node.name.replace(":", "\n");
  return node.name;
}

function buildGraph() {
  const elements = [];
  for (const node of DOCS.lineage.nodes) {
    elements.push({ group: "nodes", data: { id: node.id, kind: node.kind, name: node.name, label: label(node) } });
  }
  for (const edge of DOCS.lineage.edges) {
    const look = EDGE_STYLES[edge.kind] || { color: "#90a4ae", style: "solid", label: "" };
    elements.push({
      group: "edges",
      data: {
        id: `${edge.source}->${edge.target}`, source: edge.source, target: edge.target,
        kind: edge.kind, color: look.color, line: look.style, label: look.label,
      },
    });
  }
  const cy = cytoscape({
    container: document.getElementById("graph"),
    elements,
    wheelSensitivity: 0.2,
    style: [
      {
        selector: "node",
        style: {
          shape: "round-rectangle", label: "data(label)", "text-wrap": "wrap",
          "text-valign": "center", "text-halign": "center", color: "#fff",
          "font-size": 11, "font-family": "system-ui, sans-serif",
          width: "label", height: "label", padding: "10px",
          "background-color": (n) => COLORS[n.data("kind")] || "#777",
        },
      },
      { selector: "node[kind = 'model']", style: { "font-weight": "bold", "font-size": 13 } },
      { selector: "node[kind = 'stream']", style: { shape: "ellipse" } },
      { selector: "node[kind = 'source'], node[kind = 'seed']", style: { shape: "cut-rectangle" } },
      { selector: "node[kind = 'table'], node[kind = 'quarantine']", style: { shape: "barrel" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#ffd600" } },
      { selector: "node.faded", style: { opacity: 0.25 } },
      {
        selector: "edge",
        style: {
          width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle",
          "line-color": "data(color)", "target-arrow-color": "data(color)",
          "line-style": "data(line)", label: "data(label)", "font-size": 9,
          color: "#555", "text-background-color": "#fff", "text-background-opacity": 1,
        },
      },
    ],
    layout: { name: "dagre", rankDir: "LR", nodeSep: 25, rankSep: 70, padding: 30 },
  });
  cy.on("tap", "node", (event) => { window.location.hash = event.target.id(); });
  return cy;
}

// -- the nodes of the page: the lineage's, and each model's tests -----------------------------

const KINDS = [
  ["model", "Models"], ["stream", "Streams"], ["source", "Sources"], ["seed", "Seeds"],
  ["table", "Tables"], ["quarantine", "Quarantine tables"], ["test", "Data tests"],
  ["unit_test", "Unit tests"],
];
const NODES = new Map(); // id -> { id, kind, name, detail, model?, test? }

function collectNodes() {
  for (const node of DOCS.lineage.nodes) NODES.set(node.id, node);
  for (const [model, m] of Object.entries(DOCS.models)) {
    for (const t of m.data_tests) NODES.set(`test:${t.name}`, { id: `test:${t.name}`, kind: "test", name: t.name, model, test: t });
    for (const t of m.unit_tests) NODES.set(`unit_test:${t.name}`, { id: `unit_test:${t.name}`, kind: "unit_test", name: t.name, model, test: t });
  }
  // singular tests (tests/*.sql) are lineage nodes already: add what they declare
  for (const [name, t] of Object.entries(DOCS.tests || {})) {
    const id = `test:${name}`;
    NODES.set(id, { ...(NODES.get(id) || { id, kind: "test", name }), singular: t });
  }
}

// A column list as [name, type] pairs: a DDL string ("a STRING, b DECIMAL(10,2)") or a list.
function columnsOf(ddl) {
  if (!ddl) return [];
  const parts = [];
  if (Array.isArray(ddl)) parts.push(...ddl);
  else {
    let depth = 0, current = "";
    for (const ch of ddl) {
      if (ch === "(" || ch === "<") depth += 1;
      if (ch === ")" || ch === ">") depth -= 1;
      if (ch === "," && depth === 0) { parts.push(current); current = ""; } else current += ch;
    }
    parts.push(current);
  }
  return parts.map((p) => p.trim()).filter(Boolean).map((p) => {
    const [name, ...type] = p.split(/\s+/);
    return [name.replace(/`/g, ""), type.join(" ")];
  });
}

function seedOfTable(table) {
  return Object.entries(DOCS.seeds).find(([, s]) => s.table === table);
}

function describedColumns(model) {
  return (DOCS.models[model] || {}).columns || {};
}

// The text search matches: names, descriptions, columns (and their descriptions), tags.
function searchText(node) {
  const words = [node.name, node.kind, node.detail || ""];
  if (node.kind === "model") {
    const m = DOCS.models[node.name];
    const target = DOCS.targets[m.target] || {};
    words.push(m.description, m.stream, m.target, m.file, ...(m.config.tags || []));
    for (const [name] of columnsOf(target.columns)) words.push(name);
    for (const c of Object.values(m.columns)) words.push(c.name, c.description);
  } else if (node.kind === "stream") {
    const s = DOCS.streams[node.name];
    words.push(s.description, s.format, s.path || "", s.table || "", s.ref || "");
    if (s.kafka) words.push(...s.kafka.topics, s.kafka.pattern || "");
    for (const [name] of columnsOf(s.schema)) words.push(name);
  } else if (node.kind === "seed") {
    const s = DOCS.seeds[node.name];
    words.push(s.description, s.table, ...columnsOf(s.columns).map(([name]) => name));
  } else if (node.kind === "table") {
    const target = DOCS.targets[node.name];
    if (target) {
      words.push(target.model, ...columnsOf(target.columns).map(([name]) => name));
      for (const c of Object.values(describedColumns(target.model))) words.push(c.description);
    }
  } else if (node.kind === "quarantine") {
    const q = DOCS.quarantine[node.name];
    if (q) words.push(q.model, ...q.receives);
  } else if (node.test) {
    words.push(node.model, node.test.kind || "", node.test.column || "", node.test.description || "");
  }
  return words.filter(Boolean).join(" ").toLowerCase();
}

// -- the side panel: every node by kind, filtered by the search box ---------------------------

function matches(query) {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const found = new Set();
  for (const node of NODES.values()) {
    const text = searchText(node);
    if (terms.every((term) => text.includes(term))) found.add(node.id);
  }
  return found;
}

function renderList(query) {
  const found = matches(query);
  const list = document.getElementById("node-list");
  list.replaceChildren();
  for (const [kind, title] of KINDS) {
    const shown = [...NODES.values()].filter((n) => n.kind === kind && found.has(n.id));
    if (!shown.length) continue;
    const items = el("ul", {});
    for (const node of shown.sort((a, b) => a.name.localeCompare(b.name))) {
      items.append(el("li", {}, link(node.id)));
    }
    list.append(el("h4", {}, `${title} (${shown.length})`), items);
  }
  if (!found.size) list.append(el("p", { class: "hint", id: "no-match" }, `nothing matches "${query}"`));
  if (window.cy) window.cy.nodes().forEach((n) => n.toggleClass("faded", Boolean(query) && !found.has(n.id())));
  markCurrent();
  return found;
}

function markCurrent() {
  for (const a of document.querySelectorAll("#node-list a")) {
    a.classList.toggle("current", a.dataset.node === currentId());
  }
}

// -- routing: the URL's hash names the node shown (#model:orders_merge), so links, reloads and
// back/forward all work -----------------------------------------------------------------------

function currentId() {
  try {
    return decodeURIComponent(window.location.hash.slice(1));
  } catch (error) {
    return window.location.hash.slice(1);
  }
}

function link(id, text) {
  const node = NODES.get(id);
  const shown = text || (node ? node.name : id.slice(id.indexOf(":") + 1));
  return el("a", { href: `#${id}`, class: `node-link k-text-${node ? node.kind : "none"}`, "data-node": id }, shown);
}

function links(ids, none) {
  if (!ids.length) return el("span", { class: "hint" }, none || "none");
  const span = el("span", {});
  ids.forEach((id, i) => span.append(...(i ? [", "] : []), link(id)));
  return span;
}

function route() {
  const id = currentId();
  const pane = document.getElementById("details");
  pane.replaceChildren(...(id ? nodePage(id) : overview()).filter(Boolean));
  pane.dataset.node = id; // what the pane shows: the page redraws on "hashchange", after the URL changed
  pane.scrollTop = 0;
  const node = NODES.get(id);
  document.title = node ? `${node.name} (${node.kind}): ${DOCS.project} docs` : `${DOCS.project} docs`;
  window.cy.nodes().unselect();
  if (node && window.cy.getElementById(id).length) window.cy.getElementById(id).select();
  markCurrent();
}

// -- the details pane: one page per kind ------------------------------------------------------

function section(title, ...children) {
  return el("section", { class: "block" }, el("h3", {}, title), ...children);
}

function title(kind, name) {
  return el("h2", { id: "details-title" }, `${kind.replace("_", " ")} ${name}`);
}

function description(text) {
  return text ? el("p", { class: "description", id: "description" }, text) : el("p", { class: "hint", id: "description" }, "no description");
}

// Rows of [label, value]; values are text or elements; empty values are left out.
function facts(id, rows) {
  const table = el("table", { class: "kv", id });
  for (const [key, value] of rows) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) continue;
    table.append(el("tr", {}, el("th", {}, key), el("td", {}, typeof value === "object" && !(value instanceof Node) ? JSON.stringify(value) : value instanceof Node ? value : String(value))));
  }
  return table;
}

function keyValues(values) {
  return facts(null, Object.entries(values).filter(([, v]) => !(v && typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length)));
}

function columnTable(id, columns, descriptions) {
  const table = el("table", { class: "kv", id });
  if (!columns.length) return el("p", { class: "hint", id }, "columns unknown");
  for (const [name, type] of columns) {
    const text = ((descriptions || {})[name] || {}).description || "";
    table.append(el("tr", {}, el("th", {}, name), el("td", {}, type), el("td", { class: "description" }, text)));
  }
  return table;
}

function sqlBlocks(id, statements, empty) {
  const box = el("div", { id });
  if (!statements.length) box.append(el("p", { class: "hint" }, empty));
  for (const s of statements) {
    const when = s.when ? el("span", { class: "when" }, s.when) : null;
    box.append(el("div", { class: "stmt-head" }, `${s.label} ${s.keyword}  `, when, when ? "  " : null, el("span", { class: "where" }, s.where)));
    box.append(el("pre", { class: "sql" }, `${s.sql};`));
  }
  return box;
}

// The nodes next to this one in the lineage, both ways, with the edge's kind.
function neighbours(id) {
  const up = el("ul", { id: "upstream" });
  const down = el("ul", { id: "downstream" });
  for (const edge of DOCS.lineage.edges) {
    if (edge.target === id) up.append(el("li", {}, link(edge.source), el("span", { class: "where" }, ` ${edge.kind}`)));
    if (edge.source === id) down.append(el("li", {}, link(edge.target), el("span", { class: "where" }, ` ${edge.kind}`)));
  }
  if (!up.children.length) up.append(el("li", { class: "hint" }, "none"));
  if (!down.children.length) down.append(el("li", { class: "hint" }, "none"));
  return section("Lineage", el("div", { class: "neighbours" }, el("div", {}, el("h4", {}, "upstream"), up), el("div", {}, el("h4", {}, "downstream"), down)));
}

function downstreamModels(name) {
  return Object.entries(DOCS.models).filter(([, m]) => m.depends_on.models.includes(name)).map(([other]) => `model:${other}`);
}

function testsOf(name) {
  return [...NODES.values()].filter((n) => n.test && n.model === name);
}

function showModel(name) {
  const m = DOCS.models[name];
  const quarantine = `quarantine:quarantine.${name}`;
  const tests = el("ul", { id: "tests" });
  for (const node of testsOf(name)) {
    const t = node.test;
    const what = node.kind === "test" ? `${t.kind}${t.column ? ` on ${t.column}` : ""}` : `unit test (${t.batches} batches): ${t.description}`;
    tests.append(el("li", {}, link(node.id, what), " ", el("span", { class: "where" }, t.where)));
  }
  for (const e of m.config.expectations || []) {
    const where = e.action === "quarantine" ? link(quarantine, e.action) : e.action;
    tests.append(el("li", { class: "expectation" }, `expectation ${e.name}: ${e.condition} (on violation: `, where, ")"));
  }
  if (!tests.children.length) tests.append(el("li", { class: "hint" }, "no tests"));
  return [
    title("model", name),
    description(m.description),
    facts("model-facts", [
      ["file", m.file],
      ["stream", link(`stream:${m.stream}`)],
      ["target", link(`table:${m.target}`)],
      ["quarantine", NODES.has(quarantine) ? link(quarantine) : null],
      ["upstream models", el("span", { id: "upstream-models" }, links(m.depends_on.models.map((u) => `model:${u}`)))],
      ["downstream models", el("span", { id: "downstream-models" }, links(downstreamModels(name)))],
      ["tags", (m.config.tags || []).join(", ")],
      ["checkpoint", m.checkpoint],
    ]),
    history(name),
    backfill(name, m.backfill),
    section("Columns of the target", columnTable("model-columns", columnsOf((DOCS.targets[m.target] || {}).columns), m.columns)),
    section("Compiled SQL, per batch (batch 0)", sqlBlocks("compiled-batch", m.compiled.batch, "none")),
    section("Compiled SQL, set-up (once per start; setup[1] is one of two statements)", sqlBlocks("compiled-setup", m.compiled.setup, "none")),
    section("Compiled SQL, maintenance", sqlBlocks("compiled-maintenance", m.compiled.maintenance, "none: no optimize_every")),
    section("Tests and expectations", tests),
    section("Config", keyValues(m.config)),
    neighbours(`model:${name}`),
    section(`Source: ${m.file}`, el("pre", { class: "sql", id: "source-sql" }, m.source_sql)),
  ];
}

function showTable(name) {
  const target = DOCS.targets[name];
  const seed = seedOfTable(name);
  if (!target && !seed) {
    return [title("table", name), el("p", { class: "meta" }, "a table this project reads but does not write"), neighbours(`table:${name}`)];
  }
  const columns = target ? columnsOf(target.columns) : columnsOf(seed[1].columns);
  return [
    title("table", name),
    target ? description((DOCS.models[target.model] || {}).description) : description(seed[1].description),
    facts("table-facts", target ? [
      ["written by", link(`model:${target.model}`)],
      ["location", target.location],
      ["partitioned by", target.partitioned_by.join(", ")],
    ] : [["loaded by", link(`seed:${seed[0]}`)]]),
    section("Columns", columnTable("columns", columns, target ? describedColumns(target.model) : {})),
    target ? section("Table properties", keyValues(target.table_properties)) : null,
    neighbours(`table:${name}`),
  ];
}

function showStream(name) {
  const s = DOCS.streams[name];
  const kafka = s.kafka || {};
  return [
    title("stream", name),
    description(s.description),
    facts("stream-facts", [
      ["declared in", `${s.file}:${s.line}`],
      ["format", s.format],
      ["path", s.path],
      ["table", s.table],
      ["model's target", s.ref ? link(`model:${s.ref}`) : null],
      ["change data feed", s.change_data_feed ? "yes: inserts, updates and deletes as rows" : null],
      ["Kafka topics", (kafka.topics || []).join(", ") || kafka.pattern],
      ["bootstrap servers", kafka.bootstrap_servers],
      ["value format", kafka.value_format],
      ["required fields", (kafka.required || []).join(", ")],
      ["trigger", s.trigger ? Object.values(s.trigger).filter(Boolean).join(" ") : null],
      ["options", Object.keys(s.options).length ? s.options : null],
    ]),
    section("Schema", columnTable("stream-columns", columnsOf(s.schema), {})),
    neighbours(`stream:${name}`),
  ];
}

function showSource(node) {
  const [format, ...rest] = node.name.split(":");
  const readers = DOCS.lineage.edges.filter((e) => e.source === node.id).map((e) => DOCS.streams[e.target.slice("stream:".length)]).filter(Boolean);
  return [
    title("source", node.name),
    readers.length ? description(readers[0].description) : null,
    facts("source-facts", [
      ["format", format],
      [format === "kafka" ? "topic" : "path", rest.join(":") || null],
      [format === "kafka" ? "bootstrap servers" : "folder", node.detail],
    ]),
    neighbours(node.id),
  ];
}

function showSeed(name) {
  const s = DOCS.seeds[name];
  const table = `table:${s.table}`;
  // data tests that read its table, singular tests (no .test) that declare the seed
  const reads = (n) => (n.test ? (n.test.reads || []).includes(s.table) : ((n.singular || {}).depends_on || { seeds: [] }).seeds.includes(name));
  const tests = [...NODES.values()].filter((n) => n.kind === "test" && reads(n)).map((n) => n.id);
  return [
    title("seed", name),
    description(s.description),
    facts("seed-facts", [
      ["CSV", s.file],
      ["declared in", s.declared_in],
      ["table", link(table)],
      ["rows", s.rows === null || s.rows === undefined ? "unknown (a value does not match its column: run runner seed)" : String(s.rows)],
      ["read by tests", links(tests)],
    ]),
    section("Columns", columnTable("seed-columns", columnsOf(s.columns), {})),
    neighbours(`seed:${name}`),
  ];
}

function showQuarantine(name) {
  const q = DOCS.quarantine[name];
  if (!q) return [title("quarantine", name), neighbours(`quarantine:${name}`)];
  const receives = el("ul", { id: "quarantine-receives" }, ...q.receives.map((r) => el("li", {}, r)));
  return [
    title("quarantine table", name),
    el("p", { class: "description", id: "description" }, `The input rows model ${q.model} could not use, one row each with the reason; the rest of the batch still merges.`),
    facts("quarantine-facts", [["model", link(`model:${q.model}`)], ["location", q.location]]),
    section("What lands here", receives),
    section("Columns", columnTable("quarantine-columns", columnsOf(q.columns), {})),
    neighbours(`quarantine:${name}`),
  ];
}

function showTest(node) {
  if (node.singular) {
    const t = node.singular;
    return [
      title("test", node.name),
      el("p", { class: "description", id: "description" }, `singular test (${t.file}): its query's rows are the failures.`),
      facts("test-facts", [
        ["models", links(t.depends_on.models.map((m) => `model:${m}`))],
        ["seeds", t.depends_on.seeds.length ? links(t.depends_on.seeds.map((s) => `seed:${s}`)) : null],
        ["declared at", t.file],
      ]),
      el("pre", { class: "sql", id: "test-sql" }, t.sql),
    ];
  }
  const t = node.test;
  if (node.kind === "unit_test") {
    return [
      title("unit test", node.name),
      description(t.description),
      facts("test-facts", [["model", link(`model:${node.model}`)], ["batches", String(t.batches)], ["declared at", t.where]]),
    ];
  }
  return [
    title("test", node.name),
    el("p", { class: "description", id: "description" }, `${t.kind}${t.column ? ` on column ${t.column}` : ""} of model ${node.model}: its query's rows are the failures (runner test --show-sql prints it).`),
    facts("test-facts", [
      ["model", link(`model:${node.model}`)],
      ["kind", t.kind],
      ["column", t.column],
      ["parameters", Object.keys(t.params).length ? t.params : null],
      ["reads", links((t.reads || []).map((table) => `table:${table}`))],
      ["declared at", t.where],
    ]),
  ];
}

function nodePage(id) {
  const node = NODES.get(id);
  if (!node) {
    return [el("h2", { id: "details-title" }, `no node ${id}`), el("p", { class: "hint" }, "This project has no such node (renamed or removed?): pick one in the list on the left.")];
  }
  if (node.kind === "model") return showModel(node.name);
  if (node.kind === "table") return showTable(node.name);
  if (node.kind === "stream") return showStream(node.name);
  if (node.kind === "seed") return showSeed(node.name);
  if (node.kind === "quarantine") return showQuarantine(node.name);
  if (node.kind === "source") return showSource(node);
  return showTest(node);
}

function overview() {
  const counts = KINDS.map(([kind, name]) => [name, String([...NODES.values()].filter((n) => n.kind === kind).length)]);
  return [
    el("h2", { id: "details-title" }, `project ${DOCS.project}`),
    el("p", { class: "hint" }, "Pick a node in the list or the graph, or search (names, descriptions, columns, tags). Each page has its own address: copy it to link to it."),
    facts("overview", counts),
  ];
}

function history(name) {
  const rows = DOCS.history && DOCS.history[name];
  if (!DOCS.history) return null;
  if (!rows || !rows.length) return section("Recent batches", el("p", { class: "hint" }, "no batches in the event log"));
  const box = el("div", { class: "charts", id: "history-charts" });
  const labels = rows.map((r) => String(r.batch_id));
  const charts = [
    ["rows", "bar", [["rows in", "input_rows", "#1e88e5"], ["quarantined", "quarantined", "#e53935"]]],
    ["seconds", "line", [["seconds", "seconds", "#6d4c41"]]],
    ["MERGE", "bar", [["inserted", "inserted", "#43a047"], ["updated", "updated", "#fb8c00"], ["deleted", "deleted", "#8e24aa"]]],
  ];
  for (const [title, type, series] of charts) {
    const canvas = el("canvas", { "data-chart": title });
    box.append(el("div", { class: "chart" }, canvas));
    new Chart(canvas, {
      type,
      data: {
        labels,
        datasets: series.map(([text, key, color]) => ({
          label: text, data: rows.map((r) => r[key]), backgroundColor: color, borderColor: color,
        })),
      },
      options: {
        animation: false, maintainAspectRatio: false,
        plugins: { title: { display: true, text: `${title} per batch` } },
        scales: { x: { title: { display: true, text: "batch" } }, y: { beginAtZero: true } },
      },
    });
  }
  return section(`Last ${rows.length} batches (event log)`, box);
}

// The model's last `runner backfill` (target/backfill/<model>.json): the live target against
// the shadow rebuilt by the model as it is now. The sentences on the gap and the apply are the
// terminal's own, recorded with the report.
function backfill(name, b) {
  if (!b) return null;
  if (b.error) return section("Last backfill", el("p", { class: "hint", id: "backfill" }, b.error));
  const diff = b.difference;
  const run = b.dry_run ? "dry run" : "applied";
  const head = el("p", { class: "meta", id: "backfill-run" },
    `${run}, ${b.ran_at}: ${b.live_table} (live) vs ${b.shadow_table} (shadow), by ${b.unique_key.join(", ")}`);
  const counts = facts("backfill-counts", [
    ["rows in live", String(b.rows.live)], ["rows in shadow", String(b.rows.shadow)],
    ["only in live", String(diff.only_live)], ["only in shadow", String(diff.only_shadow)],
    ["changed", String(diff.changed)],
  ]);
  const byColumn = Object.entries(diff.changed_by_column).sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
  const columns = byColumn.length
    ? facts("backfill-columns", byColumn.map(([column, rows]) => [column, `${rows} changed row(s)`]))
    : null;
  const pairs = (values) => Object.entries(values).map(([k, v]) => `${k}=${v}`).join(", ") || "-";
  const kinds = { only_live: "only in live", only_shadow: "only in shadow", changed: "changed" };
  const samples = el("table", { class: "kv", id: "backfill-samples" },
    el("tr", {}, el("th", {}, ""), el("th", {}, "key"), el("th", {}, "live"), el("th", {}, "shadow")));
  for (const s of b.samples) {
    samples.append(el("tr", {}, el("th", {}, kinds[s.kind] || s.kind), el("td", {}, pairs(s.key)), el("td", {}, pairs(s.live)), el("td", {}, pairs(s.shadow))));
  }
  const gap = el("p", { id: "backfill-gap", class: (b.source_gap.missing || []).length ? "gap" : null }, b.text.source_gap);
  return section(`Last backfill (${run})`,
    el("div", { id: "backfill" },
      head, counts,
      columns ? el("h4", {}, "changed, per column") : null, columns,
      b.samples.length ? el("h4", {}, "samples") : null, b.samples.length ? samples : null,
      gap,
      el("p", { id: "backfill-apply" }, b.text.apply),
      el("p", { class: "hint" }, `recorded by runner backfill --model ${name} in target/backfill/${name}.json`)));
}

document.getElementById("title").textContent = `${DOCS.project}: lineage and models (target ${DOCS.target})`;
collectNodes();
window.cy = buildGraph();
window.showNode = (id) => { window.location.hash = id; };
const search = document.getElementById("search");
search.addEventListener("input", () => renderList(search.value));
search.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  const first = document.querySelector("#node-list a");
  if (first) window.location.hash = first.dataset.node;
});
window.addEventListener("hashchange", route);
renderList("");
route();
