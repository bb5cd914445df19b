"""Snapshots as Parquet: the columnar format `reconcile snapshot --format parquet` writes and
`drift --fleet` reads (where the files go in a fleet directory is `reconciler.files.fleet`). The
columns and the header: docs/snapshot-format.md.

The row helpers here are plain Python; pyarrow is imported only by the functions that read or
write files (`require_pyarrow`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from reconciler.errors import MAX_PROBLEMS, SnapshotError, noun, problem_line, shown_text
from reconciler.files.json_document import read_json_document
from reconciler.files.snapshot_problems import SNAPSHOT_KEYS, explain, invalid_snapshot
from reconciler.models.idle import TopicActivity
from reconciler.models.observed import (
    SNAPSHOT_FORMAT_VERSION,
    ObservedState,
    ObservedTopic,
)

PARQUET_FORMAT_VERSION = 1
METADATA_KEY = b"reconciler.snapshot"
HEADER_PLACE = f"Parquet key-value metadata {METADATA_KEY.decode()}"  # where the header is, in messages


def utc(value: datetime) -> datetime:
    """`value` in UTC; a naive time (as Spark and pyarrow hand back `run`) is taken to be UTC."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


# --- rows <-> models ------------------------------------------------------------------------------

HIDDEN, ABSENT = "hidden", "absent"


def _cluster_columns(state: ObservedState) -> dict[str, Any]:
    return {
        "cluster": state.cluster,
        "cluster_id": state.cluster_id,
        "run": utc(state.taken_at) if state.taken_at else None,
        "controller_id": state.controller_id,
        "cluster_authorized_operations": state.cluster_authorized_operations,
        "sizes_refused": state.sizes_refused,
    }


def status_rows(state: ObservedState) -> list[dict[str, Any]]:
    """The rows of declared topics not read: hidden ones, and absent ones with their operations."""
    rows = [{**_cluster_columns(state), "topic": name, "status": HIDDEN} for name in state.hidden_topics]
    rows += [
        {**_cluster_columns(state), "topic": name, "status": ABSENT, "authorized_operations": ops}
        for name, ops in state.absent_topic_operations.items()
    ]
    return rows


def topic_row(state: ObservedState, topic: ObservedTopic) -> dict[str, Any]:
    groups = [
        {"group": g, "partition": p, "offset": o}
        for g, by_topic in sorted(state.group_offsets.items())
        for p, o in sorted(by_topic.get(topic.name, {}).items())
    ]
    return {
        **_cluster_columns(state),
        "topic": topic.name,
        "topic_id": topic.topic_id,
        "internal": topic.internal,
        "authorized_operations": topic.authorized_operations,
        "configs": [
            {"key": k, "value": c.value, "source": int(c.source), "sensitive": c.sensitive, "read_only": c.read_only}
            for k, c in sorted(topic.configs.items())
        ],
        "partitions": [
            {
                "partition": p.partition,
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "offline_replicas": list(p.offline_replicas),
                "log_start_offset": p.log_start_offset,
                "high_watermark": p.high_watermark,
                "size_bytes": p.size_bytes,
                "epoch_end_offset": p.epoch_end_offset,
                "offsets_by_timestamp": [{"timestamp": t, "offset": o} for t, o in sorted(p.offsets_by_timestamp.items())],
            }
            for p in topic.partitions
        ],
        "group_offsets": groups,
        "activity": activity_struct(state.activity.get(topic.name)),
    }


def activity_struct(evidence: TopicActivity | None) -> dict[str, Any] | None:
    """A topic's evidence of idleness as the `activity` column holds it (null: not read)."""
    if evidence is None:
        return None
    data = evidence.model_dump(exclude={"topic"})
    for group in data["groups"]:
        group["committed"] = [{"partition": p, "offset": o} for p, o in sorted(group["committed"].items())]
    return data


def activity_data(topic: Any, struct: Any) -> Any:
    """The `activity` column's struct as TopicActivity's input, unchecked (the model checks it)."""
    if not isinstance(struct, dict):
        return struct
    groups = struct.get("groups")
    if isinstance(groups, list):
        groups = [
            {**g, "committed": {e.get("partition"): e.get("offset") for e in g.get("committed") or [] if isinstance(e, dict)}}
            if isinstance(g, dict)
            else g
            for g in groups
        ]
    return {**struct, "topic": topic, "groups": groups if groups is not None else [], "unknown": struct.get("unknown") or []}


REPEATED_KEY = "listed more than once in the row's configs"


def repeated_config_keys(entries: Any) -> list[Any]:
    """The keys of a row's config entries that more than one entry has (a list of structs in the
    file; the models hold a mapping)."""
    if not isinstance(entries, list) or len(entries) < 2:  # most rows: a call per row of a fleet
        return []
    keys = Counter(e.get("key") if isinstance(e, dict) else None for e in entries)
    return sorted((k for k, n in keys.items() if n > 1), key=repr)


# --- files ----------------------------------------------------------------------------------------


def arrow_schema() -> Any:
    import pyarrow as pa

    offsets = pa.list_(pa.struct([("timestamp", pa.int64()), ("offset", pa.int64())]))
    partition = pa.struct(
        [
            ("partition", pa.int32()),
            ("leader", pa.int32()),
            ("leader_epoch", pa.int32()),
            ("replicas", pa.list_(pa.int32())),
            ("isr", pa.list_(pa.int32())),
            ("offline_replicas", pa.list_(pa.int32())),
            ("log_start_offset", pa.int64()),
            ("high_watermark", pa.int64()),
            ("size_bytes", pa.int64()),
            ("epoch_end_offset", pa.int64()),
            ("offsets_by_timestamp", offsets),
        ]
    )
    config = pa.struct(
        [
            ("key", pa.string()),
            ("value", pa.string()),
            ("source", pa.int32()),
            ("sensitive", pa.bool_()),
            ("read_only", pa.bool_()),
        ]
    )
    group = pa.struct([("group", pa.string()), ("partition", pa.int32()), ("offset", pa.int64())])
    activity = pa.struct(
        [
            ("read_at_ms", pa.int64()),
            (
                "partitions",
                pa.list_(
                    pa.struct(
                        [
                            ("partition", pa.int32()),
                            ("newest_timestamp", pa.int64()),
                            ("newest_offset", pa.int64()),
                            ("log_start_offset", pa.int64()),
                            ("high_watermark", pa.int64()),
                        ]
                    )
                ),
            ),
            (
                "groups",
                pa.list_(
                    pa.struct(
                        [
                            ("group", pa.string()),
                            ("state", pa.string()),
                            ("committed", pa.list_(pa.struct([("partition", pa.int32()), ("offset", pa.int64())]))),
                        ]
                    )
                ),
            ),
            ("size_bytes", pa.int64()),
            ("unknown", pa.list_(pa.string())),
        ]
    )
    return pa.schema(
        [
            ("cluster", pa.string()),
            ("cluster_id", pa.string()),
            ("run", pa.timestamp("us", tz="UTC")),
            ("controller_id", pa.int32()),
            ("topic", pa.string()),
            ("topic_id", pa.string()),
            ("internal", pa.bool_()),
            ("configs", pa.list_(config)),
            ("partitions", pa.list_(partition)),
            ("group_offsets", pa.list_(group)),
            ("authorized_operations", pa.list_(pa.string())),
            ("status", pa.string()),
            ("cluster_authorized_operations", pa.list_(pa.string())),
            ("sizes_refused", pa.string()),
            ("activity", activity),
        ]
    )


def require_pyarrow(path: object = None) -> Any:
    """pyarrow with its Parquet module, or SnapshotError naming the extra that installs it."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as e:
        what = f"{path} is a Parquet snapshot; reading it" if path is not None else "Parquet"
        raise SnapshotError(f"{what} needs pyarrow: pip install 'kafka-reconciler[spark]' (or pyarrow).") from e
    return pyarrow


def write_snapshot_parquet(state: ObservedState, path: str | Path) -> None:
    """Write one snapshot to the Parquet file `path` (its directory must exist); a state without
    `taken_at` must be given one first, since `run` is how a fleet orders its snapshots."""
    pa = require_pyarrow()
    rows = [topic_row(state, state.topics[name]) for name in sorted(state.topics)] + status_rows(state)
    header = state.model_dump(mode="json", exclude={"topics", "hidden_topics", "absent_topic_operations", "activity"})
    header["group_offsets"] = {
        g: {t: o for t, o in by_topic.items() if t not in state.topics} for g, by_topic in state.group_offsets.items()
    }
    header["group_offsets"] = {g: v for g, v in header["group_offsets"].items() if v}
    header["parquet_format_version"] = PARQUET_FORMAT_VERSION
    schema = arrow_schema().with_metadata({METADATA_KEY: json.dumps(header).encode()})
    pa.parquet.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd")


def header_of(meta: bytes | str | None, path: str) -> dict[str, Any]:
    """A snapshot's header from its key-value metadata (`METADATA_KEY`), however it was read."""
    header = read_json_document(meta, path, "snapshot", SNAPSHOT_KEYS, within=HEADER_PLACE) if meta else {}
    return header if isinstance(header, dict) else {}


REQUIRED_COLUMNS = ("topic", "partitions")


def column_type_problems(schema: Any) -> list[str]:
    """A problem for each column, or field of a column's structs, whose type is not the snapshot
    format's (`arrow_schema`): read anyway, its values would be misread (the text "false" as
    true) or fail where the file is not named. Columns and fields left out are not a problem (files
    written before they existed); the models refuse names they do not know."""
    expected = arrow_schema()
    return [
        problem
        for column in schema
        if column.name in expected.names
        for problem in _type_problems(column.name, column.type, expected.field(column.name).type)
    ]


def _type_problems(where: str, actual: Any, expected: Any) -> list[str]:
    import pyarrow as pa

    t = pa.types
    if t.is_null(actual):  # nulls only: nothing to misread
        return []
    if t.is_struct(expected) and t.is_struct(actual):
        names = {expected.field(i).name for i in range(expected.num_fields)}
        inner = [actual.field(i) for i in range(actual.num_fields) if actual.field(i).name in names]
        return [p for f in inner for p in _type_problems(f"{where}.{f.name}", f.type, expected.field(f.name).type)]
    if t.is_list(expected) and (t.is_list(actual) or t.is_large_list(actual)):
        return _type_problems(f"{where}[]", actual.value_type, expected.value_type)
    if (
        actual == expected
        or (t.is_timestamp(expected) and t.is_timestamp(actual))
        or (t.is_string(expected) and t.is_large_string(actual))
    ):
        return []
    return [f"column {where} is {_type_name(actual)}; a snapshot's is {_type_name(expected)}"]


def _type_name(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"list<{_type_name(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        return "struct<" + ", ".join(arrow_type.field(i).name for i in range(arrow_type.num_fields)) + ">"
    return str(arrow_type)


def check_column_types(path: str | Path | BinaryIO, schema: Any = None) -> None:
    """SnapshotError naming `path` when a column's type is not the snapshot format's (both
    engines, before they read a row). Without `schema`, the file's footer is read; a file whose
    footer cannot be read is left to the reader, which names it."""
    if schema is None:
        pa = require_pyarrow(path)
        try:
            schema = pa.parquet.read_schema(path)
        except (OSError, ValueError, pa.ArrowException):
            return
    problems = column_type_problems(schema)
    if problems:
        raise invalid_snapshot(str(path), len(problems), problems[:MAX_PROBLEMS])


def read_snapshot_parquet(path: str | Path | BinaryIO) -> ObservedState:
    """A Parquet snapshot, checked by the same rules as a JSON one (`snapshot_problems`); each
    bad value is reported with its row (and topic) and its path within the row's topic."""
    table, header = open_table(path)
    pa = require_pyarrow(path)
    try:
        rows = table.to_pylist()
    except (ValueError, OverflowError, pa.ArrowException) as e:
        raise SnapshotError(f"cannot read Parquet snapshot {path}: {shown_text(str(e), 300)}") from e
    data, problems, row_of = state_data(str(path), header, rows, _topic_data)
    count = len(problems)
    try:
        state = ObservedState.from_file(data)
    except ValidationError as e:
        count += e.error_count()
        for error in e.errors(include_url=False)[: max(0, MAX_PROBLEMS - len(problems))]:
            problems.append(_place(error, row_of))
    if problems:
        raise invalid_snapshot(str(path), count, problems[:MAX_PROBLEMS])
    return state


def open_table(path: str | Path | BinaryIO) -> tuple[Any, dict[str, Any]]:
    """The file's rows as an Arrow table, and its header (the key-value metadata); SnapshotError
    when it is no snapshot at all."""
    pa = require_pyarrow(path)
    try:
        table = pa.parquet.read_table(path)
        missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
        if missing:
            raise SnapshotError(
                f"{path} is not a snapshot: the Parquet file has no column {', '.join(missing)} "
                f"(it has {shown_text(', '.join(table.column_names), 200)}); write snapshots with "
                "`reconcile snapshot --format parquet`."
            )
    except (OSError, ValueError, OverflowError, pa.ArrowException) as e:
        raise SnapshotError(f"cannot read Parquet snapshot {path}: {shown_text(str(e), 300)}") from e
    check_column_types(path, table.schema)
    return table, table_header(path, table)


def table_header(path: str | Path | BinaryIO, table: Any) -> dict[str, Any]:
    """The snapshot header of a table read from `path`; SnapshotError when there is none to read."""
    meta = (table.schema.metadata or {}).get(METADATA_KEY)
    header = read_json_document(meta, str(path), "snapshot", SNAPSHOT_KEYS, within=HEADER_PLACE) if meta else {}
    if not isinstance(header, dict):
        raise SnapshotError(
            f"{path} ({HEADER_PLACE}) holds no JSON object, so the file is not a snapshot; write snapshots with "
            "`reconcile snapshot --format parquet`."
        )
    if not header and not table.num_rows:
        raise SnapshotError(f"{path} is an empty Parquet file without a snapshot header")
    return header


def state_data(
    path: str | Path, header: dict[str, Any], rows: list[dict[str, Any]], topic_data: Callable[[dict[str, Any]], Any]
) -> tuple[dict[str, Any], list[str], dict[Any, int]]:
    """ObservedState's input from the header and the rows (each topic read: `topic_data(row)`),
    the problems found on the way, and each topic's row."""
    problems: list[str] = []
    version = header.get("parquet_format_version", PARQUET_FORMAT_VERSION)
    if version != PARQUET_FORMAT_VERSION:
        problems.append(
            f"header: parquet_format_version {shown_text(repr(version), 40)} is not supported (this tool "
            f"reads version {PARQUET_FORMAT_VERSION})"
        )
    first = rows[0] if rows else {}
    cluster = header.get("cluster", first.get("cluster"))
    topics: dict[Any, Any] = {}
    hidden: list[Any] = []
    absent: dict[Any, Any] = {}
    row_of: dict[Any, int] = {}
    activity: dict[Any, Any] = {}
    for i, row in enumerate(rows):
        name = row.get("topic")
        if row.get("cluster", cluster) != cluster:
            problems.append(
                f"row {i} (topic {shown_text(repr(name), 60)}): cluster {shown_text(repr(row.get('cluster')), 60)} "
                f"differs from the snapshot's {shown_text(repr(cluster), 60)}"
            )
        if name in row_of:
            problems.append(f"row {i}: topic {shown_text(repr(name), 60)} is also in row {row_of[name]}")
            continue
        row_of[name] = i
        status = row.get("status")
        if status is None:
            topics[name] = topic_data(row)
            if row.get("activity") is not None:
                activity[name] = activity_data(name, row["activity"])
            problems += [
                f"row {i} (topic {shown_text(repr(name), 60)}): configs.{shown_text(str(k), 60)}: {REPEATED_KEY}"
                for k in repeated_config_keys(row.get("configs"))
            ]
        elif status not in (HIDDEN, ABSENT) or row.get("partitions"):
            problems.append(
                f"row {i} (topic {shown_text(repr(name), 60)}): status {shown_text(repr(status), 40)} "
                f"is null for a topic read, or {HIDDEN!r} or {ABSENT!r} (without partitions)"
            )
        elif status == HIDDEN:
            hidden.append(name)
        else:
            absent[name] = row.get("authorized_operations") or []
    groups = header.get("group_offsets") or {}
    if isinstance(groups, dict):
        groups = {g: dict(by_topic) if isinstance(by_topic, dict) else by_topic for g, by_topic in groups.items()}
        for i, row in enumerate(rows):
            for j, entry in enumerate(row.get("group_offsets") or []):
                if not isinstance(entry, dict):
                    problems.append(f"row {i} (topic {shown_text(repr(row.get('topic')), 60)}): group_offsets[{j}] is null")
                    continue
                by_topic = groups.setdefault(entry.get("group"), {})
                if isinstance(by_topic, dict):
                    by_topic.setdefault(row.get("topic"), {})[entry.get("partition")] = entry.get("offset")
    data = {
        "format_version": header.get("format_version", SNAPSHOT_FORMAT_VERSION),
        "cluster": cluster,
        "cluster_id": header.get("cluster_id", first.get("cluster_id")),
        "controller_id": header.get("controller_id", first.get("controller_id")),
        "taken_at": header.get("taken_at", first.get("run")),
        "brokers": header.get("brokers", []),
        "topics": topics,
        "group_offsets": groups,
        "hidden_topics": hidden,
        "absent_topic_operations": absent,
        "cluster_authorized_operations": header.get("cluster_authorized_operations", first.get("cluster_authorized_operations")),
        "sizes_refused": header.get("sizes_refused", first.get("sizes_refused")),
        "reassignments": header.get("reassignments", {}),
        "log_dirs": header.get("log_dirs", {}),
        "capacity_unknown": header.get("capacity_unknown", {}),
        "activity": activity,
    }
    unknown = sorted(set(header) - set(data) - {"parquet_format_version"})
    if unknown:
        problems.append(f"header: unknown {noun(len(unknown), 'key')} {shown_text(', '.join(map(str, unknown)), 200)}")
    return data, problems, row_of


def _place(error: ErrorDetails, row_of: dict) -> str:
    """A problem with its Parquet row: `row 3 (topic "t"): partitions[2].high_watermark: ...`."""
    loc = tuple(error["loc"])
    if len(loc) >= 2 and loc[0] == "topics" and loc[1] in row_of:
        return f"row {row_of[loc[1]]} (topic {shown_text(repr(loc[1]), 60)}): {problem_line(error, SNAPSHOT_KEYS, 2, explain)}"
    if len(loc) >= 2 and loc[0] == "activity" and loc[1] in row_of:
        where = f"row {row_of[loc[1]]} (topic {shown_text(repr(loc[1]), 60)})"
        return f"{where}: activity.{problem_line(error, SNAPSHOT_KEYS, 2, explain)}"
    if len(loc) >= 3 and loc[0] == "group_offsets" and loc[2] in row_of:
        return f"row {row_of[loc[2]]} (topic {shown_text(repr(loc[2]), 60)}): {problem_line(error, SNAPSHOT_KEYS, 0, explain)}"
    return f"header: {problem_line(error, SNAPSHOT_KEYS, 0, explain)}"


def _topic_data(row: dict[str, Any]) -> dict[str, Any]:
    """A row as ObservedTopic's input, unchecked (the model checks it): nulls stay nulls, so they
    are reported where they are."""
    partitions = row.get("partitions")
    if isinstance(partitions, list):
        partitions = [_partition_data(p) for p in partitions]
    elif partitions is None:
        partitions = []
    configs = row.get("configs")
    if isinstance(configs, list):
        configs = {
            c.get("key") if isinstance(c, dict) else None: {k: c.get(k) for k in ("value", "source", "sensitive", "read_only")}
            if isinstance(c, dict)
            else c
            for c in configs
        }
    elif configs is None:
        configs = {}
    return {
        "name": row.get("topic"),
        "topic_id": row.get("topic_id"),
        "internal": _internal(row),
        "configs": configs,
        "partitions": partitions,
        "authorized_operations": row.get("authorized_operations"),
    }


def _internal(row: dict[str, Any]) -> Any:
    """A row's `internal`: null (not written) is False; any other value goes to the models as it is."""
    internal = row.get("internal")
    return False if internal is None else internal


def _partition_data(p: Any) -> Any:
    """A partition's struct as ObservedPartition's input: changed in place (the row is the reader's own)."""
    if not isinstance(p, dict):
        return p
    by_time = p.get("offsets_by_timestamp")
    if isinstance(by_time, list):
        p["offsets_by_timestamp"] = {
            e.get("timestamp") if isinstance(e, dict) else None: e.get("offset") if isinstance(e, dict) else e for e in by_time
        }
    elif by_time is None:
        p["offsets_by_timestamp"] = {}
    return p


def count_partitions_parquet(path: str | Path) -> int:
    """Partitions in a Parquet snapshot without loading it: the value count of the nested
    `partitions.partition` column, from the file's footer."""
    pa = require_pyarrow(path)
    try:
        meta = pa.parquet.ParquetFile(path).metadata
        names = [meta.schema.column(i).path for i in range(meta.num_columns)]
        index = names.index("partitions.list.element.partition")
        return sum(meta.row_group(g).column(index).num_values for g in range(meta.num_row_groups))
    except (OSError, ValueError, pa.ArrowException) as e:
        raise SnapshotError(
            f"cannot read Parquet snapshot {path}: {shown_text(str(e), 300)}; write snapshots with "
            "`reconcile snapshot --format parquet`."
        ) from e
