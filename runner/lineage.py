"""The project's lineage: every node (source, stream, model, table, seed) and every edge the
runner knows, in one place.

``selection`` orders and selects models from it, ``compiled`` writes it into
``target/manifest.json`` and ``docs_site`` draws it. Edges point the way data flows:

- a file source, Kafka topic or Delta table ``->`` the stream that reads it;
- a model's target ``->`` a stream with ``ref: MODEL`` (``change_data_feed`` when it reads the
  Change Data Feed);
- a stream ``->`` each model fed by it; a model's target ``->`` a model whose SQL ``ref()``s it;
- a model ``->`` its target table, and ``->`` its quarantine table when its source quarantines
  malformed records (Kafka, JSON and CSV files) or an expectation of it quarantines rows
  (``quarantine.<model>`` at ``<warehouse>/_quarantine/<model>``);
- a seed ``->`` the table it loads, and any table ``->`` a model whose data tests read it;
- a table ``->`` each singular test (``tests/*.sql``) that reads it.

Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from runner.model_sql import relative_location
from runner.specs.model import ModelSpec
from runner.specs.stream import KAFKA_FORMAT, LINE_FORMATS, StreamSpec
from runner.storage import Location

if TYPE_CHECKING:
    from runner.project import Project
    from runner.specs.data_tests import DataTestSpec
    from runner.specs.seeds import SeedSpec
    from runner.specs.singular import SingularTestSpec

NodeKind = Literal["source", "stream", "model", "table", "quarantine", "seed", "test"]
EdgeKind = Literal[
    "reads", "feeds", "writes", "change_data_feed", "ref", "quarantines", "loads", "test_reads"
]
QUARANTINE_SCHEMA = "quarantine"
# Source formats whose malformed records go to quarantine.<model> instead of failing the batch.
QUARANTINING_FORMATS: frozenset[str] = frozenset({KAFKA_FORMAT, *LINE_FORMATS})
# A quarantine table's columns (runner/spark/quarantine.py writes them; the manifest and the
# docs site show them): the detail columns are null where they do not apply to the source.
DETAIL_COLUMNS = {
    "file": "STRING",
    "line": "BIGINT",
    "topic": "STRING",
    "partition": "INT",
    "offset": "BIGINT",
    "timestamp": "TIMESTAMP",
    "key": "STRING",
}
QUARANTINE_COLUMNS = (
    "model STRING, batch_id BIGINT, source STRING, position STRING, raw STRING, reason STRING, "
    "quarantined_at TIMESTAMP, "
    + ", ".join(f"`{name}` {kind}" for name, kind in DETAIL_COLUMNS.items())
)


@dataclass(frozen=True)
class Node:
    id: str  # '<kind>:<name>', e.g. 'model:orders_merge', 'table:silver.orders'
    kind: NodeKind
    name: str
    detail: str = ""  # e.g. a stream's format, a source's path or topic


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind


@dataclass
class Lineage:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def add(self, kind: NodeKind, name: str, detail: str = "") -> str:
        node_id = f"{kind}:{name}"
        self.nodes.setdefault(node_id, Node(node_id, kind, name, detail))
        return node_id

    def link(self, source: str, target: str, kind: EdgeKind) -> None:
        edge = Edge(source, target, kind)
        if edge not in self.edges:
            self.edges.append(edge)

    def parents(self, node_id: str) -> list[str]:
        return [e.source for e in self.edges if e.target == node_id]

    def upstream_models(self, model: str) -> set[str]:
        """Models whose target (through a stream or ``ref()``) feeds ``model``'s batches.

        Data tests' reads are not dependencies: they run after the data is there."""
        found: set[str] = set()
        pending = [f"model:{model}"]
        seen: set[str] = set()
        while pending:
            current = pending.pop()
            for edge in self.edges:
                if edge.target != current or edge.kind == "test_reads" or edge.source in seen:
                    continue
                seen.add(edge.source)
                node = self.nodes[edge.source]
                if node.kind == "model":
                    found.add(node.name)
                else:
                    pending.append(edge.source)
        return found

    def as_data(self) -> dict[str, list[dict[str, str]]]:
        """Plain data for JSON: nodes sorted by id, edges sorted."""
        return {
            "nodes": [
                {"id": n.id, "kind": n.kind, "name": n.name, "detail": n.detail}
                for n in sorted(self.nodes.values(), key=lambda n: n.id)
            ],
            "edges": [
                {"source": e.source, "target": e.target, "kind": e.kind}
                for e in sorted(self.edges, key=lambda e: (e.source, e.target, e.kind))
            ],
        }


def stream_quarantines(stream: StreamSpec) -> bool:
    return stream.format in QUARANTINING_FORMATS


def model_quarantines(model: ModelSpec, stream: StreamSpec | None) -> bool:
    """Whether ``model`` writes rows to ``quarantine.<model>``: its source's malformed
    records, or rows failing one of its ``quarantine`` expectations."""
    from_source = stream is not None and stream_quarantines(stream)
    return from_source or any(e.action == "quarantine" for e in model.config.expectations)


def quarantine_table(model: str) -> str:
    return f"{QUARANTINE_SCHEMA}.{model}"


def quarantine_location(warehouse: Location, model_name: str) -> Location:
    """Where ``model_name``'s quarantine table lives."""
    return warehouse / "_quarantine" / model_name


def build_lineage(
    project: Project,
    seeds: dict[str, SeedSpec] | None = None,
    data_tests: Iterable[DataTestSpec] = (),
    singular_tests: Iterable[SingularTestSpec] = (),
) -> Lineage:
    """The lineage of ``project``; ``seeds``, ``data_tests`` and ``singular_tests``
    (runner.specs) add their tables and reads when given."""
    lineage = Lineage()
    targets = {m.target_table: name for name, m in project.models.items()}
    for spec in project.streams.values():
        _add_stream(project, lineage, spec)
    for name, model in project.models.items():
        model_id = lineage.add("model", name, model.config.stream or "")
        stream = project.streams.get(model.config.stream or "")
        if stream is not None:
            lineage.link(f"stream:{stream.name}", model_id, "feeds")
        for other in sorted(model.refs):
            if other in project.models:
                table = lineage.add("table", project.models[other].target_table)
                lineage.link(table, model_id, "ref")
        lineage.link(model_id, lineage.add("table", model.target_table), "writes")
        if model_quarantines(model, stream):
            lineage.link(model_id, lineage.add("quarantine", quarantine_table(name)), "quarantines")
    for seed in (seeds or {}).values():
        lineage.link(lineage.add("seed", seed.name), lineage.add("table", seed.table), "loads")
    for test in data_tests:
        for dependency in test.reads:
            if targets.get(dependency.table) == test.model:
                continue  # a model's tests of its own target
            table = lineage.add("table", dependency.table)
            lineage.link(table, f"model:{test.model}", "test_reads")
    for singular in singular_tests:
        test_id = lineage.add("test", singular.name, "singular")
        read = [project.models[m].target_table for m in singular.models]
        read += [seeds[s].table for s in singular.seeds] if seeds else []
        for table_name in read:
            lineage.link(lineage.add("table", table_name), test_id, "test_reads")
    return lineage


def _add_stream(project: Project, lineage: Lineage, stream: StreamSpec) -> None:
    stream_id = lineage.add("stream", stream.name, stream.format)
    if stream.ref and stream.ref in project.models:
        table = lineage.add("table", project.models[stream.ref].target_table)
        lineage.link(table, stream_id, "change_data_feed" if stream.change_data_feed else "reads")
    elif stream.table:
        kind: EdgeKind = "change_data_feed" if stream.change_data_feed else "reads"
        lineage.link(lineage.add("table", stream.table), stream_id, kind)
    elif stream.kafka is not None:
        topics = stream.kafka.topics or ((stream.kafka.pattern or "?"),)
        for topic in topics:
            source = lineage.add("source", f"kafka:{topic}", stream.kafka.bootstrap_servers)
            lineage.link(source, stream_id, "reads")
    elif stream.path is not None:
        path = _relative(project, stream)
        lineage.link(lineage.add("source", f"{stream.format}:{path}", path), stream_id, "reads")
    else:
        lineage.link(lineage.add("source", stream.format), stream_id, "reads")  # rate


def _relative(project: Project, stream: StreamSpec) -> str:
    assert stream.path is not None
    return relative_location(stream.path, project.root)
