"""What a Kafka 4.0 broker does with topic and broker configuration: which source a topic's value
comes from, its synonyms, the broker-resource view, and the INVALID_CONFIG answer.

The rules themselves (keys, types, defaults, validators) are Kafka's, stated in `log_config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import log_config
from .log import RetentionRules, SegmentLimits
from .log_config import TOPIC_CONFIGS, Type

# ConfigSource ids on the wire (DescribeConfigsResponse / CreateTopicsResponse).
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# The dynamic broker configs the test cluster models (QuotaConfig: LONG, atLeast(0), default
# Long.MAX_VALUE = unthrottled). They throttle replicas listed in the topic configs
# leader/follower.replication.throttled.replicas while those copy a log.
THROTTLE_RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
# Broker settings Kafka refuses to change at runtime (DynamicBrokerConfig.nonDynamicConfigs).
NOT_DYNAMIC = (
    "log.initial.task.delay.ms",
    "log.retention.check.interval.ms",
    "num.partitions",
    "default.replication.factor",
    "offsets.topic.num.partitions",
    "offsets.topic.replication.factor",
)

# Broker settings that are not topic-key synonyms but that the test cluster honours.
BROKER_DEFAULTS = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "3",
    # Retention checks: the first 30 s after a broker starts, then every 5 minutes. Neither is
    # dynamic; the test cluster runs them only when asked (TestCluster.enforce_retention) or
    # with TestCluster(retention_checks=True).
    "log.initial.task.delay.ms": "30000",
    "log.retention.check.interval.ms": "300000",
}


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str
    source: int
    # (name, value, source) from most to least specific, as DescribeConfigs include_synonyms shows.
    synonyms: tuple[tuple[str, str, int], ...]
    read_only: bool = False
    sensitive: bool = False


def broker_value(broker_configs: Mapping[str, str], topic_key: str) -> tuple[str, str] | None:
    """The (broker key, value) a topic inherits for `topic_key`: the first synonym the broker sets
    (the `.ms` form wins over `.minutes` and `.hours`), in the topic key's unit."""
    for key, factor in TOPIC_CONFIGS[topic_key].synonyms:
        if key in broker_configs:
            value = broker_configs[key]
            return key, value if factor == 1 else str(int(value) * factor)
    return None


def resolve(topic_key: str, topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> ConfigValue:
    spec = TOPIC_CONFIGS[topic_key]
    synonyms = []
    if topic_key in topic_configs:
        synonyms.append((topic_key, topic_configs[topic_key], DYNAMIC_TOPIC_CONFIG))
    inherited = broker_value(broker_configs, topic_key)
    if inherited is not None:
        synonyms.append((inherited[0], inherited[1], STATIC_BROKER_CONFIG))
    synonyms.append((spec.synonyms[0][0] if spec.synonyms else topic_key, spec.default, DEFAULT_CONFIG))
    _, value, source = synonyms[0]
    return ConfigValue(topic_key, value, source, tuple(synonyms))


def effective(topic_key: str, topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> object:
    """The value in force, parsed as the broker reads it (a trimmed string, an int, a list...)."""
    return log_config.parse(TOPIC_CONFIGS[topic_key], resolve(topic_key, topic_configs, broker_configs).value)


def effective_int(topic_key: str, topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> int:
    value = effective(topic_key, topic_configs, broker_configs)
    assert isinstance(value, int) and TOPIC_CONFIGS[topic_key].type in (Type.INT, Type.LONG)
    return value


def deletes_records(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> bool:
    """LogConfig.delete: DeleteRecords is refused unless cleanup.policy lists delete. An empty
    list, valid in 4.0, means neither compaction nor deletion."""
    return "delete" in _policy(topic_configs, broker_configs)


def _policy(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> set[str]:
    policy = effective("cleanup.policy", topic_configs, broker_configs)
    assert isinstance(policy, list)
    return {part.lower() for part in policy}


def segment_limits(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> SegmentLimits:
    """segment.bytes and segment.ms in force (log.segment.bytes, log.roll.ms/hours inherited)."""
    return SegmentLimits(
        effective_int("segment.bytes", topic_configs, broker_configs), effective_int("segment.ms", topic_configs, broker_configs)
    )


def retention_rules(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> RetentionRules:
    """What a retention check applies to the topic's logs (tiered storage is refused, so the
    local.retention.* keys never apply)."""
    policy = _policy(topic_configs, broker_configs)
    return RetentionRules(
        effective_int("retention.ms", topic_configs, broker_configs),
        effective_int("retention.bytes", topic_configs, broker_configs),
        delete="delete" in policy,
        compact_only=policy == {"compact"},
    )


def effective_topic_configs(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> list[ConfigValue]:
    """Every topic config key with its effective value, sorted by name like the controller does."""
    return [resolve(k, topic_configs, broker_configs) for k in sorted(TOPIC_CONFIGS)]


def validate_topic_configs(configs: Mapping[str, str | None]) -> str | None:
    """Why the broker refuses this full set of topic-level overrides (INVALID_CONFIG), or None."""
    try:
        log_config.validate(configs)
    except log_config.ConfigError as e:
        return str(e)
    return None


def is_list_config(key: str) -> bool:
    spec = TOPIC_CONFIGS.get(key)
    return spec is not None and spec.type is Type.LIST


def list_parts(value: str | None, key: str) -> list[str]:
    """ConfigurationControlManager.getParts: the items of a LIST value (its default when unset)."""
    if value is None:
        value = TOPIC_CONFIGS[key].default
    return [part for part in value.split(",") if part]


def wire_type(key: str) -> int:
    spec = TOPIC_CONFIGS.get(key)
    return spec.type.value if spec is not None else 0


def broker_setting(broker_configs: Mapping[str, str], key: str) -> str:
    return broker_configs.get(key, BROKER_DEFAULTS.get(key, ""))


def _broker_defaults() -> dict[str, str]:
    defaults = {spec.synonyms[0][0]: spec.default for spec in TOPIC_CONFIGS.values() if spec.synonyms}
    defaults.update(BROKER_DEFAULTS)
    return defaults


def _known_broker_key(key: str) -> bool:
    return (
        key in THROTTLE_RATE_KEYS
        or key in BROKER_DEFAULTS
        or any(key == name for spec in TOPIC_CONFIGS.values() for name, _ in spec.synonyms)
    )


def describe_broker(
    broker_configs: Mapping[str, str],
    dynamic_default: Mapping[str, str] | None = None,
    dynamic_own: Mapping[str, str] | None = None,
) -> list[ConfigValue]:
    """The broker-resource view: its own dynamic keys (source 2), the cluster-wide dynamic ones
    (3), statically set keys (4) and the defaults we model (5). The throttle rates have no
    default listed: Kafka leaves them out until set. A dynamic key no broker config defines is
    listed as sensitive (value null), as KafkaConfig.maybeSensitive treats an unknown type."""
    layers = (
        (dynamic_own or {}, DYNAMIC_BROKER_CONFIG),
        (dynamic_default or {}, DYNAMIC_DEFAULT_BROKER_CONFIG),
        (broker_configs, STATIC_BROKER_CONFIG),
        (_broker_defaults(), DEFAULT_CONFIG),
    )
    result = []
    for key in sorted(set().union(*(layer for layer, _ in layers))):
        synonyms = tuple((key, layer[key], source) for layer, source in layers if key in layer)
        _, value, source = synonyms[0]
        unknown = source in (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG) and not _known_broker_key(key)
        # Only the keys the test cluster can change at runtime are writable over the wire.
        result.append(ConfigValue(key, value, source, synonyms, read_only=key not in THROTTLE_RATE_KEYS, sensitive=unknown))
    return result


def dynamic_broker_config_error(key: str, value: str) -> str | None:
    """Why a broker refuses to set `key` to `value` at runtime (DynamicBrokerConfig.validate,
    answered as INVALID_REQUEST), or None. Keys no broker config defines are accepted and
    stored, as Kafka does; known keys whose runtime change the test cluster does not model are
    refused rather than silently ignored."""
    if key in NOT_DYNAMIC:
        return f"Cannot update these configs dynamically: Set({key})"
    if key in THROTTLE_RATE_KEYS:
        try:
            rate = int(value.strip())
        except ValueError:
            return f"Invalid value {value} for configuration {key}: Not a number of type LONG"
        if rate < 0:
            return f"Invalid value {value} for configuration {key}: Value must be at least 0"
        return None
    if _known_broker_key(key):
        return f"Setting the broker config {key} at runtime is not supported by the test cluster"
    return None


def throttle_rate(key: str, own: Mapping[str, str], cluster_default: Mapping[str, str], static: Mapping[str, str]) -> float:
    """The rate in force for a broker, in bytes/s; unset is unthrottled (inf)."""
    for layer in (own, cluster_default, static):
        if key in layer:
            return float(int(layer[key].strip()))
    return float("inf")


def throttled(replicas_config: str | None, partition: int, broker: int) -> bool:
    """Whether leader/follower.replication.throttled.replicas lists the replica ("*": all)."""
    items = [item.strip() for item in (replicas_config or "").split(",") if item.strip()]
    return items == ["*"] or f"{partition}:{broker}" in {item.replace(" ", "") for item in items}
