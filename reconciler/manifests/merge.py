"""The layer merge: a topic's settings on one cluster, from the documents that give them.

Precedence, lowest first:

    the Cluster's `defaults`  <  the TopicTemplate  <  the Topic  <  the Topic's override for that cluster

A setting a layer gives replaces the one below it; `configs` merge key by key. `truncate` is one
setting like the others: a layer that gives it, even as an empty list, replaces the rules below.
A setting a layer leaves out (or writes as null) leaves the one below in effect.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reconciler.manifests.documents import RuleEntry, TopicDefaults, TopicOverride, TopicSettings
from reconciler.manifests.validate import Entry
from reconciler.models.desired import RetentionStepping, SourceRef, TopicState, UndeclaredConfigs
from reconciler.yaml_source import Path_

SETTINGS = ("partitions", "replication_factor", "state", "undeclared_configs", "protected", "retention_stepping",
            "replica_assignment", "truncate")


@dataclass(frozen=True)
class Layer:
    """One layer: the document, where in it the settings are, and its configs as Kafka strings."""

    entry: Entry[Any]
    path: Path_  # () for a topic or template, ("defaults",), ("overrides", CLUSTER)
    settings: TopicDefaults | TopicSettings | TopicOverride
    configs: dict[str, str]

    def gives(self, name: str) -> bool:
        return (name in self.settings.model_fields_set and getattr(self.settings, name) is not None)


@dataclass(frozen=True)
class Place:
    """Where a setting in effect was written, and by which layer (its rank in the merge order)."""

    rank: int
    entry: Entry[Any]
    path: Path_

    def ref(self) -> SourceRef:
        return self.entry.doc.ref(self.path)


@dataclass
class Merged:
    partitions: int | None = None
    replication_factor: int | None = None
    state: TopicState = TopicState.PRESENT
    undeclared_configs: UndeclaredConfigs = UndeclaredConfigs.REPORT
    protected: bool = False
    retention_stepping: RetentionStepping = RetentionStepping.REFUSE
    replica_assignment: dict[int, list[int]] = field(default_factory=dict)  # an override replaces it whole
    truncate: list[RuleEntry] = field(default_factory=list)
    configs: dict[str, str] = field(default_factory=dict)
    set_at: dict[str, Place] = field(default_factory=dict)  # per setting in effect
    config_set_at: dict[str, Place] = field(default_factory=dict)  # per config key
    # Settings whose value in effect the document model refused (and reported): unknown here.
    refused: set[str] = field(default_factory=set)


_CONVERT = {"state": TopicState, "undeclared_configs": UndeclaredConfigs, "retention_stepping": RetentionStepping}


def merge(layers: list[Layer]) -> Merged:
    """The settings in effect, `layers` given lowest first."""
    merged = Merged()
    blank = Merged()
    for rank, layer in enumerate(layers):
        for name in SETTINGS:
            place = Place(rank, layer.entry, layer.path + (name,))
            if layer.entry.is_refused(place.path):
                setattr(merged, name, getattr(blank, name))
                merged.set_at[name] = place
                merged.refused.add(name)
            elif name in type(layer.settings).model_fields and layer.gives(name):
                value = getattr(layer.settings, name)
                setattr(merged, name, _CONVERT[name](value) if name in _CONVERT else value)
                merged.set_at[name] = place
                merged.refused.discard(name)
        for key, value in layer.configs.items():
            merged.configs[key] = value
            merged.config_set_at[key] = Place(rank, layer.entry, layer.path + ("configs", key))
    return merged
