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
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

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
    return SegmentLimits(effective_int("segment.bytes", topic_configs, broker_configs),
                         effective_int("segment.ms", topic_configs, broker_configs))


def retention_rules(topic_configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> RetentionRules:
    """What a retention check applies to the topic's logs (tiered storage is refused, so the
    local.retention.* keys never apply)."""
    policy = _policy(topic_configs, broker_configs)
    return RetentionRules(effective_int("retention.ms", topic_configs, broker_configs),
                          effective_int("retention.bytes", topic_configs, broker_configs),
                          delete="delete" in policy, compact_only=policy == {"compact"})


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


def describe_broker(broker_configs: Mapping[str, str]) -> list[ConfigValue]:
    """The broker-resource view: statically set keys (source 4) plus the defaults we model (5)."""
    defaults = {spec.synonyms[0][0]: spec.default for spec in TOPIC_CONFIGS.values() if spec.synonyms}
    defaults.update(BROKER_DEFAULTS)
    result = []
    for key in sorted(set(broker_configs) | set(defaults)):
        if key in broker_configs:
            value, source = broker_configs[key], STATIC_BROKER_CONFIG
        else:
            value, source = defaults[key], DEFAULT_CONFIG
        # Static broker configs are read-only over the wire unless dynamically updatable; the
        # test cluster does not support dynamic broker configs, so report them read-only.
        result.append(ConfigValue(key, value, source, ((key, value, source),), read_only=True))
    return result
