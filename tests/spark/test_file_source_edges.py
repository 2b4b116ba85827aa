"""The file source at the edges of its input (issue 27): line separators inside JSON strings,
byte-order marks (at a file's start and inside it), bytes that are not UTF-8, field names
differing in case, values a type would round, numeric strings, duplicate keys, a CSV header
missing a declared column, CRLF, gzip, a declared encoding, and a file read in several splits.
Every input line is checked against an oracle written here: in the target with its values (and
``_rescued_data``), or in the quarantine with its true file:line, raw text and reason."""

from __future__ import annotations

import gzip
import json
import os
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import write_project

SCHEMA = "order_id STRING, amount DECIMAL(10,2), qty BIGINT"
STREAMS = f"""streams:
  orders:
    format: json
    path: landing/json
    schema: "{SCHEMA}"
  orders_csv:
    format: csv
    path: landing/csv
    schema: "{SCHEMA}"
    options:
      header: true
  orders_latin1:
    format: json
    path: landing/latin1
    schema: "{SCHEMA}"
    options:
      encoding: ISO-8859-1
"""
MODEL = """{{{{ config(stream='{stream}', target='{target}', unique_key='order_id') }}}}
MERGE INTO {{{{ this }}}} AS t USING {{{{ batch }}}} AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
"""
BOM = "\ufeff".encode()
D = Decimal


def good(order_id: str, amount: str | None, qty: int | None, rescued: object = None) -> tuple:
    return ("good", (order_id, None if amount is None else D(amount), qty, rescued))


def bad(reason: str) -> tuple:
    return ("bad", reason)


# (file, the line's bytes without its line end, expected); None: not input (blank, a header)
JSON_LINES: list[tuple[str, bytes, tuple | None]] = [
    ("a.json", BOM + b'{"order_id":"a1","amount":1.5,"qty":1}', good("a1", "1.5", 1)),
    ("a.json", '{"order_id":"a2\u2028x","amount":2,"qty":2}'.encode(), good("a2\u2028x", "2", 2)),
    ("a.json", '{"order_id":"a3\u2029\u0085y","amount":3,"qty":3}'.encode(),
     good("a3\u2029\u0085y", "3", 3)),
    ("a.json", b'{"order_id":"a4\x0cz","amount":4,"qty":4}', bad("invalid JSON")),
    ("a.json", b"", None),
    ("a.json", b'{"order_id":"a5","amount":1.239,"qty":5}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.json", b'{"order_id":"a6","amount":"7.25","qty":"6"}', good("a6", "7.25", 6)),
    ("a.json", b'{"order_id":"a7","amount":"1.239","qty":7}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.json", b'{"order_id":"a8","amount":8,"qty":"8.5"}', bad("schema mismatch: qty (BIGINT)")),
    ("a.json", b'{"order_id":"a9","amount":9,"qty":9.0}', bad("schema mismatch: qty (BIGINT)")),
    ("a.json", b'{"order_id":"a10","amount":1,"order_id":"a11","qty":1}',
     bad("duplicate key: order_id")),
    ("a.json", b'{"order_id":"a12","Amount":12.5,"QTY":"x","qty":12}',
     good("a12", None, 12, {"Amount": 12.5, "QTY": "x"})),
    ("a.json", b'{"order_id":"a13","amount":1.50,"qty":13,"tags":[1,{"k":null}]}',
     good("a13", "1.5", 13, {"tags": [1, {"k": None}]})),
    ("a.json", b'{"order_id":"a14","amount":123456789.1,"qty":14}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    # keys: a repeated undeclared one; a repeated declared one with another missing; as many
    # keys as declared names, one of them undeclared
    ("a.json", b'{"order_id":"a15","x":1,"amount":1,"x":2,"qty":15}', bad("duplicate key: x")),
    ("a.json", b'{"order_id":"a16","order_id":"a16","amount":16}',
     bad("duplicate key: order_id")),
    ("a.json", b'{"order_id":"a17","amount":17,"extra":[17]}',
     good("a17", "17", None, {"extra": [17]})),
    # more fraction digits than a DECIMAL(38,30) keeps: rounded, or only trailing zeros
    ("a.json", b'{"order_id":"a18","amount":"1.0000000000000000000000000000001","qty":18}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.json", b'{"order_id":"a19","amount":"2.5000000000000000000000000000000000","qty":19}',
     good("a19", "2.5", 19)),
    # exponent forms: one a DECIMAL(10,2) holds; one it would round to 0.00 (1e-40 has more
    # fraction digits than any decimal keeps)
    ("a.json", b'{"order_id":"a20","amount":"2.5E1","qty":20}', good("a20", "25", 20)),
    ("a.json", b'{"order_id":"a21","amount":1e-40,"qty":21}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.json", b'{"order_id":"a22","amount":"1.234E0","qty":22}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.json", b" \t\x0b\x0c ", None),
    # whitespace before a line's text, and a line of one character: input, not blank
    ("a.json", b' \t{"order_id":"a23","amount":23,"qty":23}', good("a23", "23", 23)),
    ("a.json", b"x", bad("invalid JSON")),
    ("b.json", b'{"order_id":"b1","amount":1,"qty":1}', good("b1", "1", 1)),
    ("b.json", b'{"order_id":"b2","amount":2,"qty":2,"note":"caf\xe9"}', bad("invalid UTF-8")),
    ("b.json", b'{"order_id":"b3","amount":3,"qty":3}', good("b3", "3", 3)),
    # files concatenated: the second one's byte-order mark starts a line inside this file
    ("b.json", BOM + b'{"order_id":"b4","amount":4,"qty":4}', good("b4", "4", 4)),
    ("b.json", BOM + b'{"order_id":"b5","amount":', bad("invalid JSON")),
    ("b.json", BOM + b'{"order_id":"b6","note":"\xff"}', bad("invalid UTF-8")),
    ("c.json.gz", b'{"order_id":"c1","amount":1,"qty":1}', good("c1", "1", 1)),
    ("c.json.gz", b'{"order_id":"c2","amount":', bad("invalid JSON")),
    ("c.json.gz", b'{"order_id":"c3","amount":3,"qty":3}', good("c3", "3", 3)),
]  # fmt: skip
CSV_LINES: list[tuple[str, bytes, tuple | None]] = [
    ("a.csv", BOM + b"order_id,amount,qty", None),
    ("a.csv", b"k1,1.5,1", good("k1", "1.5", 1)),
    ("a.csv", b"k2,1.239,2", bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.csv", b'"k3","2.50",3', good("k3", "2.5", 3)),
    ("a.csv", b'"k4, x",4,4.0', bad("schema mismatch: qty (BIGINT)")),
    ("a.csv", b"k5,5", bad("wrong number of fields: 2 of 3")),
    ("a.csv", b"k6,6,6,", bad("wrong number of fields: 4 of 3")),
    ("a.csv", b"k7,,7", good("k7", None, 7)),
    ("a.csv", b" \t ", None),
    ("a.csv", b"k9,1E-9,9", bad("schema mismatch: amount (DECIMAL(10,2))")),
    ("a.csv", b'k8,"8,8', bad("unreadable CSV: a quoted field is not closed")),
    ("b.csv", b"order_id,qty", None),
    ("b.csv", b"m1,1", bad("CSV header has no column(s): amount")),
    ("b.csv", b"m2,2", bad("CSV header has no column(s): amount")),
    ("c.csv", b"order_id,Amount,amount,qty,note", None),
    ("c.csv", b"n1,9,1.5,1,hi", good("n1", "1.5", 1, {"Amount": "9", "note": "hi"})),
    ("c.csv", b"n2,9,2,2,caf\xe9", bad("invalid UTF-8")),
    ("c.csv", b"n3,9,3,3,", good("n3", "3", 3, {"Amount": "9", "note": None})),
]  # fmt: skip
# A declared encoding: the same byte that is invalid UTF-8 above is Latin-1 ``é`` here.
LATIN1_LINES: list[tuple[str, bytes, tuple | None]] = [
    ("a.json", b'{"order_id":"caf\xe9","amount":1,"qty":1}', good("caf\u00e9", "1", 1)),
    ("a.json", b'{"order_id":"l2","amount":1.001,"qty":2}',
     bad("schema mismatch: amount (DECIMAL(10,2))")),
]  # fmt: skip


def land(root: Path, lines: list[tuple[str, bytes, tuple | None]], folder: str) -> None:
    """Each file as bytes, lines ending in CRLF (``.json.gz``: LF, gzip-compressed)."""
    files: dict[str, list[bytes]] = {}
    for name, text, _ in lines:
        files.setdefault(name, []).append(text)
    for index, (name, texts) in enumerate(files.items()):
        path = root / "landing" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".gz"):
            path.write_bytes(gzip.compress(b"\n".join(texts) + b"\n"))
        else:
            path.write_bytes(b"\r\n".join(texts) + b"\r\n")
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))


def oracle(lines: list[tuple[str, bytes, tuple | None]], folder: str) -> tuple[set, dict]:
    """Quarantine rows (position, raw, reason) and target rows (order_id -> values)."""
    quarantined, target, numbers = set(), {}, {}
    for name, text, expected in lines:
        numbers[name] = numbers.get(name, 0) + 1
        if expected is None:
            continue
        kind, detail = expected
        if kind == "bad":
            encoding = "latin-1" if folder == "latin1" else "utf-8"
            raw = text.removeprefix(BOM).decode(encoding, errors="replace")
            quarantined.add((f"landing/{folder}/{name}:{numbers[name]}", raw, detail))
        else:
            target[detail[0]] = detail[1:]
    return quarantined, target


def test_every_line_is_in_the_target_the_quarantine_or_rescued(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = write_project(
        tmp_path / "p",
        {
            "json_orders": MODEL.format(stream="orders", target="edge.json_orders"),
            "csv_orders": MODEL.format(stream="orders_csv", target="edge.csv_orders"),
            "latin1_orders": MODEL.format(stream="orders_latin1", target="edge.latin1_orders"),
        },
        streams=STREAMS,
    )
    land(root, JSON_LINES, "json")
    land(root, CSV_LINES, "csv")
    land(root, LATIN1_LINES, "latin1")

    result = cli("run", "--select", "json_orders csv_orders latin1_orders", "-p", root)

    assert result.exit_code == 0, result.output + result.stderr
    for model, lines, folder in (
        ("json_orders", JSON_LINES, "json"),
        ("csv_orders", CSV_LINES, "csv"),
        ("latin1_orders", LATIN1_LINES, "latin1"),
    ):
        expected_bad, expected_good = oracle(lines, folder)
        rows = spark.read.format("delta").load(
            str(root / "target" / "warehouse" / "_quarantine" / model)
        )
        found = {(r["position"], r["raw"], r["reason"]) for r in rows.collect()}
        assert found == expected_bad, model
        assert rows.count() == len(expected_bad)
        target = {
            r["order_id"]: (
                r["amount"],
                r["qty"],
                r["_rescued_data"] and json.loads(r["_rescued_data"]),
            )
            for r in spark.table(f"edge.{model}").collect()
        }
        assert target == expected_good, model
        read = len(expected_good) + len(expected_bad)
        assert (
            f"{model} batch 0: {len(expected_good)} rows in, {len(expected_bad)} quarantined"
            in result.output
        ), (result.output, read)


def test_line_numbers_hold_across_the_splits_of_a_file(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    """A file Spark reads in many partitions (maxPartitionBytes 4 KB: the JSON file in 12,
    the CSV file in 4; each split costs a task per job of the batch), JSON and CSV with a
    header: each bad line is quarantined with its line number in the whole file, every good
    line is in the target, and only the CSV file's first line is taken as its header."""
    root = write_project(
        tmp_path / "p",
        {
            "json_orders": MODEL.format(stream="orders", target="edge.split_orders"),
            "csv_orders": MODEL.format(stream="orders_csv", target="edge.split_csv_orders"),
        },
        streams=STREAMS,
    )
    lines = [
        f'{{"order_id":"s{n}","amount":{n}.25,"qty":{n}}}'
        if n % 37
        else f'{{"order_id":"s{n}","amount":'
        for n in range(1, 1001)
    ]
    landing = root / "landing" / "json"
    landing.mkdir(parents=True)
    (landing / "big.json").write_text("\n".join(lines) + "\n")
    # line 1 is the header; a data line that repeats it (line 500) is data, not a header
    rows = [f"s{n},{n}.25,{n}" if n % 37 else f"s{n},{n}.25" for n in range(2, 1001)]
    rows[500 - 2] = "order_id,amount,qty"
    (root / "landing" / "csv").mkdir(parents=True)
    (root / "landing" / "csv" / "big.csv").write_text(
        "\n".join(["order_id,amount,qty", *rows]) + "\n"
    )
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        result = cli("run", "--select", "json_orders csv_orders", "-p", root)
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)

    assert result.exit_code == 0, result.output + result.stderr
    quarantine = root / "target" / "warehouse" / "_quarantine"
    found = spark.read.format("delta").load(str(quarantine / "json_orders")).collect()
    assert sorted(r["line"] for r in found) == list(range(37, 1001, 37))
    assert {r["raw"] for r in found} == {lines[n - 1] for n in range(37, 1001, 37)}
    target = spark.table("edge.split_orders").collect()
    assert sorted(r["qty"] for r in target) == [n for n in range(1, 1001) if n % 37]
    assert all(r["amount"] == D(f"{r['qty']}.25") for r in target)

    found = spark.read.format("delta").load(str(quarantine / "csv_orders")).collect()
    bad_csv = {n: "wrong number of fields: 2 of 3" for n in range(37, 1001, 37)}
    bad_csv[500] = "schema mismatch: amount (DECIMAL(10,2)), qty (BIGINT)"
    assert {r["line"]: r["reason"] for r in found} == bad_csv
    assert len(found) == len(bad_csv)
    target = spark.table("edge.split_csv_orders").collect()
    assert sorted(r["qty"] for r in target) == [n for n in range(2, 1001) if n % 37 and n != 500]
