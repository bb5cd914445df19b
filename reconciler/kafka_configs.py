"""Apache Kafka 4.0 topic configuration keys: their types, allowed values and defaults.

Pure data, shared by the manifest loader (type checks, normalisation) and the test cluster
(DEFAULT_CONFIG values it reports). Source: Kafka's TopicConfig / LogConfig for 4.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from reconciler.errors import shown, shown_text

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
# A legal topic name (Kafka's Topic.validate): 1 to 249 of these characters, and not "." or "..".
TOPIC_NAME_CHARACTERS = "a-zA-Z0-9._-"
TOPIC_NAME_MAX = 249
TOPIC_NAME = re.compile(f"[{TOPIC_NAME_CHARACTERS}]{{1,{TOPIC_NAME_MAX}}}")


def is_topic_name(value: object) -> bool:
    return type(value) is str and TOPIC_NAME.fullmatch(value) is not None and value not in (".", "..")


class ConfigType(str, Enum):
    BOOLEAN = "boolean"
    INT = "int"
    LONG = "long"
    DOUBLE = "double"
    STRING = "string"
    LIST = "list"


class Unit(str, Enum):
    NONE = "none"
    MS = "ms"
    BYTES = "bytes"


@dataclass(frozen=True)
class TopicConfigKey:
    name: str
    type: ConfigType
    default: str
    unit: Unit = Unit.NONE
    # For STRING and LIST keys: the values Kafka accepts (None = any).
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    # The broker setting a topic inherits this key from when it is not set on the topic.
    broker_synonym: str | None = None


def _k(
    name: str,
    type_: ConfigType,
    default: str,
    unit: Unit = Unit.NONE,
    choices: tuple[str, ...] | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    broker: str | None = None,
) -> TopicConfigKey:
    return TopicConfigKey(name, type_, default, unit, choices, minimum, maximum, broker)


B, I, L, D, S, LS = (  # noqa: E741 - short type names keep the catalogue one row per key
    ConfigType.BOOLEAN,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.STRING,
    ConfigType.LIST,
)

TOPIC_CONFIGS: dict[str, TopicConfigKey] = {
    c.name: c
    for c in [
        _k("cleanup.policy", LS, "delete", choices=("delete", "compact"), broker="log.cleanup.policy"),
        _k(
            "compression.type",
            S,
            "producer",
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
            broker="compression.type",
        ),
        _k("compression.gzip.level", I, "-1", broker="compression.gzip.level"),
        _k("compression.lz4.level", I, "9", minimum=1, maximum=17, broker="compression.lz4.level"),
        _k("compression.zstd.level", I, "3", minimum=-131072, maximum=22, broker="compression.zstd.level"),
        _k("delete.retention.ms", L, "86400000", Unit.MS, minimum=0, broker="log.cleaner.delete.retention.ms"),
        _k("file.delete.delay.ms", L, "60000", Unit.MS, minimum=0, broker="log.segment.delete.delay.ms"),
        _k("flush.messages", L, str(LONG_MAX), minimum=1, broker="log.flush.interval.messages"),
        _k("flush.ms", L, str(LONG_MAX), Unit.MS, minimum=0, broker="log.flush.interval.ms"),
        _k("follower.replication.throttled.replicas", LS, ""),
        _k("index.interval.bytes", I, "4096", Unit.BYTES, minimum=0, broker="log.index.interval.bytes"),
        _k("leader.replication.throttled.replicas", LS, ""),
        _k("local.retention.bytes", L, "-2", Unit.BYTES, minimum=-2, broker="log.local.retention.bytes"),
        _k("local.retention.ms", L, "-2", Unit.MS, minimum=-2, broker="log.local.retention.ms"),
        _k("max.compaction.lag.ms", L, str(LONG_MAX), Unit.MS, minimum=1, broker="log.cleaner.max.compaction.lag.ms"),
        _k("max.message.bytes", I, "1048588", Unit.BYTES, minimum=0, broker="message.max.bytes"),
        _k("message.downconversion.enable", B, "true", broker="log.message.downconversion.enable"),  # 4.0: a no-op, still defined
        _k("message.timestamp.after.max.ms", L, "3600000", Unit.MS, minimum=0, broker="log.message.timestamp.after.max.ms"),
        _k("message.timestamp.before.max.ms", L, str(LONG_MAX), Unit.MS, minimum=0, broker="log.message.timestamp.before.max.ms"),
        _k(
            "message.timestamp.type",
            S,
            "CreateTime",
            choices=("CreateTime", "LogAppendTime"),
            broker="log.message.timestamp.type",
        ),
        _k("min.cleanable.dirty.ratio", D, "0.5", minimum=0, maximum=1, broker="log.cleaner.min.cleanable.ratio"),
        _k("min.compaction.lag.ms", L, "0", Unit.MS, minimum=0, broker="log.cleaner.min.compaction.lag.ms"),
        _k("min.insync.replicas", I, "1", minimum=1, broker="min.insync.replicas"),
        _k("preallocate", B, "false", broker="log.preallocate"),
        _k("remote.log.copy.disable", B, "false"),
        _k("remote.log.delete.on.disable", B, "false"),
        _k("remote.storage.enable", B, "false"),
        _k("retention.bytes", L, "-1", Unit.BYTES, broker="log.retention.bytes"),
        _k("retention.ms", L, "604800000", Unit.MS, minimum=-1, broker="log.retention.ms"),
        _k(
            "segment.bytes",
            I,
            "1073741824",
            Unit.BYTES,
            minimum=14,  # 4.0: one legacy record; 1 MiB from 4.1
            broker="log.segment.bytes",
        ),
        _k("segment.index.bytes", I, "10485760", Unit.BYTES, minimum=4, broker="log.index.size.max.bytes"),
        _k("segment.jitter.ms", L, "0", Unit.MS, minimum=0, broker="log.roll.jitter.ms"),
        _k("segment.ms", L, "604800000", Unit.MS, minimum=1, broker="log.roll.ms"),
        _k("unclean.leader.election.enable", B, "false", broker="unclean.leader.election.enable"),
    ]
}

# The topic configs a reassignment throttles its replicas with (set by Kafka's tool and by apply).
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
REPLICATION_THROTTLE_LISTS = frozenset({LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS})

INT_RANGE = (-(2**31), INT_MAX)
LONG_RANGE = (-(2**63), LONG_MAX)

# What Java's Integer.parseInt / Long.parseLong read (Python's int() also takes 1_000 and other
# scripts' digits, which the broker refuses), and plain decimal numbers for doubles (no NaN or
# Infinity: a range check lets NaN through).
_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def value_error(key: str, value: str) -> str | None:
    """Why `value` (already a Kafka string) is not valid for topic config `key`, or None if it is.

    Mirrors the broker's ConfigDef parsing closely enough that a value this accepts is one
    IncrementalAlterConfigs / CreateTopics accepts too.
    """
    spec = TOPIC_CONFIGS.get(key)
    if spec is None:
        return f"unknown topic config key {shown(key)}"
    t = spec.type
    if t is ConfigType.BOOLEAN:
        if value.strip().lower() not in ("true", "false"):
            return f"{key} must be true or false, not {shown(value)}"
        return None
    if t in (ConfigType.INT, ConfigType.LONG):
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            return f"{key} must be a whole number ({t.value}), not {shown(value)}"
        lo, hi = INT_RANGE if t is ConfigType.INT else LONG_RANGE
        if len(text.lstrip("+-0")) > 20 or not lo <= int(text) <= hi:
            return f"{key} is out of range for a {t.value}: {shown_text(value)}"
        n = int(text)
        if spec.minimum is not None and n < spec.minimum:
            return f"{key} must be at least {int(spec.minimum)}, not {value}"
        if spec.maximum is not None and n > spec.maximum:
            return f"{key} must be at most {int(spec.maximum)}, not {value}"
        if key == "compression.gzip.level" and n != -1 and not 1 <= n <= 9:
            return f"{key} must be -1 or between 1 and 9, not {value}"
        return None
    if t is ConfigType.DOUBLE:
        text = value.strip()
        if not _DECIMAL.fullmatch(text) or len(text) > 1000:
            return f"{key} must be a number, not {shown(value)}"
        x = float(text)
        if spec.minimum is not None and x < spec.minimum:
            return f"{key} must be at least {spec.minimum}, not {value}"
        if spec.maximum is not None and x > spec.maximum:
            return f"{key} must be at most {spec.maximum}, not {value}"
        return None
    if spec.choices is not None:
        items = [v.strip() for v in value.split(",")] if t is ConfigType.LIST else [value]
        bad = [v for v in items if v not in spec.choices]
        if bad or (t is ConfigType.LIST and not [v for v in items if v]):
            return f"{key} accepts {', '.join(spec.choices)}; got {shown(value)}"
    return None


def cleanup_policy_allows_delete(value: str | None) -> bool:
    """DeleteRecords is refused by the broker unless cleanup.policy contains `delete`. Not set (None)
    is Kafka's default, delete; an empty value is an empty list, which Kafka 4.0 accepts and which
    does not contain delete."""
    return "delete" in [v.strip() for v in (value if value is not None else "delete").split(",")]


def same_config_value(key: str, a: str | None, b: str | None) -> bool:
    """Compare two Kafka config strings the way the broker would parse them."""
    if a is None or b is None:
        return a is b
    spec = TOPIC_CONFIGS.get(key)
    kind = spec.type if spec else ConfigType.STRING
    try:
        if kind is ConfigType.LIST:
            return [v.strip() for v in a.split(",") if v.strip()] == [v.strip() for v in b.split(",") if v.strip()]
        if kind is ConfigType.BOOLEAN:
            return a.strip().lower() == b.strip().lower()
        if kind in (ConfigType.INT, ConfigType.LONG):
            return int(a.strip()) == int(b.strip())
        if kind is ConfigType.DOUBLE:
            return float(a) == float(b)
    except ValueError:
        pass
    return a == b
