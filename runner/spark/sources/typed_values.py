"""Reading input text as declared column types, and naming the values that do not fit.

Shared by the sources that parse text themselves (files: runner/spark/sources/files.py; Kafka:
runner/spark/sources/kafka.py), so a value that does not fit its declared type is reported the
same way everywhere: ``schema mismatch: amount (DECIMAL(10,2)), updated_at (TIMESTAMP)``.

``lossless_value`` is the file source's rule (docs/bad-input.md): a value is read from its
text with Spark's ``try_cast``, and is a mismatch when the cast fails or would change it. A
JSON number and a JSON string holding the same text are read alike (``"7.25"`` and ``7.25``
for a DECIMAL, ``"5"`` and ``5`` for a BIGINT): the text is what is checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from runner.spark.sources.columns import CORRUPT_COLUMN

_MAX_PRECISION = 38
# A plain decimal number's fraction digits, trailing zeros left out: group 1 of this pattern.
_FRACTION = r"^\s*[+-]?[0-9]*\.([0-9]*?)0*\s*$"


def type_name(data_type: DataType) -> str:
    """How a reason names a declared type: ``DECIMAL(10,2)``, ``TIMESTAMP``."""
    return data_type.simpleString().upper()


def lossless_value(
    text: Column, data_type: DataType, options: Mapping[str, str] | None = None
) -> Column:
    """``text`` (a string column) as ``data_type``, or null when it is not readable as that type
    without loss: not a value of the type (``ten`` for a DECIMAL, ``1.5`` for a BIGINT), or one
    the type would round (``1.239`` for a DECIMAL(10,2)). Nested types are read as JSON text
    with ``from_json``; FLOAT and DOUBLE are approximate by definition and only need to parse.
    ``options`` may hold Spark's reader options ``timestampFormat`` and ``dateFormat``: the
    pattern TIMESTAMP and DATE values are read with (``CAST``'s ISO 8601 otherwise)."""
    formats = options or {}
    if isinstance(data_type, StringType):
        return text
    if isinstance(data_type, TimestampType) and "timestampFormat" in formats:
        return F.try_to_timestamp(text, F.lit(formats["timestampFormat"]))
    if isinstance(data_type, DateType) and "dateFormat" in formats:
        return F.try_to_date(text, formats["dateFormat"])
    if isinstance(data_type, (StructType, ArrayType, MapType)):
        return F.from_json(text, data_type.simpleString())
    value = text.try_cast(data_type)
    if not isinstance(data_type, DecimalType):
        return value
    precision, scale = data_type.precision, data_type.scale
    # The same integer digits as the declared type, and as many fraction digits as fit in 38:
    # equal to the typed value unless the cast rounded it.
    wide_scale = _MAX_PRECISION - (precision - scale)
    wide = text.try_cast(DecimalType(_MAX_PRECISION, wide_scale))
    # A text no longer than that scale has fewer fraction digits, so ``wide`` holds it exactly;
    # only a longer one (or none) has its fraction digits counted, by a regular expression.
    # A number in exponent form can have more than any decimal holds (1E-40, which both casts
    # round to zero): its DOUBLE must also be the typed value's.
    fraction_digits = F.length(F.regexp_extract(text, _FRACTION, 1))
    counted = (wide.isNull() | (wide == value)) & (fraction_digits <= scale)
    exponent = text.contains("e") | text.contains("E")
    as_double = text.try_cast(DoubleType()) == value.cast(DoubleType())
    checked = F.when(exponent, counted & as_double).otherwise(counted)
    careful = wide.isNull() | (F.length(text) > wide_scale) | exponent
    exact = F.when(careful, checked).otherwise(wide == value)
    return F.when(exact, value)


def strings_schema(names: Sequence[str], corrupt: bool = True) -> StructType:
    """A struct of the given top-level fields, each read as its raw text (STRING), plus the
    corrupt-record column: what ``from_json`` needs to keep a value's text before typing it."""
    fields = [StructField(name, StringType()) for name in names]
    if corrupt:
        fields.append(StructField(CORRUPT_COLUMN, StringType()))
    return StructType(fields)


def unreadable_fields(
    fields: Sequence[StructField], raw_of: Mapping[str, Column], value_of: Mapping[str, Column]
) -> Column:
    """``amount (DECIMAL(10,2)), updated_at (TIMESTAMP)``: the fields whose raw text is present
    but whose typed value is null; an empty string when there are none. A STRING field is
    never one: any text is its value (a JSON number's or object's included), so it is left
    out of the expression, which Spark plans on every trigger of a stream."""
    return F.concat_ws(
        ", ",
        *[
            F.when(
                raw_of[f.name].isNotNull() & value_of[f.name].isNull(),
                F.lit(f"{f.name} ({type_name(f.dataType)})"),
            )
            for f in fields
            if not isinstance(f.dataType, StringType)
        ],
    )


def schema_mismatch(unreadable: Column) -> Column:
    """The reason for a record with unreadable fields (``unreadable_fields``)."""
    return F.concat(
        F.lit("schema mismatch: "),
        F.when(unreadable != "", unreadable).otherwise(F.lit("not readable as the schema")),
    )
