"""The fleet report's Parquet tables for dashboards, written under one directory:

- `drift_items/`: one row per finding: generated_at, cluster, observed_at, kind, topic,
  partition, key, detail, records, bytes, owner (the Team owning the topic, docs/teams.md; null:
  nobody).
- `pending_truncations/`: one row per partition a pending truncation would cut: generated_at,
  cluster, observed_at, topic, partition, leader, leader_epoch, log_start_offset,
  high_watermark, target_offset, records, estimated_bytes.
- `retention_lowered/`: one row per partition of a topic whose retention was lowered out of band:
  generated_at, cluster, observed_at, topic, partition, against (`manifests`, `earlier` or both,
  comma-separated), log_start_offset, high_watermark, keep_from_offset, records, bytes (up to what
  the brokers delete at their next retention check; null: unknown, never 0), unknown (why).
- `changes`: one row per entry of the change log against the earlier observation: generated_at,
  cluster, observed_at, since (when the earlier observation was taken), kind, topic, partition,
  key, old, new, source, count, sensitive (`reconciler.drift.model.ChangeLogEntry`; no value of
  a sensitive key). Empty when no earlier observation was given.

Each is a directory of Parquet part files (one, from the driver; Spark writes to a URI), readable
as one dataset by Spark, pyarrow, DuckDB or pandas. Timestamps are UTC.

These are report output, like the HTML page: written for dashboards, never read back as input,
so they stay with drift rather than in `reconciler.files` (the files the reconciler reads).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import Any

from reconciler.drift.model import DriftReport, RetentionLowered
from reconciler.files.snapshot_parquet import require_pyarrow

ITEM_FIELDS = [
    ("kind", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("key", "string"),
    ("detail", "string"),
    ("records", "bigint"),
    ("bytes", "bigint"),
]
TRUNCATION_FIELDS = [
    ("topic", "string"),
    ("partition", "int"),
    ("leader", "int"),
    ("leader_epoch", "int"),
    ("log_start_offset", "bigint"),
    ("high_watermark", "bigint"),
    ("target_offset", "bigint"),
    ("records", "bigint"),
    ("estimated_bytes", "bigint"),
]
RETENTION_FIELDS = [
    ("topic", "string"),
    ("partition", "int"),
    ("against", "string"),
    ("log_start_offset", "bigint"),
    ("high_watermark", "bigint"),
    ("keep_from_offset", "bigint"),
    ("records", "bigint"),
    ("bytes", "bigint"),
    ("unknown", "string"),
]
CHANGE_FIELDS = [
    ("kind", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("key", "string"),
    ("old", "string"),
    ("new", "string"),
    ("source", "string"),
    ("count", "int"),
    ("sensitive", "boolean"),
]
COMMON_FIELDS = [("generated_at", "timestamp"), ("cluster", "string"), ("observed_at", "timestamp")]
# Set from the manifests after either engine (reconciler.drift.by_owner): not a DriftItem field.
OWNER_FIELD = ("owner", "string")


def spark_ddl(fields: list[tuple[str, str]]) -> str:
    return ", ".join(f"`{name}` {kind}" for name, kind in fields)


def retention_dicts(found: RetentionLowered) -> list[dict[str, Any]]:
    """One row per partition of the cut's estimate."""
    return [
        {
            "topic": found.topic,
            "partition": p.partition,
            "against": ",".join(found.against),
            "log_start_offset": p.log_start_offset,
            "high_watermark": p.high_watermark,
            "keep_from_offset": p.keep_from_offset,
            "records": p.records_to_delete,
            "bytes": p.bytes_to_delete,
            "unknown": found.unknown.get(p.partition),
        }
        for p in found.cut.partitions
    ]


TABLES = (
    ("drift_items", [*COMMON_FIELDS, *ITEM_FIELDS, OWNER_FIELD]),
    ("pending_truncations", COMMON_FIELDS + TRUNCATION_FIELDS),
    ("retention_lowered", COMMON_FIELDS + RETENTION_FIELDS),
    ("changes", [*COMMON_FIELDS, ("since", "timestamp"), *CHANGE_FIELDS]),
)


def report_columns(report: DriftReport, instant: Callable[[datetime], Any] = lambda t: t) -> dict[str, dict[str, list]]:
    """Each table's columns (name -> values, in row order): a list per column rather than a dict
    per row, since a fleet's report has tens of thousands of items. `instant`: how a timestamp
    column holds its values (all a cluster's own few instants, each converted once)."""
    tables: dict[str, dict[str, list]] = {name: {field: [] for field, _ in fields} for name, fields in TABLES}

    def at(t: datetime | None) -> Any:
        return None if t is None else instant(t)

    generated_at = at(report.generated_at)
    for c in report.clusters:
        common = {"generated_at": generated_at, "cluster": c.cluster, "observed_at": at(c.observed_at), "since": at(c.since)}
        retention = [row for r in c.retention for row in retention_dicts(r)]
        for name, found in (
            ("drift_items", c.items),
            ("pending_truncations", c.truncation_rows),
            ("retention_lowered", retention),
            ("changes", c.change_log),
        ):
            for field, values in tables[name].items():
                if field in common:
                    values += [common[field]] * len(found)
                elif name == "retention_lowered":
                    values += [row[field] for row in retention]
                else:
                    values += map(attrgetter(field), found)
    return tables


def _arrow_schema(fields: list[tuple[str, str]]) -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "boolean": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([(name, types[kind]) for name, kind in fields])


def write_tables_local(report: DriftReport, directory: str | Path) -> Path:
    pa = require_pyarrow()
    directory = Path(directory)
    timestamp = _arrow_schema([("t", "timestamp")]).field("t").type
    # Timestamps as pyarrow's own microseconds, converted once per instant, not once per row.
    columns = report_columns(report, lambda t: pa.array([t], timestamp).cast(pa.int64())[0].as_py())
    for name, fields in TABLES:
        target = directory / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        schema = _arrow_schema(fields)
        table = pa.Table.from_arrays(
            [
                pa.array(columns[name][f.name], pa.int64()).cast(f.type) if f.type == timestamp else columns[name][f.name]
                for f in schema
            ],
            schema=schema,
        )
        pa.parquet.write_table(table, target / "part-00000.parquet", compression="zstd")
    return directory


def read_table_rows(directory: str | Path, name: str, drop: Iterable[str] = ("generated_at",)) -> list[dict]:
    """All rows of one table, sorted, without the columns in `drop` (for comparisons and tests)."""
    require_pyarrow()  # names the missing extra before pyarrow.dataset is imported
    import pyarrow.dataset as ds

    table = ds.dataset(str(Path(directory) / name), format="parquet").to_table()
    rows = [{k: v for k, v in r.items() if k not in set(drop)} for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r.values()))
