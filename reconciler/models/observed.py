"""What was read from a cluster: a versioned, serializable snapshot, checked when it is built.
The format and every rule it is checked by: docs/snapshot-format.md; a partition's rules are
stated once, in every form the readers check them in, in `reconciler.models.partition_rules`.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime
from enum import IntEnum
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from reconciler.kafka_configs import INT_MAX, LONG_MAX, is_topic_name
from reconciler.models.idle import TopicActivity
from reconciler.models.partition_rules import OFFSET_RULE, OWN_RULES, PARTITION_RULES, breaks, holds, value_ranges
from reconciler.models.trusted import trusted, trusted_each

SNAPSHOT_FORMAT_VERSION = 1

INT32_MAX, INT64_MAX = INT_MAX, LONG_MAX
INT64_MIN = -(2**63)
UNKNOWN = -1  # the "not known" marker of leaders, epochs and offsets (see the module docstring)


# Spelled out rather than built by a function, so type checkers see int types.
Offset = Annotated[int, Field(strict=True, ge=0, le=INT64_MAX)]  # committed group offsets
OffsetOrUnknown = Annotated[int, Field(strict=True, ge=UNKNOWN, le=INT64_MAX)]  # -1 only where the docstring says so
BrokerId = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]
LeaderId = Annotated[int, Field(strict=True, ge=UNKNOWN, le=INT32_MAX)]
LeaderEpoch = Annotated[int, Field(strict=True, ge=UNKNOWN, le=INT32_MAX)]
PartitionId = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]
Port = Annotated[int, Field(strict=True, ge=1, le=65535)]
Size = Annotated[int, Field(strict=True, ge=0, le=INT64_MAX)]
# Dict keys arrive as JSON strings ("3"), so they are converted, not strict.
PartitionKey = Annotated[int, Field(ge=0, le=INT32_MAX)]
BrokerKey = Annotated[int, Field(ge=0, le=INT32_MAX)]
TimestampKey = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]
NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]
# What KIP-430's authorized-operations bitfields can hold (org.apache.kafka.common.acl.AclOperation).
AclOperation = Literal[
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
    "CREATE_TOKENS",
    "DESCRIBE_TOKENS",
]


# Passed as `context` when validating a snapshot file: the rules that only a file can break (the
# live reader's topic names come from Kafka; unit tests build in-memory states with odd names).
FILE_CONTEXT = {"snapshot_file": True}


def _topic_name(value: Any, info: ValidationInfo) -> Any:
    if not (info.context or {}).get("snapshot_file"):
        return value
    if isinstance(value, str) and not is_topic_name(value):
        raise PydanticCustomError(
            "topic_name", "not a legal Kafka topic name (1 to 249 of letters, digits, '.', '_', '-'; not '.' or '..')"
        )
    return value


TopicName = Annotated[StrictStr, BeforeValidator(_topic_name)]


class ConfigSource(IntEnum):
    """DescribeConfigs sources. Only DYNAMIC_TOPIC_CONFIG is "set on this topic"."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


def _source_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, ConfigSource)):
        raise PydanticCustomError("config_source", "a config source is a DescribeConfigs source number (0 to 8)")
    return value


def _problems(title: str, problems: list[tuple[tuple, str, Any]]) -> ValidationError:
    """Several rule violations of one model, each at its own place (pydantic gives after-validators
    one error otherwise, at the model)."""
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=PydanticCustomError("snapshot_rule", message), loc=loc, input=value)
            for loc, message, value in problems
        ],
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObservedConfig(_Model):
    value: StrictStr | None = None  # None for sensitive values, as the broker reports them
    source: Annotated[ConfigSource, BeforeValidator(_source_number)] = ConfigSource.DEFAULT_CONFIG
    sensitive: StrictBool = False
    read_only: StrictBool = False

    @property
    def set_on_topic(self) -> bool:
        return self.source == ConfigSource.DYNAMIC_TOPIC_CONFIG


class Broker(_Model):
    node_id: BrokerId
    host: StrictStr
    port: Port
    rack: StrictStr | None = None


class LogDirCapacity(_Model):
    """A broker's log directory and the filesystem holding it (DescribeLogDirs v4+, KIP-827): its
    size and its free bytes, the whole filesystem's (shared with anything else on it), so what
    it has in use is total - usable, Kafka's share and the rest."""

    log_dir: NonEmptyStr
    total_bytes: Annotated[int, Field(strict=True, ge=1, le=INT64_MAX)]
    usable_bytes: Size

    @model_validator(mode="after")
    def _fits(self) -> LogDirCapacity:
        if self.usable_bytes > self.total_bytes:
            raise _problems(
                "LogDirCapacity",
                [(("usable_bytes",), f"more free bytes than the filesystem's total_bytes {self.total_bytes}", self.usable_bytes)],
            )
        return self

    @property
    def used_bytes(self) -> int:
        return self.total_bytes - self.usable_bytes


class ObservedPartition(_Model):
    partition: PartitionId
    leader: LeaderId  # -1 when no leader is available
    leader_epoch: LeaderEpoch  # -1 when the broker did not report one
    replicas: list[BrokerId] = Field(default_factory=list)
    isr: list[BrokerId] = Field(default_factory=list)
    offline_replicas: list[BrokerId] = Field(default_factory=list)
    # Both -1 (with leader -1) for an offline partition: see the module docstring.
    log_start_offset: OffsetOrUnknown
    high_watermark: OffsetOrUnknown
    size_bytes: Size | None = None
    # End offset of `leader_epoch` as the leader answered OffsetForLeaderEpoch, when asked
    # (partitions with truncation rules): proof that the offsets above belong to that epoch.
    # -1: the leader did not know the epoch (UNDEFINED_EPOCH_OFFSET).
    epoch_end_offset: OffsetOrUnknown | None = None
    # Timestamp (ms) -> offset of the first record at or after it, from ListOffsets.
    # -1 means "no such record" and must never reach DeleteRecords.
    offsets_by_timestamp: dict[TimestampKey, OffsetOrUnknown] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> ObservedPartition:
        if _OWN_RULES_HOLD(
            self.leader,
            self.replicas,
            self.isr,
            self.offline_replicas,
            self.log_start_offset,
            self.high_watermark,
            self.epoch_end_offset,
            self.offsets_by_timestamp,
        ):
            return self
        raise _problems("ObservedPartition", [p for rule in OWN_RULES if breaks(rule, self) for p in rule.problems(self)])

    @classmethod
    def from_reader(
        cls,
        partition: int,
        leader: int,
        leader_epoch: int,
        replicas: list[int],
        isr: list[int],
        offline_replicas: list[int],
        log_start_offset: int,
        high_watermark: int,
        size_bytes: int | None,
        epoch_end_offset: int | None,
        offsets_by_timestamp: dict[int, int],
    ) -> ObservedPartition:
        """For the live reader only: its values are Kafka's typed answers (int32 and int64 on the
        wire), so the type and range rules hold by construction and are not checked again, nor
        the rules of Kafka's replica lists (`PartitionRule.live`). Values that break the others
        (offsets in order, a leader among the replicas) are validated in full, which refuses them."""
        if not _LIVE_RULES_HOLD(leader, replicas, log_start_offset, high_watermark, epoch_end_offset, offsets_by_timestamp):
            return cls(
                partition=partition,
                leader=leader,
                leader_epoch=leader_epoch,
                replicas=replicas,
                isr=isr,
                offline_replicas=offline_replicas,
                log_start_offset=log_start_offset,
                high_watermark=high_watermark,
                size_bytes=size_bytes,
                epoch_end_offset=epoch_end_offset,
                offsets_by_timestamp=offsets_by_timestamp,
            )
        return trusted(
            cls,
            {
                "partition": partition,
                "leader": leader,
                "leader_epoch": leader_epoch,
                "replicas": replicas,
                "isr": isr,
                "offline_replicas": offline_replicas,
                "log_start_offset": log_start_offset,
                "high_watermark": high_watermark,
                "size_bytes": size_bytes,
                "epoch_end_offset": epoch_end_offset,
                "offsets_by_timestamp": offsets_by_timestamp,
            },
        )

    @classmethod
    def all_from_reader(cls, rows: list[dict[str, Any]], offsets_read: bool = True) -> list[ObservedPartition]:
        """`from_reader` of each of `rows` (every field, in the models' order), the rules checked
        with the lookups hoisted: every partition of a cluster passes here on each read.
        `offsets_read=False`: the rows are of a topic whose offsets the read did not ask for, -1 with
        the leader Metadata gave (`offsets_not_read`), which only the live reader makes."""
        live, leader_rules = _LIVE_RULES_HOLD, _LIVE_BUT_OFFSETS_HOLD
        for v in rows:
            start, end, leader, replicas = v["log_start_offset"], v["high_watermark"], v["leader"], v["replicas"]
            if offsets_read:
                good = live(leader, replicas, start, end, v["epoch_end_offset"], v["offsets_by_timestamp"])
            else:  # `offsets_not_read`'s -1 with a leader, which no rule lets a file hold
                good = (
                    start == end == UNKNOWN
                    and v["epoch_end_offset"] is None
                    and not v["offsets_by_timestamp"]
                    and leader_rules(leader, replicas)
                )
            if not good:
                return [cls.from_reader(**v) for v in rows]
        return trusted_each(cls, rows)

    @property
    def offsets_not_read(self) -> bool:
        """Whether the read did not ask for the offsets: -1 with a leader, which the models refuse, so
        only a plan's live read makes it (`ReadScope.offset_topics`), and no file holds it."""
        return self.high_watermark < 0 and self.leader >= 0

    @property
    def unreadable(self) -> str | None:
        """Why the offsets cannot be planned on (offline, or not read: the -1 markers), or None."""
        if self.leader < 0:
            return "has no leader (offline)"
        if self.high_watermark < 0 or self.log_start_offset < 0:
            return "was not read (its offsets are unknown)"
        if self.leader_epoch < 0:
            return "has no known leader epoch, so a truncation could not be fenced"
        return None

    @property
    def record_count(self) -> int:
        return self.high_watermark - self.log_start_offset


class ObservedTopic(_Model):
    name: TopicName
    topic_id: StrictStr | None = None
    internal: StrictBool = False
    partitions: list[ObservedPartition] = Field(min_length=1)
    configs: dict[NonEmptyStr, ObservedConfig] = Field(default_factory=dict)
    authorized_operations: list[AclOperation] | None = None  # KIP-430; None: not known

    @model_validator(mode="after")
    def _partitions_in_order(self) -> ObservedTopic:
        problems = [
            (
                ("partitions", i, "partition"),
                f"partition ids are 0..{len(self.partitions) - 1} in order; this one is {p.partition}, expected {i}",
                p.partition,
            )
            for i, p in enumerate(self.partitions)
            if not _IDS_IN_ORDER(i, p.partition)
        ]
        if problems:
            raise _problems("ObservedTopic", problems)
        return self

    @classmethod
    def from_reader(
        cls,
        name: str,
        topic_id: str | None,
        internal: bool,
        partitions: list[ObservedPartition],
        configs: dict[str, ObservedConfig],
        authorized_operations: list[str] | None,
    ) -> ObservedTopic:
        """For the live reader only (see `ObservedPartition.from_reader`): partitions listed in
        order of their ids as Metadata gave them; a list that is not 0..n-1 is validated in full."""
        in_order = _IDS_IN_ORDER
        if not partitions or not all(in_order(i, p.partition) for i, p in enumerate(partitions)):
            return cls(
                name=name,
                topic_id=topic_id,
                internal=internal,
                partitions=partitions,
                configs=configs,
                authorized_operations=authorized_operations,
            )
        return trusted(
            cls,
            {
                "name": name,
                "topic_id": topic_id,
                "internal": internal,
                "partitions": partitions,
                "configs": configs,
                "authorized_operations": authorized_operations,
            },
        )

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0

    def config_value(self, key: str) -> str | None:
        config = self.configs.get(key)
        return config.value if config else None

    def explicit_configs(self) -> dict[str, ObservedConfig]:
        topic_config = ConfigSource.DYNAMIC_TOPIC_CONFIG  # `set_on_topic`, without a call per config
        return {k: c for k, c in self.configs.items() if c.source == topic_config}

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A topic whose operations are not known is written as snapshots were before they were read.
        data = handler(self)
        if self.authorized_operations is None and isinstance(data, dict):
            data.pop("authorized_operations", None)
        return data


# Kafka's own topics (__consumer_offsets, __transaction_state, ...) are never managed, imported
# nor reported as unmanaged: flagged internal by Metadata, or named with Kafka's prefix for them.
INTERNAL_PREFIX = "__"


def is_internal_topic(name: str, topic: ObservedTopic) -> bool:
    return topic.internal or name.startswith(INTERNAL_PREFIX)


class PartitionReassignment(_Model):
    """A replica reassignment in progress (ListPartitionReassignments, KIP-455). While it runs the
    partition's `replicas` are the target followed by the replicas being removed."""

    adding_replicas: list[BrokerId] = Field(default_factory=list)
    removing_replicas: list[BrokerId] = Field(default_factory=list)


_CONFIG_KEYS = frozenset(ObservedConfig.model_fields)
_PARTITION_ORDER = tuple(ObservedPartition.model_fields)  # as the models write them, so as files hold them
_PARTITION_KEYS = frozenset(_PARTITION_ORDER)
_PARTITION_REQUIRED = frozenset(k for k, f in ObservedPartition.model_fields.items() if f.is_required())
_TOPIC_KEYS = frozenset(ObservedTopic.model_fields)
_ACL_OPERATIONS = frozenset(get_args(AclOperation))
_TIMESTAMP_KEY = re.compile(r"-?[1-9][0-9]{0,18}|0")  # what int() and pydantic read alike, one way only
_SOURCES = {int(s): s for s in ConfigSource}


# The rules of `reconciler.models.partition_rules`, compiled for the paths below (arguments in its NAMES' order).
_OWN_RULES_HOLD = holds(OWN_RULES)  # leader, replicas, isr, offline, start, end, epoch_end, by_time
_LIVE_RULES_HOLD = holds(r for r in OWN_RULES if r.live)  # leader, replicas, start, end, epoch_end, by_time
_LIVE_BUT_OFFSETS_HOLD = holds(r for r in OWN_RULES if r.live and r is not OFFSET_RULE)  # leader, replicas
_REPLICA_RULES_HOLD = holds(r for r in OWN_RULES if r is not OFFSET_RULE)  # leader, replicas, isr, offline
_IDS_IN_ORDER = holds(r for r in PARTITION_RULES if r not in OWN_RULES)  # index, partition
# Asked of each partition of a file (the replica rules' verdicts are kept by value):
# index, partition, leader, start, end, epoch_end, by_time
_ORDER_AND_OFFSETS_HOLD = holds(r for r in PARTITION_RULES if r not in OWN_RULES or r is OFFSET_RULE)
_RANGES = value_ranges(ObservedPartition)
_OFFSET_LOW, _OFFSET_HIGH = _RANGES["log_start_offset"]
_END_LOW, _END_HIGH = _RANGES["high_watermark"]
_SIZE_LOW, _SIZE_HIGH = _RANGES["size_bytes"]
_EPOCH_END_LOW, _EPOCH_END_HIGH = _RANGES["epoch_end_offset"]
_LEADER_LOW, _LEADER_HIGH = _RANGES["leader"]
_EPOCH_LOW, _EPOCH_HIGH = _RANGES["leader_epoch"]
_TIME_LOW, _TIME_HIGH = _RANGES["offsets_by_timestamp{key}"]
_TIME_OFFSET_LOW, _TIME_OFFSET_HIGH = _RANGES["offsets_by_timestamp{}"]


def _partition_default(key: str) -> Any:
    return ObservedPartition.model_fields[key].get_default(call_default_factory=True)


# --- files: the rules above checked on plain values in one pass ------------------------------------
#
# Validating a 100,000-partition snapshot through the models costs more than planning on it. A
# file's topics are first checked here against the same rules, on the plain values JSON or Parquet
# give, and built with `trusted` when every rule holds; a topic breaking any of them (or in a
# shape not foreseen here, e.g. a field missing) is handed to the models instead, which refuse it
# with the messages they always gave. So a value is either accepted by both or explained by the
# models: tests/files/test_fast_validation.py compares the two on every field.


def topic_from_file(values: dict[str, Any], configs: dict[tuple, ObservedConfig]) -> ObservedTopic | None:
    """The topic whose fields (ObservedTopic's, `partitions` as dicts of ObservedPartition's
    fields, `configs` key -> dict, as a JSON snapshot holds them) are `values`, if every rule holds
    for a file; None otherwise. The partition dicts become the models' own (their
    offsets_by_timestamp keys made int), so the caller hands `values` over. `configs`: equal
    configs already built, shared (frozen models)."""
    counted = counted_topic_from_file(values, configs)
    return None if counted is None else counted[0]


def counted_topic_from_file(values: Any, configs: dict[tuple, ObservedConfig]) -> tuple[ObservedTopic, int] | None:
    """`topic_from_file`, and how many key-value pairs the dicts in `values` held: the JSON
    reader's proof that none held a key twice (`reconciler.files.json_document.read_json_file`).
    A topic taken holds no dict the checks below do not count."""
    if type(values) is not dict or not values.keys() <= _TOPIC_KEYS:
        return None
    name, partitions = values.get("name"), values.get("partitions")
    topic_id, internal = values.get("topic_id"), values.get("internal", False)
    operations = values.get("authorized_operations")
    if (
        not is_topic_name(name)
        or not (topic_id is None or type(topic_id) is str)
        or type(internal) is not bool
        or not (
            operations is None or (type(operations) is list and all(type(o) is str and o in _ACL_OPERATIONS for o in operations))
        )
        or type(partitions) is not list
        or not partitions
    ):
        return None
    given_configs = values.get("configs", {})
    built = _configs_from_file(given_configs, configs)
    if built is None:
        return None
    good_replicas, order, order_and_offsets_hold = _GOOD_REPLICAS, _PARTITION_ORDER, _ORDER_AND_OFFSETS_HOLD
    # Each config is a dict (checked), and each partition holds every field unless counted apart.
    pairs = len(values) + len(given_configs) + sum(map(len, given_configs.values())) + len(order) * len(partitions)
    ready, times, lists = [], [], []
    broker_lists: list[list[Any]] = []  # every replica, ISR and offline list, for one check of their types
    for index, p in enumerate(partitions):
        if type(p) is not dict:
            return None
        if tuple(p) != order:  # written by hand, or before a field existed: the defaults
            if not p.keys() <= _PARTITION_KEYS or not p.keys() >= _PARTITION_REQUIRED:
                return None
            pairs += len(p) - len(order)
            p = {key: p[key] if key in p else _partition_default(key) for key in order}
        # In _PARTITION_ORDER: one call instead of a lookup per field, for 100,000 partitions.
        number, leader, epoch, replicas, isr, offline, start, end, size, epoch_end, by_time = p.values()
        if (
            type(number) is not int
            or type(start) is not int
            or type(end) is not int
            or type(leader) is not int
            or not _OFFSET_LOW <= start <= _OFFSET_HIGH
            or not _END_LOW <= end <= _END_HIGH
            or (size is not None and (type(size) is not int or not _SIZE_LOW <= size <= _SIZE_HIGH))
            or (epoch_end is not None and (type(epoch_end) is not int or not _EPOCH_END_LOW <= epoch_end <= _EPOCH_END_HIGH))
            or type(by_time) is not dict
            or not order_and_offsets_hold(index, number, leader, start, end, epoch_end, by_time)
        ):
            return None
        if type(epoch) is not int or type(replicas) is not list or type(isr) is not list or type(offline) is not list:
            return None
        key = (leader, epoch, tuple(replicas), tuple(isr), tuple(offline))
        try:
            good = good_replicas.get(key)
        except TypeError:  # a list holding a list or a mapping
            return None
        if good is None:
            if not set(map(type, itertools.chain(replicas, isr, offline))) <= {int}:
                return None  # and no verdict kept: those of ints only are, under the values they equal
            holds = (
                _LEADER_LOW <= leader <= _LEADER_HIGH
                and _EPOCH_LOW <= epoch <= _EPOCH_HIGH
                and _replicas_hold(leader, replicas, isr, offline)
            )
            good = good_replicas[key] = (replicas, isr, offline) if holds else ()
            if len(good_replicas) > 100_000:
                good_replicas.clear()
        if not good:
            return None
        broker_lists += (replicas, isr, offline)
        ready.append(p)
        lists.append(good)
        if by_time:
            converted = _times_from_file(by_time)
            if converted is None:
                return None
            times.append((p, converted))
            pairs += len(by_time)
    # The verdicts above are keyed by value, where True and 1.0 equal 1: every broker id must be an int.
    if not set(map(type, itertools.chain.from_iterable(broker_lists))) <= {int}:
        return None
    # Only now that every partition passed (a refused topic is left as it came): the lists of
    # broker ids become the equal ones of the verdict, shared, as are empty lookups. A cluster
    # has few replica lists, and a million partitions holding their own copies take 300 MB.
    for p, (replicas, isr, offline) in zip(ready, lists, strict=True):
        p["replicas"], p["isr"], p["offline_replicas"] = replicas, isr, offline
        if not p["offsets_by_timestamp"]:
            p["offsets_by_timestamp"] = _NO_TIMES
    for p, converted in times:
        p["offsets_by_timestamp"] = converted
    topic = trusted(
        ObservedTopic,
        {
            "name": name,
            "topic_id": topic_id,
            "internal": internal,
            "partitions": trusted_each(ObservedPartition, ready),
            "configs": built,
            "authorized_operations": operations,
        },
    )
    return topic, pairs


def _int_in(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


# Leaders, epochs and replica lists seen in files, and whether they hold: a cluster has few
# combinations. Keyed by value (lists as tuples), so a list holding True or 1.0 where 1 is meant
# finds the verdict of the ints: topic_from_file checks the types of every broker id apart. A
# verdict is the lists first seen (ints only), shared by the partitions holding equal ones (the
# models are frozen and nothing changes a list of theirs), or () where the rules do not hold.
_GOOD_REPLICAS: dict[tuple, tuple[list[int], list[int], list[int]] | tuple[()]] = {}
_NO_TIMES: dict[int, int] = {}  # every partition's empty offsets_by_timestamp


def _replicas_hold(leader: int, replicas: list, isr: list, offline: list) -> bool:
    return (
        all(_int_in(b, *_RANGES["replicas[]"]) for b in replicas)
        and all(_int_in(b, *_RANGES["isr[]"]) for b in isr)
        and all(_int_in(b, *_RANGES["offline_replicas[]"]) for b in offline)
        and _REPLICA_RULES_HOLD(leader, replicas, isr, offline)
    )


def _times_from_file(by_time: dict) -> dict[int, int] | None:
    out = {}
    for key, offset in by_time.items():
        if type(key) is str and _TIMESTAMP_KEY.fullmatch(key):
            key = int(key)
        if not _int_in(key, _TIME_LOW, _TIME_HIGH) or not _int_in(offset, _TIME_OFFSET_LOW, _TIME_OFFSET_HIGH) or key in out:
            return None
        out[key] = offset
    return out


def _configs_from_file(configs: Any, built: dict[tuple, ObservedConfig]) -> dict[str, ObservedConfig] | None:
    if type(configs) is not dict:
        return None
    out = {}
    for key, config in configs.items():
        if type(key) is not str or not key or type(config) is not dict or not config.keys() <= _CONFIG_KEYS:
            return None
        value, source = config.get("value"), config.get("source", ConfigSource.DEFAULT_CONFIG.value)
        sensitive, read_only = config.get("sensitive", False), config.get("read_only", False)
        if (
            not (value is None or type(value) is str)
            or type(source) is not int
            or source not in _SOURCES
            or type(sensitive) is not bool
            or type(read_only) is not bool
        ):
            return None
        out[key] = shared_config(built, value, source, sensitive, read_only)  # types checked: True cannot stand for 1
    return out


def shared_config(
    built: dict[tuple, ObservedConfig], value: str | None, source: int, sensitive: bool, read_only: bool
) -> ObservedConfig:
    """The one trusted model of a checked config's values, made once per distinct values in `built`:
    most topics of a snapshot share theirs, so a large file holds a few thousand, not one per key."""
    shape = (value, source, sensitive, read_only)
    found = built.get(shape)
    if found is None:
        found = built[shape] = trusted(
            ObservedConfig, {"value": value, "source": _SOURCES[source], "sensitive": sensitive, "read_only": read_only}
        )
    return found


class ObservedState(_Model):
    format_version: Annotated[int, Field(strict=True)] = SNAPSHOT_FORMAT_VERSION
    cluster: NonEmptyStr  # the cluster's name in the manifests
    cluster_id: StrictStr | None = None
    controller_id: BrokerId | None = None
    taken_at: datetime | None = None
    brokers: list[Broker] = Field(default_factory=list)
    topics: dict[StrictStr, ObservedTopic] = Field(default_factory=dict)
    # group -> topic -> partition -> committed offset (only partitions with a commit)
    group_offsets: dict[NonEmptyStr, dict[TopicName, dict[PartitionKey, Offset]]] = Field(default_factory=dict)
    # What the principal may see and do: see docs/snapshot-format.md.
    hidden_topics: list[TopicName] = Field(default_factory=list)
    absent_topic_operations: dict[TopicName, list[AclOperation]] = Field(default_factory=dict)
    cluster_authorized_operations: list[AclOperation] | None = None
    sizes_refused: NonEmptyStr | None = None
    # topic -> partition -> the reassignment in progress; only partitions with one.
    reassignments: dict[TopicName, dict[PartitionKey, PartitionReassignment]] = Field(default_factory=dict)
    # Disk capacity (docs/capacity.md): broker -> its log directories, where DescribeLogDirs gave
    # their figures; broker -> why they are not known (an old broker, a refusal, an error answer).
    # Both empty: not read.
    log_dirs: dict[BrokerKey, list[LogDirCapacity]] = Field(default_factory=dict)
    capacity_unknown: dict[BrokerKey, NonEmptyStr] = Field(default_factory=dict)
    # topic -> the evidence of its idleness (docs/idle-topics.md), read for guarded deletions, and
    # for every topic in snapshots and drift when the Policy sets idle_after. A topic without it: unknown.
    activity: dict[TopicName, TopicActivity] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @field_validator("format_version")
    @classmethod
    def _version(cls, version: int) -> int:
        if version != SNAPSHOT_FORMAT_VERSION:
            raise PydanticCustomError(
                "snapshot_version",
                "snapshot format version {version} is not supported (this tool reads version {supported})",
                {"version": version, "supported": SNAPSHOT_FORMAT_VERSION},
            )
        return version

    @model_validator(mode="after")
    def _check(self) -> ObservedState:
        return self._checked()

    def _checked(self) -> ObservedState:
        """The state, if the rules between its fields hold; ValidationError listing where not."""
        problems: list[tuple[tuple, str, Any]] = []
        for name, topic in self.topics.items():
            if name != topic.name:
                problems.append((("topics", name, "name"), "the topic's name differs from its key in `topics`", topic.name))
        seen: set[int] = set()
        for i, broker in enumerate(self.brokers):
            if broker.node_id in seen:
                problems.append((("brokers", i, "node_id"), f"broker {broker.node_id} is listed twice", broker.node_id))
            seen.add(broker.node_id)
        for node, dirs in self.log_dirs.items():
            if self.brokers and node not in seen:
                problems.append((("log_dirs", node), f"broker {node} is not among the brokers", node))
            paths = [d.log_dir for d in dirs]
            for i, path in enumerate(paths):
                if path in paths[:i]:
                    problems.append((("log_dirs", node, i, "log_dir"), "this log directory is listed twice", path))
        for node in self.capacity_unknown:
            if self.brokers and node not in seen:
                problems.append((("capacity_unknown", node), f"broker {node} is not among the brokers", node))
        for i, name in enumerate(self.hidden_topics):
            if name in self.topics:
                problems.append((("hidden_topics", i), "a topic read (in `topics`) is not hidden", name))
        for name in self.absent_topic_operations:
            if name in self.topics or name in self.hidden_topics:
                problems.append((("absent_topic_operations", name), "a topic read or hidden is not absent", name))
        for name, evidence in self.activity.items():
            if name != evidence.topic:
                problems.append(
                    (("activity", name, "topic"), "the evidence's topic differs from its key in `activity`", evidence.topic)
                )
        for name, moving in self.reassignments.items():
            owner = self.topics.get(name)
            for partition, reassignment in moving.items():
                where = ("reassignments", name, partition)
                if owner is None or partition >= len(owner.partitions):
                    problems.append((where, "a reassignment of a partition that is not in `topics`", partition))
                    continue
                replicas = owner.partitions[partition].replicas
                for field in ("adding_replicas", "removing_replicas"):
                    outside = [b for b in getattr(reassignment, field) if b not in replicas]
                    if outside:
                        problems.append((where + (field,), f"brokers {outside} are not among the replicas {replicas}", outside))
        if problems:
            raise _problems("ObservedState", problems)
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        # What was not read (or nothing hidden) is left out: such snapshots keep the JSON they had.
        data = handler(self)
        if isinstance(data, dict):
            for key in (
                "hidden_topics",
                "absent_topic_operations",
                "cluster_authorized_operations",
                "sizes_refused",
                "reassignments",
                "log_dirs",
                "capacity_unknown",
            ):
                if data.get(key) in (None, [], {}):
                    data.pop(key, None)
        return data

    def operations(self, topic: str) -> frozenset[str] | None:
        """The principal's known operations on `topic` (read, or absent), or None: not known."""
        found = self.topics.get(topic)
        ops = found.authorized_operations if found is not None else self.absent_topic_operations.get(topic)
        return None if ops is None else frozenset(ops)

    def target_replicas(self, topic: str, partition: int) -> list[int]:
        """The replicas the partition will have: its replicas without those a reassignment is removing."""
        replicas = self.topics[topic].partitions[partition].replicas
        moving = self.reassignments.get(topic, {}).get(partition)
        return replicas if moving is None else [b for b in replicas if b not in moving.removing_replicas]

    @classmethod
    def view_of(cls, cluster: str, topics: dict[str, ObservedTopic]) -> ObservedState:
        """A state of topics already checked (a view of part of another state), not validated
        again: what `model_construct(cluster=..., topics=...)` gives, without its cost (pydantic
        inspects the signature of every default factory on each call, which a drift report would
        pay per topic)."""
        return trusted(cls, {"cluster": cluster, "topics": topics})

    @classmethod
    def from_reader(cls, topics: dict[str, ObservedTopic], **fields: Any) -> ObservedState:
        """A live read's state: its topics are the reader's, each checked when it was built
        (`ObservedTopic.from_reader`), so the rest is validated without them and the rules between
        the topics and the rest are checked after, as `from_file` does (pydantic would run each
        topic's own check again: an after-validator runs on instances too). Anything refused
        then (or a rule that needs the topics, as a reassignment's) is validated whole, as always."""
        try:
            return cls(**fields, topics={}).model_copy(update={"topics": topics})._checked()
        except ValidationError:
            return cls(**fields, topics=topics)

    @classmethod
    def from_file(cls, data: dict[str, Any]) -> ObservedState:
        """A snapshot file's state (`data` as JSON gives it), checked by every rule: each topic
        that holds them all is built at once (`topic_from_file`), the rest by the models, which
        raise ValidationError with the problems as always. `data`'s topics are handed over.

        When every topic was built at once, the rest is validated without them, and the rules
        between the topics and the rest checked after: pydantic would run each built topic's
        own check again (an after-validator runs on instances too), a second per 100,000 topics.
        A problem found then is reported by validating `data` whole, as always."""
        topics = data.get("topics")
        if type(topics) is dict:
            shared: dict[tuple, ObservedConfig] = {}
            data = {**data, "topics": {name: topic_from_file(topic, shared) or topic for name, topic in topics.items()}}
            if all(type(name) is str and type(topic) is ObservedTopic for name, topic in data["topics"].items()):
                try:
                    rest = cls.model_validate({**data, "topics": {}}, context=FILE_CONTEXT)
                    return rest.model_copy(update={"topics": data["topics"]})._checked()
                except ValidationError:
                    pass
        return cls.model_validate(data, context=FILE_CONTEXT)

    def with_topics(self, reread: ObservedState) -> ObservedState:
        """This state with the topics `reread` holds replaced by their fresh reading (whole topics:
        configs, offsets, lookups and sizes from one read stay consistent), for a second read
        decided from the first. What the re-read found hidden or absent replaces the same topics' state."""
        again = set(reread.topics) | set(reread.hidden_topics) | set(reread.absent_topic_operations)
        return self.model_copy(
            update={
                "topics": {**{n: t for n, t in self.topics.items() if n not in again}, **reread.topics},
                "hidden_topics": sorted({*(n for n in self.hidden_topics if n not in again), *reread.hidden_topics}),
                "absent_topic_operations": {
                    **{n: o for n, o in self.absent_topic_operations.items() if n not in again},
                    **reread.absent_topic_operations,
                },
                "sizes_refused": self.sizes_refused or reread.sizes_refused,
                # Capacity is the whole broker's, not the topics': the later read's, if it read any.
                **(
                    {"log_dirs": reread.log_dirs, "capacity_unknown": reread.capacity_unknown}
                    if reread.log_dirs or reread.capacity_unknown
                    else {}
                ),
                "reassignments": {**{n: r for n, r in self.reassignments.items() if n not in again}, **reread.reassignments},
                # A re-read for retention lookups reads no evidence: the first read's stays.
                "activity": {**{n: a for n, a in self.activity.items() if n in self.topics}, **reread.activity},
            }
        )

    def to_plan_on(self) -> ObservedState:
        """The state without its evidence of idleness, which a snapshot's is: a guarded deletion is
        planned only on evidence read for its plan (docs/idle-topics.md), so every plan made from a
        snapshot (`plan --snapshot`, drift from snapshots) keeps it, with a `not-shown-idle` warning."""
        return self.model_copy(update={"activity": {}}) if self.activity else self

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        data["topics"] = dict(sorted(data["topics"].items()))
        data["group_offsets"] = dict(sorted(data["group_offsets"].items()))
        for key in ("reassignments", "activity"):
            if key in data:
                data[key] = dict(sorted(data[key].items()))
        return json.dumps(data, indent=2) + "\n"
