"""The layer merge: a topic's settings on one cluster, from the documents that give them.

Precedence, lowest first:

    the Cluster's `defaults`  <  the TopicTemplate  <  the Topic  <  the Topic's override for that cluster

A setting a layer gives replaces the one below it; `configs` merge key by key. `truncate` is one
setting like the others: a layer that gives it, even as an empty list, replaces the rules below.
A setting a layer leaves out (or writes as null) leaves the one below in effect.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from reconciler.manifests.documents import RuleEntry, TopicDefaults, TopicOverride, TopicSettings
from reconciler.manifests.validate import Entry
from reconciler.manifests.yaml_source import Path_
from reconciler.models.desired import RetentionStepping, SourceRef, TopicState, UndeclaredConfigs
from reconciler.units import parse_bytes, parse_duration_ms

SETTINGS = (
    "partitions",
    "replication_factor",
    "state",
    "undeclared_configs",
    "protected",
    "retention_stepping",
    "replica_assignment",
    "truncate",
    "expected_bytes_per_day",
    "delete_only_if_idle_for",
)


class Layer(NamedTuple):
    """One layer: the document, where in it the settings are, and its configs as Kafka strings."""

    entry: Entry[Any]
    path: Path_  # () for a topic or template, ("defaults",), ("overrides", CLUSTER)
    settings: TopicDefaults | TopicSettings | TopicOverride
    configs: dict[str, str]


class Place(NamedTuple):
    """Where a setting in effect was written, and by which layer (its rank in the merge order)."""

    rank: int
    entry: Entry[Any]
    path: Path_

    def ref(self) -> SourceRef:
        return self.entry.doc.ref(self.path)


class Merged:
    """The settings in effect, and the layers they were merged from. Where one was written
    (set_at, config_set_at) is worked out only when a message asks: a merge of 10,000 topics
    would otherwise note a place per setting and config key of each, for the few clashes."""

    __slots__ = (
        "configs",
        "delete_only_if_idle_for",
        "expected_bytes_per_day",
        "layers",
        "partitions",
        "protected",
        "refused",
        "replica_assignment",
        "replication_factor",
        "retention_stepping",
        "state",
        "truncate",
        "undeclared_configs",
    )

    def __init__(self, layers: list[Layer], values: dict[str, Any], configs: dict[str, str], refused: set[str]):
        self.layers = layers
        self.partitions: int | None = values.get("partitions")
        self.replication_factor: int | None = values.get("replication_factor")
        state, undeclared, stepping = values.get("state"), values.get("undeclared_configs"), values.get("retention_stepping")
        self.state = TopicState.PRESENT if state is None else TopicState(state)
        self.undeclared_configs = UndeclaredConfigs.REPORT if undeclared is None else UndeclaredConfigs(undeclared)
        self.protected: bool = values.get("protected", False)
        self.retention_stepping = RetentionStepping.REFUSE if stepping is None else RetentionStepping(stepping)
        # A layer's replica_assignment replaces the one below it whole, as `truncate` does.
        self.replica_assignment: dict[int, list[int]] = values.get("replica_assignment", {})
        self.truncate: list[RuleEntry] = values.get("truncate", [])
        expected = values.get("expected_bytes_per_day")  # checked by the document model: it parses
        self.expected_bytes_per_day: int | None = expected if not isinstance(expected, str) else parse_bytes(expected)
        guard = values.get("delete_only_if_idle_for")  # checked by the document model: it parses
        self.delete_only_if_idle_for: int | None = guard if not isinstance(guard, str) else parse_duration_ms(guard)
        self.configs = configs
        # Settings whose value in effect the document model refused (and reported): unknown here.
        self.refused = refused

    def set_at(self, name: str) -> Place:
        """Where the setting `name` in effect was written (or refused): the highest layer to give it."""
        for rank in range(len(self.layers) - 1, -1, -1):
            entry, path, settings, _ = self.layers[rank]
            if (entry.refused and entry.is_refused(path + (name,))) or (
                name in settings.model_fields_set and getattr(settings, name) is not None
            ):
                return Place(rank, entry, path + (name,))
        raise KeyError(name)

    def config_set_at(self, key: str) -> Place:
        """Where the config `key` in effect was written: the highest layer to give it."""
        for rank in range(len(self.layers) - 1, -1, -1):
            entry, path, _, configs = self.layers[rank]
            if key in configs:
                return Place(rank, entry, path + ("configs", key))
        raise KeyError(key)


def merge(layers: list[Layer]) -> Merged:
    """The settings in effect, `layers` given lowest first."""
    values: dict[str, Any] = {}
    configs: dict[str, str] = {}
    refused: set[str] = set()
    for entry, path, settings, layer_configs in layers:
        # Looked up once per layer, not per setting: a plan of 10,000 topics merges 30,000 layers.
        given = settings.model_fields_set & _fields_of(type(settings))
        # Only the settings a layer gives (or whose value it refused) change what is in effect.
        for name in SETTINGS if entry.refused else given:
            if entry.refused and entry.is_refused(path + (name,)):
                values.pop(name, None)  # as if no layer gave it
                refused.add(name)
            elif name in given:
                value = getattr(settings, name)
                if value is not None:
                    values[name] = value
                    refused.discard(name)
        configs.update(layer_configs)
    return Merged(layers, values, configs, refused)


_FIELDS: dict[type, frozenset[str]] = {}


def _fields_of(model: type[TopicDefaults | TopicSettings | TopicOverride]) -> frozenset[str]:
    """The merged settings a document model has."""
    fields = _FIELDS.get(model)
    if fields is None:
        fields = _FIELDS[model] = frozenset(model.model_fields) & frozenset(SETTINGS)
    return fields
