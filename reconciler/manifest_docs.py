"""The manifest documents as written in YAML, one model per `kind`, strict and closed.

These describe the file format (and give `reconcile schema` its JSON Schema). Resolving them into
one DesiredState per cluster happens in reconciler.manifests.
"""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from reconciler.models.desired import ClientSecurity

TopicStateName = Literal["present", "absent"]
UndeclaredName = Literal["report", "remove"]

ConfigValue = str | int | float | bool | list[str | int] | None

# An empty list here is a mistake (a topic on no cluster, a rule waiting for no group), never a choice.
NonEmptyNames = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RuleEntry(_Doc):
    """One truncation rule: exactly one of the fields is given."""

    before_offset: int | dict[int, int] | None = Field(
        None, description="Delete records before this offset in every partition, or {partition: offset}.")
    before_time: datetime | str | None = Field(
        None, description="Delete records older than this RFC 3339 time (with a timezone).")
    keep_last: int | None = Field(None, description="Keep only the last N records of each partition.")
    everything: bool | None = Field(None, description="true: delete every record present at plan time.")
    consumed_by: NonEmptyNames | None = Field(
        None, description="Delete what every one of these consumer groups has committed past.")
    rule: str | None = Field(None, description="Use the shared TruncationRule of this name.")

    def kinds(self) -> list[str]:
        return [k for k in RULE_KINDS if getattr(self, k) is not None]


RULE_KINDS = ("before_offset", "before_time", "keep_last", "everything", "consumed_by", "rule")


class TopicDefaults(_Doc):
    partitions: int | None = None
    replication_factor: int | None = None
    configs: dict[str, ConfigValue] = Field(default_factory=dict)


class TopicOverride(_Doc):
    """What differs on one cluster."""

    partitions: int | None = None
    replication_factor: int | None = None
    configs: dict[str, ConfigValue] = Field(default_factory=dict)
    undeclared_configs: UndeclaredName | None = None
    protected: bool | None = None
    truncate: list[RuleEntry] | None = Field(None, description="Replaces the topic's rules on this cluster.")


class _TopicFields(_Doc):
    state: TopicStateName | None = Field(None, description="absent: delete the topic (explicit opt-in).")
    partitions: int | None = None
    replication_factor: int | None = None
    configs: dict[str, ConfigValue] = Field(default_factory=dict)
    undeclared_configs: UndeclaredName | None = Field(
        None, description="Keys set on the cluster but not declared: report (default) or remove.")
    protected: bool | None = Field(None, description="Never delete or truncate this topic.")
    truncate: list[RuleEntry] = Field(default_factory=list)


class ClusterDoc(_Doc):
    kind: Literal["Cluster"]
    name: str
    bootstrap_servers: list[str] | str
    security: ClientSecurity | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    ignore_topics: list[str] = Field(default_factory=list, description="Regexes never reported as unmanaged.")
    defaults: TopicDefaults = Field(default_factory=TopicDefaults)


class PolicyDoc(_Doc):
    kind: Literal["Policy"]
    clusters: NonEmptyNames | None = Field(None, description="Clusters it applies to (default: all).")
    topic_name_pattern: str | None = None
    min_partitions: int | None = None
    max_partitions: int | None = None
    allowed_replication_factors: Annotated[list[int], Field(min_length=1)] | None = None
    required_configs: dict[str, ConfigValue] = Field(default_factory=dict)
    max_delete_fraction: float | int | None = Field(
        None, description="Largest fraction (0, 1] of a partition's records one apply may delete.")
    protected_topic_patterns: list[str] = Field(default_factory=list)


class TruncationRuleDoc(RuleEntry):
    kind: Literal["TruncationRule"]
    name: str


class TopicTemplateDoc(_TopicFields):
    kind: Literal["TopicTemplate"]
    name: str


class TopicDoc(_TopicFields):
    kind: Literal["Topic"]
    name: str
    clusters: NonEmptyNames | Literal["all"] | None = Field(None, description="Default: every cluster.")
    template: str | None = None
    overrides: dict[str, TopicOverride] = Field(default_factory=dict, description="Per cluster name.")


DOC_MODELS: dict[str, type[_Doc]] = {
    "Cluster": ClusterDoc, "Policy": PolicyDoc, "TruncationRule": TruncationRuleDoc,
    "TopicTemplate": TopicTemplateDoc, "Topic": TopicDoc}

AnyDoc = Annotated[Union[tuple(DOC_MODELS.values())], Field(discriminator="kind")]  # noqa: UP007 - built from a tuple


def manifest_json_schema() -> dict[str, Any]:
    schema = TypeAdapter(AnyDoc).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "kafka-reconciler manifest document"
    return schema
