"""What was read from a cluster: a versioned, serializable snapshot.

The planner runs on this whether it came from a live read or from a saved JSON file, so it holds
everything a plan depends on and nothing that needs a connection.
"""
from __future__ import annotations

import json
from datetime import datetime
from enum import IntEnum
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

SNAPSHOT_FORMAT_VERSION = 1


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


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObservedConfig(_Model):
    value: Optional[str] = None  # None for sensitive values, as the broker reports them
    source: ConfigSource = ConfigSource.DEFAULT_CONFIG
    sensitive: bool = False
    read_only: bool = False

    @property
    def set_on_topic(self) -> bool:
        return self.source == ConfigSource.DYNAMIC_TOPIC_CONFIG


class Broker(_Model):
    node_id: int
    host: str
    port: int
    rack: Optional[str] = None


class ObservedPartition(_Model):
    partition: int
    leader: int  # -1 when no leader is available
    leader_epoch: int
    replicas: list[int] = Field(default_factory=list)
    isr: list[int] = Field(default_factory=list)
    offline_replicas: list[int] = Field(default_factory=list)
    log_start_offset: int
    high_watermark: int
    size_bytes: Optional[int] = None
    # End offset of `leader_epoch` as the leader answered OffsetForLeaderEpoch, when asked
    # (partitions with truncation rules): proof that the offsets above belong to that epoch.
    epoch_end_offset: Optional[int] = None
    # Timestamp (ms) -> offset of the first record at or after it, from ListOffsets.
    # -1 means "no such record" and must never reach DeleteRecords.
    offsets_by_timestamp: dict[int, int] = Field(default_factory=dict)

    @property
    def record_count(self) -> int:
        return self.high_watermark - self.log_start_offset


class ObservedTopic(_Model):
    name: str
    topic_id: Optional[str] = None
    internal: bool = False
    partitions: list[ObservedPartition]
    configs: dict[str, ObservedConfig] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _partitions_in_order(self) -> "ObservedTopic":
        indexes = [p.partition for p in self.partitions]
        if indexes != sorted(indexes) or len(set(indexes)) != len(indexes):
            raise ValueError(f"topic {self.name}: partitions must be listed once each, in order")
        return self

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0

    def config_value(self, key: str) -> Optional[str]:
        config = self.configs.get(key)
        return config.value if config else None

    def explicit_configs(self) -> dict[str, ObservedConfig]:
        return {k: c for k, c in self.configs.items() if c.set_on_topic}


class ObservedState(_Model):
    format_version: int = SNAPSHOT_FORMAT_VERSION
    cluster: str  # the cluster's name in the manifests
    cluster_id: Optional[str] = None
    controller_id: Optional[int] = None
    taken_at: Optional[datetime] = None
    brokers: list[Broker] = Field(default_factory=list)
    topics: dict[str, ObservedTopic] = Field(default_factory=dict)
    # group -> topic -> partition -> committed offset (only partitions with a commit)
    group_offsets: dict[str, dict[str, dict[int, int]]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> "ObservedState":
        if self.format_version != SNAPSHOT_FORMAT_VERSION:
            raise ValueError(
                f"snapshot format version {self.format_version} is not supported "
                f"(this tool reads version {SNAPSHOT_FORMAT_VERSION})")
        for name, topic in self.topics.items():
            if name != topic.name:
                raise ValueError(f"topic key {name!r} does not match its name {topic.name!r}")
        return self

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        data["topics"] = dict(sorted(data["topics"].items()))
        data["group_offsets"] = dict(sorted(data["group_offsets"].items()))
        return json.dumps(data, indent=2) + "\n"
