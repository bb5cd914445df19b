"""The change log: what moved on a cluster between two observations of it, topic by topic. Pure.

What a topic is counts, not its traffic: topics created, deleted or recreated (another topic id),
partitions added, the replication factor and the replica sets (in order: the first replica is the
preferred leader), config values and where they come from, and leaders, summarised per topic (a
count: leaders move with every broker restart). Offsets moving is traffic, and the log start
moving is the data-loss and retention signal (`compute`, `lowered_retention`), so neither is here.
Entries are typed (`ChangeLogEntry`) and never carry a value of a key sensitive in either
observation.

Most topics do not change between two observations, so each topic's fingerprint (its id, each
partition's replicas and leader, each config's value and source: plain tuples, no model dumps) is
compared first. Only a topic whose replicas or configs moved is diffed, with deepdiff, and only
in the part that moved; deepdiff's report only locates the change (which partitions, which keys),
and the entries are built from the two topics themselves, so no deepdiff path reaches a report.
Leaders that moved are counted without a diff.

Configs are compared only when both observations read them: Kafka reports every key of a topic,
so an empty map is a topic whose configs were not read (the live read reads the declared topics'
configs only), never a topic without configs. A key that only one observation lists, set on the
topic in neither, came or went with the brokers' version rather than with the topic: not listed.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, NamedTuple

from reconciler.drift.model import ChangeKind, ChangeLogEntry
from reconciler.errors import noun
from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedState, ObservedTopic


class Fingerprint(NamedTuple):
    """What the change log compares of a topic, as plain values (the models' own lists, not copies)."""

    topic_id: str | None
    replicas: list[list[int]]  # per partition, in order
    leaders: list[int]  # per partition
    configs: dict[str, tuple[str | None, ConfigSource, bool]] | None  # key -> (value, source, sensitive); None: not read


# C-level getters: a fingerprint reads ~45 attributes per topic, for every topic of both observations.
_REPLICAS, _LEADER = attrgetter("replicas"), attrgetter("leader")
_CONFIG = attrgetter("value", "source", "sensitive")


def fingerprint(topic: ObservedTopic) -> Fingerprint:
    partitions, configs = topic.partitions, topic.configs
    return Fingerprint(
        topic.topic_id,
        list(map(_REPLICAS, partitions)),
        list(map(_LEADER, partitions)),
        dict(zip(configs, map(_CONFIG, configs.values()))) if configs else None,
    )


def change_log(earlier: ObservedState, now: ObservedState) -> dict[str, list[ChangeLogEntry]]:
    """Topic -> what moved on it between `earlier` and `now`, for the topics where anything did."""
    out = {}
    for name in sorted(earlier.topics.keys() | now.topics.keys()):
        entries = topic_changes(name, earlier.topics.get(name), now.topics.get(name))
        if entries:
            out[name] = entries
    return out


def topic_changes(name: str, before: ObservedTopic | None, now: ObservedTopic | None) -> list[ChangeLogEntry]:
    """What moved on one topic (absent from an observation: None), in the order reports list it."""
    if before is None or now is None:
        if now is not None:
            return [ChangeLogEntry(topic=name, kind="topic-created", new=_shape(now))]
        if before is not None:
            return [ChangeLogEntry(topic=name, kind="topic-deleted", old=_shape(before))]
        return []
    was, this = fingerprint(before), fingerprint(now)
    entries = []
    if was.topic_id and this.topic_id and was.topic_id != this.topic_id:
        entries.append(ChangeLogEntry(topic=name, kind="topic-recreated", old=was.topic_id, new=this.topic_id))
    replicas_moved = was.replicas != this.replicas
    configs_moved = was.configs is not None and this.configs is not None and was.configs != this.configs
    partitions, keys = _moved(was, this, replicas_moved, configs_moved)
    if replicas_moved:
        entries += _partition_changes(name, before, now, partitions)
    leaders = sum(a != b for a, b in zip(was.leaders, this.leaders))
    if leaders:
        entries.append(ChangeLogEntry(topic=name, kind="leaders", count=leaders))
    for key in sorted(keys):
        entry = _config_change(name, key, before.configs.get(key), now.configs.get(key))
        if entry is not None:
            entries.append(entry)
    return entries


def _moved(was: Fingerprint, this: Fingerprint, replicas: bool, configs: bool) -> tuple[set[int], set[str]]:
    """The partitions (by index) and config keys deepdiff finds moved, in the parts that moved."""
    if not (replicas or configs):
        return set(), set()
    # Imported here: deepdiff is slow to import (it brings pandas and numpy when they are
    # installed), which only a report with a changed topic pays.
    from deepdiff import DeepDiff

    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    if replicas:
        left["partitions"], right["partitions"] = dict(enumerate(was.replicas)), dict(enumerate(this.replicas))
    if configs:
        left["configs"], right["configs"] = was.configs, this.configs
    partitions: set[int] = set()
    keys: set[str] = set()
    for levels in DeepDiff(left, right, view="tree").values():
        for level in levels:
            # ["partitions", index, ...] or ["configs", key, ...]: where, never what (that is read below).
            part, where = level.path(output_format="list")[:2]
            if part == "partitions":
                partitions.add(where)
            else:
                keys.add(where)
    return partitions, keys


def _partition_changes(name: str, before: ObservedTopic, now: ObservedTopic, moved: set[int]) -> list[ChangeLogEntry]:
    out = []
    count_before, count_now = len(before.partitions), len(now.partitions)
    if count_before != count_now:
        out.append(
            ChangeLogEntry(
                topic=name,
                kind="partitions-added" if count_now > count_before else "partitions-removed",
                old=str(count_before),
                new=str(count_now),
            )
        )
    factor_before, factor_now = _replication_factor(before), _replication_factor(now)
    if factor_before != factor_now:
        out.append(ChangeLogEntry(topic=name, kind="replication-factor", old=factor_before, new=factor_now))
    out += [
        ChangeLogEntry(
            topic=name,
            kind="replicas",
            partition=index,
            old=_brokers(before.partitions[index].replicas),
            new=_brokers(now.partitions[index].replicas),
        )
        for index in sorted(moved)
        if index < min(count_before, count_now)
    ]
    return out


def _config_change(topic: str, key: str, before: ObservedConfig | None, now: ObservedConfig | None) -> ChangeLogEntry | None:
    was_set, is_set = before is not None and before.set_on_topic, now is not None and now.set_on_topic
    kind: ChangeKind
    if is_set and not was_set:
        kind = "config-set"
    elif was_set and not is_set:
        kind = "config-removed"
    elif before is None or now is None or before.value == now.value:
        return None  # came or went with the brokers' version, or only where an equal value comes from moved
    else:
        kind = "config-changed"
    sensitive = (before is not None and before.sensitive) or (now is not None and now.sensitive)
    return ChangeLogEntry(
        topic=topic,
        kind=kind,
        key=key,
        old=None if sensitive or before is None else before.value,
        new=None if sensitive or now is None else now.value,
        source=now.source.name if now is not None else None,
        sensitive=sensitive,
    )


def _replication_factor(topic: ObservedTopic) -> str:
    """The replica count, or its range when partitions differ (a reassignment under way)."""
    counts = {len(p.replicas) for p in topic.partitions}
    return str(min(counts)) if len(counts) == 1 else f"{min(counts)}-{max(counts)}"


def _shape(topic: ObservedTopic) -> str:
    n = len(topic.partitions)
    return f"{n} {noun(n, 'partition')}, replication factor {_replication_factor(topic)}"


def _brokers(ids: list[int]) -> str:
    return ",".join(map(str, ids))
