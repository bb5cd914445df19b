"""What each broker's metadata cache shows: the controller's state as it was a moment ago.

Kafka's metadata is eventually consistent across brokers (KAFKA_SEMANTICS.md, "how soon a write
is visible"): a topic created, a partition added, a config changed or a reassignment finished
reaches each broker's Metadata and DescribeConfigs answers only when that broker has replayed
the record, 100-500 ms later on a real 4.0 cluster, on the broker that took the request too.

The controller's state (ClusterState) stays the truth for everything the controller decides
(CreateTopics, ListPartitionReassignments, ...) and for a partition's leader when it serves
data. Each change to a topic's metadata or configs, or to the dynamic broker configs, is
published with the time it happened; broker b shows the newest image published at least
`delay(b)` seconds ago. Changes a test seeds through TestCluster's helpers are published
`at_once`: every broker shows them immediately, so a test's starting state needs no waiting.

With every delay 0 the views are the controller's state itself and nothing is recorded.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

# Published by a test's own seeding: visible on every broker at once.
_AT_ONCE = float("-inf")


_V = TypeVar("_V")


class _Partition(Protocol):
    """What a partition's image is taken of (the controller's Partition)."""

    @property
    def index(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def replicas(self) -> Sequence[int]: ...
    @property
    def isr(self) -> Sequence[int]: ...


class _Topic(Protocol):
    """What a topic's image is taken of (the controller's Topic): views know the controller's state
    only by these attributes, so that it can hold its views without the two importing each other."""

    @property
    def name(self) -> str: ...
    @property
    def id(self) -> uuid.UUID: ...
    @property
    def internal(self) -> bool: ...
    @property
    def configs(self) -> Mapping[str, str]: ...
    @property
    def partitions(self) -> Sequence[_Partition]: ...


_T = TypeVar("_T", bound=_Topic)


@dataclass(frozen=True)
class PartitionImage:
    index: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicImage:
    """A topic as a broker's metadata cache holds it (the attributes Metadata and DescribeConfigs read)."""

    name: str
    id: uuid.UUID
    internal: bool
    configs: Mapping[str, str]
    partitions: tuple[PartitionImage, ...]


def image_of(topic: _Topic) -> TopicImage:
    return TopicImage(
        topic.name,
        topic.id,
        topic.internal,
        dict(topic.configs),
        tuple(PartitionImage(p.index, p.leader, p.leader_epoch, tuple(p.replicas), tuple(p.isr)) for p in topic.partitions),
    )


def parse_delays(delay: float | Mapping[int, float] | Iterable[float] | None, broker_ids: list[int]) -> dict[int, float]:
    """One delay for every broker, a {broker: seconds} map, or a list in broker order."""
    if delay is None:
        return dict.fromkeys(broker_ids, 0.0)
    if isinstance(delay, int | float):
        values = dict.fromkeys(broker_ids, float(delay))
    elif isinstance(delay, Mapping):
        values = {b: float(delay.get(b, 0.0)) for b in broker_ids}
    else:
        listed = [float(d) for d in delay]
        if len(listed) != len(broker_ids):
            raise ValueError(f"give one propagation delay per broker ({len(broker_ids)}), not {len(listed)}")
        values = dict(zip(broker_ids, listed, strict=True))
    if any(d < 0 for d in values.values()):
        raise ValueError("propagation delays must not be negative")
    return values


class MetadataViews:
    """The per-broker lagging views of one cluster. Callers hold the cluster's lock."""

    def __init__(self, delays: dict[int, float]):
        self.delays = delays
        self.lagging = any(d > 0 for d in delays.values())
        # topic name -> [(published at, image or None once deleted)], oldest first
        self._topics: dict[str, list[tuple[float, TopicImage | None]]] = {}
        self._broker_configs: list[tuple[float, dict[str, dict[str, str]]]] = []

    def publish(
        self,
        topics: Mapping[str, _Topic],
        broker_configs: Mapping[str, Mapping[str, str]],
        at_once: bool = False,
        names: Iterable[str] | None = None,
    ) -> None:
        """Record every topic (or those named) and the dynamic broker configs that changed since
        the last publication, as of now (or visible at once)."""
        if not self.lagging:
            return
        at = _AT_ONCE if at_once else time.monotonic()
        for name in topics.keys() | self._topics.keys() if names is None else names:
            topic = topics.get(name)
            image = image_of(topic) if topic is not None else None
            history = self._topics.setdefault(name, [])
            if image is None and not history:
                del self._topics[name]
                continue
            if not history or history[-1][1] != image:
                history.append((at, image))
            self._prune(history)
            if history[-1][1] is None and self._everywhere(history[-1][0]):
                del self._topics[name]
        configs = {entity: dict(values) for entity, values in broker_configs.items()}
        if not self._broker_configs or self._broker_configs[-1][1] != configs:
            self._broker_configs.append((at, configs))
        self._prune(self._broker_configs)

    def topic(self, topics: Mapping[str, _T], broker: int, name: str) -> _T | TopicImage | None:
        """The topic as `broker` shows it now, or None when it does not know it (yet, or any more)."""
        if not self.lagging:
            return topics.get(name)
        return self._seen(self._topics.get(name, []), broker)

    def topics(self, topics: Mapping[str, _T], broker: int) -> list[_T] | list[TopicImage]:
        if not self.lagging:
            return list(topics.values())
        return [image for history in self._topics.values() if (image := self._seen(history, broker)) is not None]

    def knows(self, topics: Mapping[str, _Topic], broker: int, name: str) -> bool:
        return self.topic(topics, broker, name) is not None

    def broker_configs(self, current: dict[str, dict[str, str]], broker: int) -> dict[str, dict[str, str]]:
        if not self.lagging:
            return current
        return self._seen(self._broker_configs, broker) or {}

    def _seen(self, history: list[tuple[float, _V]], broker: int) -> _V | None:
        cutoff = time.monotonic() - self.delays.get(broker, 0.0)
        for at, value in reversed(history):
            if at <= cutoff:
                return value
        return None

    def _everywhere(self, at: float) -> bool:
        return at <= time.monotonic() - max(self.delays.values())

    def _prune(self, history: list) -> None:
        """Drop images that no broker can show any more (a newer one is visible everywhere)."""
        while len(history) > 1 and self._everywhere(history[1][0]):
            del history[0]
