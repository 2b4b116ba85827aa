// The runner's docs page: a lineage graph (Cytoscape.js + dagre) and a details pane per node.
// All data is in window.RUNNER_DOCS, written by `runner docs generate`; nothing is fetched.
"use strict";

const DOCS = window.RUNNER_DOCS;
const COLORS = {
  source: "#8d6e63", stream: "#1e88e5", model: "#43a047",
  table: "#546e7a", quarantine: "#e53935", seed: "#fb8c00", test: "#fdd835",
};
const EDGE_STYLES = {
  change_data_feed: { color: "#8e24aa", style: "solid", label: "CDF" },
  quarantines: { color: "#e53935", style: "dashed", label: "bad records" },
  test_reads: { color: "#9e9e9e", style: "dotted", label: "tests read" },
  ref: { color: "#43a047", style: "solid", label: "ref()" },
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
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
  cy.on("tap", "node", (event) => showNode(event.target.id()));
  return cy;
}

function section(title, ...children) {
  return el("section", { class: "block" }, el("h3", {}, title), ...children);
}

function sqlBlocks(id, statements, empty) {
  const box = el("div", { id });
  if (!statements.length) box.append(el("p", { class: "hint" }, empty));
  for (const s of statements) {
    box.append(el("div", { class: "stmt-head" }, `${s.label} ${s.keyword}  `, el("span", { class: "where" }, s.where)));
    box.append(el("pre", { class: "sql" }, `${s.sql};`));
  }
  return box;
}

function keyValues(values) {
  const table = el("table", { class: "kv" });
  for (const [key, value] of Object.entries(values)) {
    if (value === null || value === undefined || (Array.isArray(value) && !value.length)) continue;
    if (typeof value === "object" && !Array.isArray(value) && !Object.keys(value).length) continue;
    const shown = typeof value === "object" ? JSON.stringify(value) : String(value);
    table.append(el("tr", {}, el("th", {}, key), el("td", {}, shown)));
  }
  return table;
}

function showModel(name) {
  const m = DOCS.models[name];
  const tests = el("ul", { id: "tests" });
  for (const t of m.data_tests) {
    tests.append(el("li", {}, `${t.kind}${t.column ? ` on ${t.column}` : ""} `, el("span", { class: "where" }, t.where)));
  }
  for (const t of m.unit_tests) {
    tests.append(el("li", {}, `unit test ${t.name} (${t.batches} batches): ${t.description} `, el("span", { class: "where" }, t.where)));
  }
  if (!tests.children.length) tests.append(el("li", { class: "hint" }, "no tests"));
  const upstream = m.depends_on.models.length ? m.depends_on.models.join(", ") : "none";
  return [
    el("h2", { id: "details-title" }, `model ${name}`),
    el("p", { class: "meta" }, `${m.file}: stream ${m.stream} → ${m.target}; upstream models: ${upstream}`),
    m.description ? el("p", { class: "description", id: "model-description" }, m.description) : null,
    history(name),
    section("Compiled SQL, per batch (batch 0)", sqlBlocks("compiled-batch", m.compiled.batch, "none")),
    section("Compiled SQL, set-up (once per start)", sqlBlocks("compiled-setup", m.compiled.setup, "none")),
    section("Compiled SQL, maintenance", sqlBlocks("compiled-maintenance", m.compiled.maintenance, "none: no optimize_every")),
    section("Tests and expectations", tests),
    section("Config", keyValues(m.config)),
    section(`Source: ${m.file}`, el("pre", { class: "sql", id: "source-sql" }, m.source_sql)),
  ];
}

function showTable(name) {
  const target = DOCS.targets[name];
  if (!target) return [el("h2", { id: "details-title" }, `table ${name}`), el("p", { class: "hint" }, "not written by a model of this project")];
  const columns = el("table", { class: "kv", id: "columns" });
  const described = (DOCS.models[target.model] || {}).columns || {};
  for (const column of target.columns || []) {
    const [col, ...type] = column.trim().split(/\s+/);
    const text = (described[col.replace(/`/g, "")] || {}).description || "";
    columns.append(el("tr", {}, el("th", {}, col), el("td", {}, type.join(" ")), el("td", { class: "description" }, text)));
  }
  return [
    el("h2", { id: "details-title" }, `table ${name}`),
    el("p", { class: "meta" }, `written by model ${target.model} at ${target.location}`),
    section("Columns", columns),
    section("Table properties", keyValues(target.table_properties)),
    section("Layout", keyValues({ partitioned_by: target.partitioned_by })),
  ];
}

function showOther(node) {
  const declared = { stream: DOCS.streams, seed: DOCS.seeds, test: DOCS.tests || {} }[node.kind]?.[node.name] || null;
  return [
    el("h2", { id: "details-title" }, `${node.kind} ${node.name}`),
    declared && declared.description ? el("p", { class: "description" }, declared.description) : null,
    declared ? section("Declaration", keyValues(declared)) : el("p", { class: "meta" }, node.detail),
  ];
}

function showNode(id) {
  const node = DOCS.lineage.nodes.find((n) => n.id === id);
  const pane = document.getElementById("details");
  pane.replaceChildren();
  let parts;
  if (node.kind === "model") parts = showModel(node.name);
  else if (node.kind === "table") parts = showTable(node.name);
  else parts = showOther(node);
  pane.append(...parts.filter(Boolean));
  window.cy.nodes().unselect();
  window.cy.getElementById(id).select();
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

document.getElementById("title").textContent = `${DOCS.project}: lineage and models (target ${DOCS.target})`;
window.cy = buildGraph();
window.showNode = showNode;
