"""Topic and broker configuration as a Kafka 4.0 broker resolves and validates it.

The catalogue of keys, types and defaults is the project's `reconciler.kafka_configs`; this module
adds what a broker does with it: which source a value comes from, synonyms, and the checks that
make CreateTopics / IncrementalAlterConfigs answer INVALID_CONFIG.
"""
from __future__ import annotations

from dataclasses import dataclass

from reconciler.kafka_configs import TOPIC_CONFIGS, ConfigType, value_error

# ConfigSource ids on the wire (DescribeConfigsResponse / CreateTopicsResponse).
DYNAMIC_TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# ConfigType ids on the wire (DescribeConfigs v3+).
WIRE_TYPE = {
    ConfigType.BOOLEAN: 1, ConfigType.STRING: 2, ConfigType.INT: 3, ConfigType.LONG: 5,
    ConfigType.DOUBLE: 6, ConfigType.LIST: 7,
}

# Broker settings that are not topic-key synonyms but that the test cluster honours.
BROKER_DEFAULTS = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "3",
}

# Broker keys expressed in coarser units that Kafka also accepts as synonyms of a topic key
# (the `.ms` form wins when both are set, as in KafkaConfig).
_COARSE_SYNONYMS = {
    "retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "segment.ms": (("log.roll.hours", 3_600_000),),
    "segment.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
}


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str | None
    source: int
    # (name, value, source) from most to least specific, as DescribeConfigs include_synonyms shows.
    synonyms: tuple[tuple[str, str | None, int], ...]
    read_only: bool = False
    sensitive: bool = False


def broker_value(broker_configs: dict[str, str], topic_key: str) -> tuple[str, str] | None:
    """The (broker key, value) a topic inherits for `topic_key`, if the broker sets it."""
    spec = TOPIC_CONFIGS[topic_key]
    if spec.broker_synonym and spec.broker_synonym in broker_configs:
        return spec.broker_synonym, broker_configs[spec.broker_synonym]
    for key, factor in _COARSE_SYNONYMS.get(topic_key, ()):
        if key in broker_configs:
            return key, str(int(broker_configs[key]) * factor)
    return None


def resolve(topic_key: str, topic_configs: dict[str, str], broker_configs: dict[str, str]) -> ConfigValue:
    spec = TOPIC_CONFIGS[topic_key]
    synonyms = []
    if topic_key in topic_configs:
        synonyms.append((topic_key, topic_configs[topic_key], DYNAMIC_TOPIC_CONFIG))
    inherited = broker_value(broker_configs, topic_key)
    if inherited is not None:
        synonyms.append((inherited[0], inherited[1], STATIC_BROKER_CONFIG))
    synonyms.append((spec.broker_synonym or topic_key, spec.default, DEFAULT_CONFIG))
    _, value, source = synonyms[0]
    return ConfigValue(topic_key, value, source, tuple(synonyms))


def effective_topic_configs(topic_configs, broker_configs) -> list[ConfigValue]:
    """Every topic config key with its effective value, sorted by name like the controller does."""
    return [resolve(k, topic_configs, broker_configs) for k in sorted(TOPIC_CONFIGS)]


def validate_topic_configs(configs: dict[str, str | None]) -> str | None:
    """Why this full set of topic-level overrides is invalid (INVALID_CONFIG), or None."""
    for key, value in configs.items():
        if value is None:
            return f"Null value not supported for topic configs: {key}"
        problem = value_error(key, value)
        if problem is not None:
            if key not in TOPIC_CONFIGS:
                return f"Unknown topic config name: {key}"
            return f"Invalid value {value} for configuration {key}: {problem}"
    # LogConfig.validateRemoteStorageOnlyIfSystemEnabled: the test cluster's brokers never enable
    # remote.log.storage.system.enable, so tiered storage on a topic is refused, as Kafka does.
    if (configs.get("remote.storage.enable") or "").lower() == "true":
        return "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
    return None


def is_list_config(key: str) -> bool:
    spec = TOPIC_CONFIGS.get(key)
    return spec is not None and spec.type is ConfigType.LIST


def list_parts(value: str | None, key: str) -> list[str]:
    """ConfigurationControlManager.getParts: the items of a LIST value (its default when unset)."""
    if value is None:
        value = TOPIC_CONFIGS[key].default
    return [part for part in value.split(",") if part]


def wire_type(key: str) -> int:
    spec = TOPIC_CONFIGS.get(key)
    return WIRE_TYPE[spec.type] if spec is not None else 0


def broker_setting(broker_configs: dict[str, str], key: str) -> str:
    return broker_configs.get(key, BROKER_DEFAULTS.get(key, ""))


def describe_broker(broker_configs: dict[str, str]) -> list[ConfigValue]:
    """The broker-resource view: statically set keys (source 4) plus the defaults we model (5)."""
    keys = set(broker_configs) | set(BROKER_DEFAULTS) | {
        spec.broker_synonym for spec in TOPIC_CONFIGS.values() if spec.broker_synonym}
    defaults = {spec.broker_synonym: spec.default for spec in TOPIC_CONFIGS.values() if spec.broker_synonym}
    defaults.update(BROKER_DEFAULTS)
    result = []
    for key in sorted(keys):
        if key in broker_configs:
            value, source = broker_configs[key], STATIC_BROKER_CONFIG
        else:
            value, source = defaults.get(key), DEFAULT_CONFIG
        # Static broker configs are read-only over the wire unless dynamically updatable; the
        # test cluster does not support dynamic broker configs, so report them read-only.
        result.append(ConfigValue(key, value, source, ((key, value, source),), read_only=True))
    return result
