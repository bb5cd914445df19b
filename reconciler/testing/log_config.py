"""Apache Kafka 4.0's topic configuration rules, stated for the test cluster on their own.

The test cluster stands in for Kafka, so it keeps its own copy of Kafka's rules instead of
sharing the reconciler's catalogue: a mistake in either then shows up as a disagreement.

Taken from Apache Kafka 4.0:
- keys in definition order, types, defaults and validators: LogConfig (storage module), static
  block defining CONFIG; defaults from ServerLogConfigs and LogConfig.DEFAULT_*;
- parsing (Java trim, Integer/Long.parseLong, Double.parseDouble, lists split on \\s*,\\s*) and
  the validators' messages: ConfigDef.parseType, Range, ValidString, ValidList; the message shape
  "Invalid value V for configuration K: M": ConfigException;
- compression levels: CompressionType (GZIP.levelValidator, LZ4/ZSTD between(min, max));
  compression.type values: BrokerCompressionType.names();
- throttled replica lists: ThrottledReplicaListValidator;
- the order of checks: ControllerConfigurationValidator (null values, then LogConfig.validate:
  validateNames, CONFIG.parse in definition order, validateValues, remote storage);
- broker synonyms: ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.

Two 4.0 facts differ from later releases: topic-level segment.bytes is still atLeast(14)
(LegacyRecord.RECORD_OVERHEAD_V0; the 1 MiB floor reached topics in 4.1, KAFKA-19080), and
message.downconversion.enable is still defined, as a deprecated no-op (KAFKA-18269).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

LONG_MAX = 2**63 - 1
INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), LONG_MAX)


class Type(Enum):
    """ConfigDef.Type, with its id on the wire (DescribeConfigsResponse ConfigType)."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    LONG = 5
    DOUBLE = 6
    LIST = 7


class ConfigError(ValueError):
    """Kafka's ConfigException / InvalidConfigurationException: the broker answers INVALID_CONFIG."""


def invalid(key: str, shown: object, message: str) -> ConfigError:
    """ConfigException(name, value, message)."""
    return ConfigError(f"Invalid value {shown} for configuration {key}: {message}")


# A validator gets the key and the parsed value and returns the ConfigException message, or None.
Validator = Callable[[str, object], "ConfigError | None"]


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: Type
    default: str
    validator: Validator | None = None
    # The broker settings a topic inherits the key from, most specific first, each with the
    # factor that turns it into the topic key's unit (ServerTopicConfigSynonyms).
    synonyms: tuple[tuple[str, int], ...] = ()


# -- Java semantics ---------------------------------------------------------------------------


def java_trim(text: str) -> str:
    """String.trim(): only characters up to U+0020 are whitespace."""
    return text.strip("".join(map(chr, range(0x21))))


def java_double_text(x: float) -> str:
    """Double.toString, which ConfigException shows for a parsed DOUBLE."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)  # Python's shortest repr has no exponent in this range, like Java
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)  # finite by the checks above
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    scale = exponent + len(digits) - 1
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{scale}"


_JAVA_INTEGER = re.compile(r"[+-]?(\w+)")
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?)"
)
# Java's \s is ASCII-only.
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")


def _equals_ignore_case(a: str, b: str) -> bool:
    return len(a) == len(b) and all(x == y or x.upper() == y.upper() or x.lower() == y.lower() for x, y in zip(a, b))


def _parse_integer(text: str, bounds: tuple[int, int]) -> int | None:
    """Integer.parseInt / Long.parseLong: a sign and decimal digits of any script, in range."""
    match = _JAVA_INTEGER.fullmatch(text)
    if match is None or not all(unicodedata.decimal(c, None) is not None for c in match.group(1)):
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


def _parse_double(text: str) -> float | None:
    """Double.parseDouble."""
    if not _JAVA_DOUBLE.fullmatch(text):
        return None
    body = text.rstrip("fFdD")
    if "x" in body or "X" in body:
        return float.fromhex(body)
    return float(body)


def parse(key: ConfigKey, raw: str) -> object:
    """ConfigDef.parseType: the typed value, or ConfigError with Kafka's message."""
    text = java_trim(raw)
    t = key.type
    if t is Type.BOOLEAN:
        for literal, value in (("true", True), ("false", False)):
            if _equals_ignore_case(text, literal):
                return value
        raise invalid(key.name, raw, "Expected value to be either true or false")
    if t is Type.STRING:
        return text
    if t is Type.LIST:
        return [] if not text else _LIST_SEPARATOR.split(text)
    number = _parse_integer(text, INT_RANGE if t is Type.INT else LONG_RANGE) if t is not Type.DOUBLE else _parse_double(text)
    if number is None:
        raise invalid(key.name, raw, f"Not a number of type {t.name}")
    return number


def shown(value: object) -> str:
    """How Java prints a parsed value in a ConfigException."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return java_double_text(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


# -- validators (ConfigDef and friends) -------------------------------------------------------


def at_least(minimum: int) -> Validator:
    return between(minimum, None)


def between(minimum: int, maximum: int | None) -> Validator:
    """ConfigDef.Range: NaN passes, as Java's comparisons with NaN are all false."""

    def check(key: str, value: object) -> ConfigError | None:
        assert isinstance(value, (int, float))
        if value < minimum:
            return invalid(key, shown(value), f"Value must be at least {minimum}")
        if maximum is not None and value > maximum:
            return invalid(key, shown(value), f"Value must be no more than {maximum}")
        return None

    return check


def one_of(*allowed: str) -> Validator:
    """ConfigDef.ValidString: case-sensitive."""

    def check(key: str, value: object) -> ConfigError | None:
        if value not in allowed:
            return invalid(key, value, "String must be one of: " + ", ".join(allowed))
        return None

    return check


def each_one_of(*allowed: str) -> Validator:
    """ConfigDef.ValidList (4.0): every item must be allowed; an empty list is valid."""
    item_check = one_of(*allowed)

    def check(key: str, value: object) -> ConfigError | None:
        assert isinstance(value, list)
        return next((e for e in (item_check(key, item) for item in value) if e is not None), None)

    return check


def _gzip_level(key: str, value: object) -> ConfigError | None:
    """CompressionType.GZIP.levelValidator: Deflater levels 1-9, or -1 for zlib's default."""
    assert isinstance(value, int)
    if value > 9 or (value < 1 and value != -1):
        return invalid(key, value, "Value must be between 1 and 9 or equal to -1")
    return None


_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")


def _throttled_replicas(key: str, value: object) -> ConfigError | None:
    """ThrottledReplicaListValidator: "partition:broker" items, or the literal '*'."""
    assert isinstance(value, list)
    items = [java_trim(item) for item in value]
    if all(_REPLICA.fullmatch(item) for item in items) or "".join(items) == "*":
        return None
    return invalid(
        key,
        shown(value),
        f"{key} must be the literal '*' or a list of replicas in the following "
        "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
    )


# -- the table ---------------------------------------------------------------------------------


def _log(name: str, factor: int = 1) -> tuple[str, int]:
    return f"log.{name}", factor


_HOUR, _MINUTE = 3_600_000, 60_000
B, S, I, L, D, LS = Type.BOOLEAN, Type.STRING, Type.INT, Type.LONG, Type.DOUBLE, Type.LIST  # noqa: E741 - one row per key

# LogConfig's definition order: CONFIG.parse validates in this order, so with several bad values
# the broker names the first of them here.
TOPIC_CONFIGS: dict[str, ConfigKey] = {
    k.name: k
    for k in [
        ConfigKey("segment.bytes", I, str(2**30), at_least(14), (_log("segment.bytes"),)),
        ConfigKey("segment.ms", L, str(7 * 24 * _HOUR), at_least(1), (_log("roll.ms"), _log("roll.hours", _HOUR))),
        ConfigKey("segment.jitter.ms", L, "0", at_least(0), (_log("roll.jitter.ms"), _log("roll.jitter.hours", _HOUR))),
        ConfigKey("segment.index.bytes", I, str(10 * 2**20), at_least(4), (_log("index.size.max.bytes"),)),
        ConfigKey("flush.messages", L, str(LONG_MAX), at_least(1), (_log("flush.interval.messages"),)),
        ConfigKey("flush.ms", L, str(LONG_MAX), at_least(0), (_log("flush.interval.ms"), _log("flush.scheduler.interval.ms"))),
        ConfigKey("retention.bytes", L, "-1", None, (_log("retention.bytes"),)),
        ConfigKey(
            "retention.ms",
            L,
            str(7 * 24 * _HOUR),
            at_least(-1),
            (_log("retention.ms"), _log("retention.minutes", _MINUTE), _log("retention.hours", _HOUR)),
        ),
        ConfigKey("max.message.bytes", I, str(2**20 + 12), at_least(0), (("message.max.bytes", 1),)),
        ConfigKey("index.interval.bytes", I, "4096", at_least(0), (_log("index.interval.bytes"),)),
        ConfigKey("delete.retention.ms", L, str(24 * _HOUR), at_least(0), (_log("cleaner.delete.retention.ms"),)),
        ConfigKey("min.compaction.lag.ms", L, "0", at_least(0), (_log("cleaner.min.compaction.lag.ms"),)),
        ConfigKey("max.compaction.lag.ms", L, str(LONG_MAX), at_least(1), (_log("cleaner.max.compaction.lag.ms"),)),
        ConfigKey("file.delete.delay.ms", L, "60000", at_least(0), (_log("segment.delete.delay.ms"),)),
        ConfigKey("min.cleanable.dirty.ratio", D, "0.5", between(0, 1), (_log("cleaner.min.cleanable.ratio"),)),
        ConfigKey("cleanup.policy", LS, "delete", each_one_of("compact", "delete"), (_log("cleanup.policy"),)),
        ConfigKey("unclean.leader.election.enable", B, "false", None, (("unclean.leader.election.enable", 1),)),
        ConfigKey("min.insync.replicas", I, "1", at_least(1), (("min.insync.replicas", 1),)),
        ConfigKey(
            "compression.type",
            S,
            "producer",
            one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
            (("compression.type", 1),),
        ),
        ConfigKey("compression.gzip.level", I, "-1", _gzip_level, (("compression.gzip.level", 1),)),
        ConfigKey("compression.lz4.level", I, "9", between(1, 17), (("compression.lz4.level", 1),)),
        ConfigKey("compression.zstd.level", I, "3", between(-131072, 22), (("compression.zstd.level", 1),)),
        ConfigKey("preallocate", B, "false", None, (_log("preallocate"),)),
        ConfigKey(
            "message.timestamp.type", S, "CreateTime", one_of("CreateTime", "LogAppendTime"), (_log("message.timestamp.type"),)
        ),
        ConfigKey("message.timestamp.before.max.ms", L, str(LONG_MAX), at_least(0), (_log("message.timestamp.before.max.ms"),)),
        ConfigKey("message.timestamp.after.max.ms", L, str(_HOUR), at_least(0), (_log("message.timestamp.after.max.ms"),)),
        ConfigKey("leader.replication.throttled.replicas", LS, "", _throttled_replicas),
        ConfigKey("follower.replication.throttled.replicas", LS, "", _throttled_replicas),
        ConfigKey("message.downconversion.enable", B, "true", None, (_log("message.downconversion.enable"),)),
        ConfigKey("remote.storage.enable", B, "false"),
        ConfigKey("local.retention.ms", L, "-2", at_least(-2), (_log("local.retention.ms"),)),
        ConfigKey("local.retention.bytes", L, "-2", at_least(-2), (_log("local.retention.bytes"),)),
        ConfigKey("remote.log.copy.disable", B, "false"),
        ConfigKey("remote.log.delete.on.disable", B, "false"),
    ]
}


# -- LogConfig.validate ------------------------------------------------------------------------


def validate(configs: Mapping[str, str | None]) -> None:
    """Raise ConfigError with the broker's message if this full set of topic overrides is refused."""
    nulls = [key for key, value in configs.items() if value is None]
    if nulls:
        raise ConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    for key in configs:
        if key not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {key}")
    parsed = parsed_configs({k: v for k, v in configs.items() if v is not None})
    low, high = parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"]
    assert isinstance(low, int) and isinstance(high, int)
    if low > high:  # LogConfig.validateValues
        raise ConfigError(f"conflict topic config setting min.compaction.lag.ms ({low}) > max.compaction.lag.ms ({high})")
    # The test cluster's brokers never set remote.log.storage.system.enable, so tiered storage on
    # a topic is refused (LogConfig.validateRemoteStorageOnlyIfSystemEnabled).
    if parsed["remote.storage.enable"]:
        raise ConfigError(
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
        )


def parsed_configs(configs: Mapping[str, str]) -> dict[str, object]:
    """ConfigDef.parse: every key typed (default when unset) and validated, in definition order."""
    out: dict[str, object] = {}
    for key in TOPIC_CONFIGS.values():
        value = parse(key, configs.get(key.name, key.default))
        problem = key.validator(key.name, value) if key.validator is not None else None
        if problem is not None:
            raise problem
        out[key.name] = value
    return out
