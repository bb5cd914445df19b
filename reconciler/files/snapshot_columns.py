"""Parquet snapshots read as columns, for the local drift engine: the rules of
`reconciler.models.observed` proven on whole columns at once, and models built only for the
topics asked for (`SnapshotColumns.topics`).

`read_columns(path)` returns None whenever it cannot prove the file good: a rule broken, or a
shape this module does not take on (offline partitions written with -1 offsets are fine; a
reassignment in progress, a topic listed twice or a header key it does not know are not). The
caller then reads the file with `read_snapshot_parquet`, which accepts it or refuses it with the
messages it always gave, so a file is accepted or refused exactly as before and only good files
take this path. The partitions are checked by the `columns` form of each rule of
`reconciler.models.partition_rules` and the bounds the models' annotations give; the checks here
are never looser than the models': tests/files/test_snapshot_columns.py
breaks each rule and asserts both readers refuse it.

The per-partition columns the drift pre-check compares (`reconciler.drift.quiet`) are numpy
arrays, flattened over the topics in file order (`starts[i]:starts[i + 1]` are topic i's
partitions). pyarrow and numpy are imported when a file is read; without numpy this returns
None, and the files are read as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, get_args

from reconciler.files.snapshot_parquet import activity_data, arrow_schema, state_data, table_header
from reconciler.kafka_configs import TOPIC_NAME_CHARACTERS, TOPIC_NAME_MAX
from reconciler.models.idle import TopicActivity
from reconciler.models.observed import (
    FILE_CONTEXT,
    AclOperation,
    ConfigSource,
    ObservedConfig,
    ObservedPartition,
    ObservedState,
    ObservedTopic,
    shared_config,
)
from reconciler.models.partition_rules import PARTITION_RULES, value_ranges
from reconciler.models.trusted import trusted, trusted_each

if TYPE_CHECKING:
    from reconciler.files.snapshot_bytes import Snapshot

_ACL_OPERATIONS = get_args(AclOperation)
_RANGES = value_ranges(ObservedPartition)
_SOURCES = [int(s) for s in ConfigSource]

# What `state_data` reads of each row but the first.
_ROW_COLUMNS = ["cluster", "topic", "status", "authorized_operations", "group_offsets"]

Configs = tuple[tuple[str, str | None, int, bool, bool], ...]  # (key, value, source, sensitive, read_only), as listed


@dataclass
class SnapshotColumns:
    """A Parquet snapshot proven good. `state` is everything but the topics read (brokers, group
    offsets, hidden topics, ...); the topics are rows of `table`, their models built on demand."""

    path: str
    state: ObservedState  # its `topics` empty
    table: Any  # pyarrow.Table: the topics read (status null), in file order
    names: list[str]
    topic_ids: list[str | None]
    internal: list[bool]
    operations: list[tuple[str, ...] | None]
    configs: list[Configs]
    starts: Any  # numpy int64, len(names) + 1: topic i's partitions are starts[i]:starts[i + 1]
    leader: Any  # numpy int32 per partition
    high_watermark: Any  # numpy int64 per partition
    replica_count: Any  # numpy int64 per partition
    isr_count: Any  # numpy int64 per partition
    replica_starts: Any  # numpy int64, partitions + 1: a partition's replicas in `replicas`
    replicas: Any  # numpy int32, every partition's replicas in order

    @property
    def partitions(self) -> int:
        return int(self.starts[-1])

    def topics(self, rows: list[int]) -> dict[str, ObservedTopic]:
        """The models of the topics in `rows` (indices into `names`), as the file reader builds them.
        Built as trusted models: `read_columns` proved every value good, so the file reader's
        per-topic checks would only repeat that proof."""
        if not rows:
            return {}
        rows = sorted(rows)
        shared: dict[tuple, ObservedConfig] = {}
        out = {}
        for row, partitions in zip(rows, _partition_dicts(self.table.column("partitions").take(rows)), strict=True):
            configs = {
                key: shared_config(shared, value, source, sensitive, read_only)
                for key, value, source, sensitive, read_only in self.configs[row]
            }
            operations = self.operations[row]
            out[self.names[row]] = trusted(
                ObservedTopic,
                {
                    "name": self.names[row],
                    "topic_id": self.topic_ids[row],
                    "internal": self.internal[row],
                    "partitions": trusted_each(ObservedPartition, partitions),
                    "configs": configs,
                    "authorized_operations": None if operations is None else list(operations),
                },
            )
        return out

    def maybe_idle(self, idle_after_ms: int) -> list[int]:
        """The rows whose evidence of idleness shows no record within `idle_after_ms` of its read
        (every partition's largest timestamp known and older): the only topics drift may call idle."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if "activity" not in self.table.column_names:
            return []
        activity = self.table.column("activity").combine_chunks()
        if activity.null_count == len(activity):
            return []
        partitions = pc.struct_field(activity, "partitions")
        newest = pc.struct_field(pc.list_flatten(partitions), "newest_timestamp")
        per_row = (
            pa.table({"row": pc.list_parent_indices(partitions), "newest": newest})
            .group_by("row")
            .aggregate([("newest", "max"), ("newest", "count")])
        )
        rows = per_row.column("row").to_numpy()
        cut = pc.subtract(pc.struct_field(activity, "read_at_ms").take(rows), idle_after_ms)
        complete = pc.equal(per_row.column("newest_count"), pc.list_value_length(partitions).take(rows))
        old = pc.and_(complete, pc.less(per_row.column("newest_max"), cut))
        return sorted(int(r) for r in pc.filter(rows, pc.fill_null(old, False)).to_pylist())

    def activity(self, rows: list[int]) -> dict[str, TopicActivity]:
        """The evidence of idleness of the topics in `rows` that have any, built as the file reader
        builds it (ValidationError: a value the models refuse)."""
        if not rows or "activity" not in self.table.column_names:
            return {}
        structs = self.table.column("activity").take(rows).to_pylist()
        return {
            self.names[r]: TopicActivity.model_validate(activity_data(self.names[r], s), context=FILE_CONTEXT)
            for r, s in zip(rows, structs, strict=True)
            if s is not None
        }

    def with_topics(self, topics: dict[str, ObservedTopic]) -> ObservedState:
        """The snapshot with only `topics` read: for planning and reporting on part of it."""
        return self.state.model_copy(update={"topics": topics})


def _partition_dicts(column: Any) -> list[list[dict[str, Any]]]:
    """Each row's partitions as dicts of ObservedPartition's fields (in its order, as the file
    holds them), offsets_by_timestamp made a mapping. pyarrow's own conversion of the structs
    (14,286 partitions of a 100,000-partition file: 0.017 s, against 0.063 s built field by field)."""
    array = column.combine_chunks()
    flat = array.flatten().to_pylist()
    for partition in flat:
        times = partition["offsets_by_timestamp"]
        partition["offsets_by_timestamp"] = {e["timestamp"]: e["offset"] for e in times} if times else {}
    offsets = array.offsets.to_pylist()
    return [flat[a - offsets[0] : b - offsets[0]] for a, b in pairwise(offsets)]


def read_columns(path: Snapshot) -> SnapshotColumns | None:
    """The snapshot in the Parquet file `path`, proven good, or None (see the module docstring)."""
    try:
        import numpy  # noqa: F401  # the checks below need it; without it, the file reader
        import pyarrow.parquet
    except ImportError:
        return None
    try:
        # ParquetFile, not read_table: the dataset API read_table goes through imports pandas, which
        # would cost more than reading the file. One thread: a cluster's file is small, and pyarrow's
        # pool costs more CPU than it saves (the engines plan one cluster per core).
        table = pyarrow.parquet.ParquetFile(path).read(use_threads=False)
        return _proven(str(path), table, table_header(path, table))
    except Exception:  # noqa: BLE001  # whatever is wrong or not taken on here: the file reader says it
        return None


class _Unproven(Exception):
    """A rule this module cannot prove holds: the file reader decides."""


def _require(condition: Any) -> None:
    if not condition:
        raise _Unproven


def _proven(path: str, table: Any, header: dict[str, Any]) -> SnapshotColumns:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    expected = arrow_schema()
    for column in table.schema:  # the types the checks below rely on (int32 ids, int64 offsets, ...)
        _require(column.name not in expected.names or column.type == expected.field(column.name).type)
    _require(not header.get("reassignments"))  # cross-checked against topics by the models only
    # Everything but the topics' own columns, through the file reader's code and the models:
    # the columns it reads of every row (partitions: only whether there are any), and all of the first.
    lengths = pc.list_value_length(table.column("partitions"))
    # The evidence of idleness is read on demand (`maybe_idle`, `activity`): drift builds only the
    # few topics it may call idle.
    heavy = ("configs", "partitions", "activity")
    first = table.slice(0, 1).drop_columns([c for c in heavy if c in table.column_names]).to_pylist()
    if first and _plain_rows(table, header.get("cluster", first[0].get("cluster")), pc):
        # All the file reader does with such a row but the first is to list its topic's name.
        rows = [{**first[0], "partitions": lengths[0].as_py()}]
        names = table.column("topic").to_pylist()
        _require(len(set(names)) == len(names))  # the reader's "also in row" problem
    else:
        listed = [c for c in _ROW_COLUMNS if c in table.column_names]
        rows = [
            dict(zip(listed + ["partitions"], values, strict=True))
            for values in zip(*(table.column(c).to_pylist() for c in listed), lengths.to_pylist(), strict=True)
        ]
        if rows:
            rows[0] = {**first[0], **rows[0]}
        names = []
    data, problems, _ = state_data(path, header, rows, lambda row: None)
    _require(not problems)
    names = names or list(data["topics"])
    data["topics"] = {}
    state = ObservedState.from_file(data)  # ValidationError: not proven
    _require(not (set(names) & set(state.hidden_topics)))
    _require(not (set(names) & set(state.absent_topic_operations)))

    status = table.column("status") if "status" in table.column_names else None
    read = table if status is None or status.null_count == len(status) else table.filter(pc.is_null(status))
    _require(read.num_rows == len(names))
    topic = read.column("topic")
    _require(topic.to_pylist() == names)
    _require(_topic_names(topic, pa, pc))
    partitions = _list(read.column("partitions"), nullable=False)
    starts, parts = partitions
    counts = np.diff(starts)
    _require(counts.size == 0 or counts.min() >= 1)
    leader, end, replica_count, isr_count, replica_starts, replicas = _proven_partitions(starts, parts)

    configs = _configs(read, pa, pc)
    operations = _operations(read, pa, pc)
    topic_ids = read.column("topic_id").to_pylist() if "topic_id" in read.column_names else [None] * len(names)
    internal = [bool(i) for i in read.column("internal").to_pylist()] if "internal" in read.column_names else [False] * len(names)
    return SnapshotColumns(
        path=path,
        state=state,
        table=read,
        names=names,
        topic_ids=topic_ids,
        internal=internal,
        operations=operations,
        configs=configs,
        starts=starts,
        leader=leader,
        high_watermark=end,
        replica_count=replica_count,
        isr_count=isr_count,
        replica_starts=replica_starts,
        replicas=replicas,
    )


def _topic_names(column: Any, pa: Any, pc: Any) -> bool:
    """kafka_configs.is_topic_name of every value of the string column, at once."""
    if column.null_count:
        return False
    fits = pc.match_substring_regex(column, f"^[{TOPIC_NAME_CHARACTERS}]{{1,{TOPIC_NAME_MAX}}}$")
    dots = pc.is_in(column, value_set=pa.array([".", ".."]))
    return pc.all(pc.and_(fits, pc.invert(dots))).as_py() is not False


def _plain_rows(table: Any, cluster: Any, pc: Any) -> bool:
    """Whether every row is a topic read (status null) of `cluster`, without group offsets."""
    columns = table.column_names
    if not isinstance(cluster, str):
        return False
    if "status" in columns and table.column("status").null_count != table.num_rows:
        return False
    if "group_offsets" in columns and pc.sum(pc.list_value_length(table.column("group_offsets"))).as_py():
        return False
    if "cluster" in columns:
        column = table.column("cluster")
        return column.null_count == 0 and pc.all(pc.equal(column, cluster)).as_py() is True
    return True


def _proven_partitions(starts: Any, parts: Any) -> tuple[Any, ...]:
    """Every value of the partitions `parts` (a struct array; topic i's are starts[i]:starts[i + 1])
    within the models' bounds, and every rule of reconciler.models.partition_rules holding, in its
    `columns` form; the columns the drift pre-check reads."""
    import numpy as np

    values, columns = rule_columns(starts, parts)
    for name, (low, high) in _RANGES.items():  # a bound the models gained without a column here: KeyError, not proven
        numbers, known = values[name]
        if known is not None:
            numbers = numbers[known]
        _require(numbers.size == 0 or (numbers.min() >= low and numbers.max() <= high))
    for rule in PARTITION_RULES:
        _require(rule.columns(columns))
    replica_starts, replicas = columns.lists["replicas"]
    return columns.leader, columns.end, np.diff(replica_starts), np.diff(columns.lists["isr"][0]), replica_starts, replicas


def rule_columns(starts: Any, parts: Any) -> tuple[dict[str, tuple[Any, Any]], SimpleNamespace]:
    """The numbers of every value the models bound (`value_ranges`' names -> the numbers, and
    which of them are not null), and what the rules' `columns` forms read."""
    import numpy as np

    fields = _fields(parts)
    total = int(starts[-1])
    size, size_known = _maybe_ints(fields["size_bytes"])
    epoch_end, epoch_end_known = _maybe_ints(fields["epoch_end_offset"])
    times_starts, times = _list(fields["offsets_by_timestamp"], nullable=True)
    times_fields = _fields(times)
    replica_starts, replicas = _broker_lists(fields["replicas"])
    isr_starts, isr = _broker_lists(fields["isr"])
    offline_starts, offline_replicas = _broker_lists(fields["offline_replicas"])
    values = {
        "partition": (_ints(fields["partition"]), None),
        "leader": (_ints(fields["leader"]), None),
        "leader_epoch": (_ints(fields["leader_epoch"]), None),
        "replicas[]": (replicas, None),
        "isr[]": (isr, None),
        "offline_replicas[]": (offline_replicas, None),
        "log_start_offset": (_ints(fields["log_start_offset"]), None),
        "high_watermark": (_ints(fields["high_watermark"]), None),
        "size_bytes": (size, size_known),
        "epoch_end_offset": (epoch_end, epoch_end_known),
        "offsets_by_timestamp{key}": (_ints(times_fields["timestamp"]), None),
        "offsets_by_timestamp{}": (_ints(times_fields["offset"]), None),
    }
    leader = values["leader"][0]
    columns = SimpleNamespace(
        index=np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], np.diff(starts)),
        partition=values["partition"][0],
        leader=leader,
        start=values["log_start_offset"][0],
        end=values["high_watermark"][0],
        epoch_end_known=epoch_end_known,
        times_count=np.diff(times_starts),
        led=np.flatnonzero((leader >= 0) & (np.diff(replica_starts) > 0)),
        replica_table=_ReplicaTable.of(replica_starts, replicas),
        lists={
            "replicas": (replica_starts, replicas),
            "isr": (isr_starts, isr),
            "offline_replicas": (offline_starts, offline_replicas),
        },
    )
    return values, columns


def _list(column: Any, nullable: bool) -> tuple[Any, Any]:
    """A list column's offsets (numpy, from 0) and its values, its null lists read as empty
    where `nullable` (as the file reader reads them); values must not be null."""
    import numpy as np
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    _require(nullable or array.null_count == 0)
    offsets = array.offsets.to_numpy().astype(np.int64)
    if array.null_count:  # a null list's offsets may span values: count it as empty
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(valid, np.diff(offsets), 0)
        _require(np.array_equal(lengths, np.diff(offsets)))
    values = array.flatten()
    _require(values.null_count == 0)
    return offsets - offsets[0], values


def _fields(structs: Any) -> dict[str, Any]:
    return {structs.type.field(i).name: array for i, array in enumerate(structs.flatten())}


def _ints(array: Any) -> Any:
    _require(array.null_count == 0)
    return array.to_numpy()


def _maybe_ints(array: Any) -> tuple[Any, Any]:
    import numpy as np

    known = array.is_valid().to_numpy(zero_copy_only=False)
    values = array.fill_null(0).to_numpy() if array.null_count else array.to_numpy()
    return values, np.asarray(known, dtype=bool)


def _broker_lists(column: Any) -> tuple[Any, Any]:
    starts, values = _list(column, nullable=False)
    return starts, _ints(values)


class _ReplicaTable:
    """Every partition's replicas as one row of a matrix (padded with -1), to check lists of
    broker ids against them at once: each list holds an id once, and only ids among its
    partition's replicas. Lists are short (a replication factor), so rows are narrow."""

    def __init__(self, rows: Any, ids: Any = None):
        self.rows = rows
        self.ids = ids  # the replica ids the rows were made of

    @classmethod
    def of(cls, starts: Any, ids: Any) -> _ReplicaTable:
        return cls(_matrix(starts, ids), ids)

    def distinct(self, starts: Any, ids: Any) -> bool:
        return not _repeats(self.rows if ids is self.ids else _matrix(starts, ids))

    def distinct_replicas(self, starts: Any, ids: Any) -> bool:
        """Whether each list holds an id once, and only its partition's replicas (`distinct` and
        `holds`). A list equal to its partition's replicas (most in-sync lists) is both, the
        replicas being distinct: only the others are compared."""
        if ids.size == 0:
            return True
        lists = _matrix(starts, ids)
        replicas = self.rows
        if lists.shape == replicas.shape:
            differ = ~(lists == replicas).all(axis=1)
            lists, replicas = lists[differ], replicas[differ]
        if _repeats(lists):
            return False
        return bool(((lists[:, :, None] == replicas[:, None, :]).any(axis=2) | (lists < 0)).all())

    def holds_each(self, partitions: Any, ids: Any) -> bool:
        """Whether each of `ids` is a replica of the partition at the same place in `partitions`.
        Most are its first (a leader, its preferred replica): only the others are compared to each."""
        if ids.size == 0:
            return True
        other = ids != self.rows[partitions, 0]
        partitions, ids = partitions[other], ids[other]
        return bool(ids.size == 0 or (self.rows[partitions] == ids[:, None]).any(axis=1).all())


def _repeats(rows: Any) -> bool:
    """Whether a row of the matrix holds an id (>= 0: -1 pads) twice. Rows are narrow (a
    replication factor): each pair of columns compared beats sorting every row."""
    import numpy as np

    width = rows.shape[1]
    if width > 8:
        ordered = np.sort(rows, axis=1)
        return bool(((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any())
    for i in range(width):
        column = rows[:, i]
        for j in range(i + 1, width):
            if ((column == rows[:, j]) & (column >= 0)).any():
                return True
    return False


def _matrix(starts: Any, ids: Any) -> Any:
    import numpy as np

    counts = np.diff(starts)
    _require(
        counts.size == 0 or int(counts.max()) <= 64
    )  # wider lists are no replica lists Kafka reports: the file reader decides
    return _padded(starts, ids)


def _padded(starts: Any, ids: Any) -> Any:
    """Each list (`ids[starts[i]:starts[i + 1]]`) as a row of int64, -1 after its end where lists
    differ in length."""
    import numpy as np

    counts = np.diff(starts)
    width = int(counts.max()) if counts.size else 0
    if width and int(counts.min()) == width:  # lists of one length (one replication factor): no padding
        return ids.reshape(counts.size, width).astype(np.int64)
    rows = np.full((counts.size, max(width, 1)), -1, dtype=np.int64)
    first, shortest = starts[:-1], int(counts.min()) if counts.size else 0
    for k in range(width):  # a column at a time (lists are narrow): the k-th id of each list that long
        if k < shortest:
            rows[:, k] = ids[first + k]
        else:
            longer = np.flatnonzero(counts > k)
            rows[longer, k] = ids[first[longer] + k]
    return rows


def _configs(read: Any, pa: Any, pc: Any) -> list[Configs]:
    if "configs" not in read.column_names:
        return [()] * read.num_rows
    starts, entries = _list(read.column("configs"), nullable=True)
    fields = _fields(entries)
    for name in ("key", "source", "sensitive", "read_only"):
        _require(fields[name].null_count == 0)
    _require(len(entries) == 0 or pc.min(pc.utf8_length(fields["key"])).as_py() >= 1)
    _require(pc.all(pc.is_in(fields["source"], value_set=pa.array(_SOURCES, pa.int32()))).as_py() is not False)
    _require(_keys_distinct(starts, fields["key"], pc))
    if len(entries) == 0:
        return [()] * read.num_rows
    # Most topics list equal entries: each distinct entry, and each distinct list of them, is built
    # once (and equal lists are one tuple: compared at once where drift groups topics by them).
    entry, first = _distinct_entries(fields, pc)
    built = list(zip(*(fields[n].take(first).to_pylist() for n in _CONFIG_ENTRY), strict=True))
    lists, of_row = _distinct_lists(starts, entry, len(built))
    made = [tuple(built[e] for e in row if e >= 0) for row in lists.tolist()]
    return [made[i] for i in of_row.tolist()]


_CONFIG_ENTRY = ("key", "value", "source", "sensitive", "read_only")
_LIMIT = 1 << 62  # codes combined below this stay exact in int64


def _distinct_entries(fields: dict[str, Any], pc: Any) -> tuple[Any, Any]:
    """Each config entry's index among the distinct entries (all five values equal), and the
    first entry of each."""
    import numpy as np

    code = np.zeros(len(fields["key"]), dtype=np.int64)
    bound = 1
    for name in _CONFIG_ENTRY:
        array = fields[name]
        if name in ("key", "value"):  # strings as their index among the distinct ones (0: null)
            encoded = pc.dictionary_encode(array)
            part, width = encoded.indices.fill_null(-1).to_numpy().astype(np.int64) + 1, len(encoded.dictionary) + 1
        else:  # a config source's int (proven one of _SOURCES above), a flag's 0 or 1
            part = array.to_numpy(zero_copy_only=False).astype(np.int64)
            width = max(_SOURCES) + 1 if name == "source" else 2
        code, bound = _extended(code, bound, part, width)
    _, first, entry = np.unique(code, return_index=True, return_inverse=True)
    return entry.reshape(-1), first


def _distinct_lists(starts: Any, entry: Any, entries: int) -> tuple[Any, Any]:
    """The distinct lists of entries (rows of entry indices padded with -1), and each list's
    index among them (list i is entry[starts[i]:starts[i + 1]])."""
    import numpy as np

    rows = _padded(starts, entry)
    code = np.zeros(len(rows), dtype=np.int64)
    bound = 1
    for column in rows.T:  # a list's code: its entries', one position at a time
        code, bound = _extended(code, bound, column + 1, entries + 1)
    _, first, of_row = np.unique(code, return_index=True, return_inverse=True)
    return rows[first], of_row.reshape(-1)


def _extended(code: Any, bound: int, part: Any, width: int) -> tuple[Any, int]:
    """`code` (each below `bound`) extended by `part` (each below `width`) in mixed radix, and the
    new bound; the codes are made dense first (their index among the distinct ones) where the
    product could leave int64."""
    import numpy as np

    if bound * width >= _LIMIT:
        distinct, code = np.unique(code, return_inverse=True)
        code, bound = code.reshape(-1), distinct.size
    return code * width + part, bound * width


def _keys_distinct(starts: Any, keys: Any, pc: Any) -> bool:
    """Whether no list (list i is keys[starts[i]:starts[i + 1]]) holds a key twice."""
    import numpy as np

    if len(keys) < 2:
        return True
    codes = pc.dictionary_encode(keys).indices.to_numpy().astype(np.int64)
    owner = np.repeat(np.arange(starts.size - 1, dtype=np.int64), np.diff(starts))
    width = int(codes.max()) + 1
    pairs = owner * width + codes
    if (int(owner[-1]) + 1) * width <= 16 * pairs.size:  # pairs below a small bound: counted, not sorted
        return int(np.bincount(pairs).max()) == 1
    return bool(np.unique(pairs).size == pairs.size)


def _operations(read: Any, pa: Any, pc: Any) -> list[tuple[str, ...] | None]:
    if "authorized_operations" not in read.column_names:
        return [None] * read.num_rows
    column = read.column("authorized_operations")
    _, values = _list(column, nullable=True)
    _require(pc.all(pc.is_in(values, value_set=pa.array(_ACL_OPERATIONS))).as_py() is not False)
    return [None if ops is None else tuple(ops) for ops in column.to_pylist()]
