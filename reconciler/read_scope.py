"""What to read from a cluster, decided from the manifests or a plan, before any I/O.

The Kafka adapter turns a ReadScope into batched requests; keeping the decision here makes it
testable without a cluster and keeps the adapter free of manifest knowledge.

- `topics` names the topics whose configs, offsets and partitions the result depends on
  (None: every topic on the cluster). Errors on these topics fail or retry the read.
- `list_all` asks for one Metadata of every topic, so topics nobody manages are still listed
  (and their offsets read, best effort: the same requests carry them).
- `timestamps`: topic -> the instants (ms) of its `before_time` rules, for ListOffsets.
- `epoch_topics`: topics with truncation rules; their partitions get OffsetForLeaderEpoch so
  the observation proves which epoch the offsets belong to.
- `groups`: consumer group -> topics whose committed offsets a `consumed_by` rule needs.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reconciler.models.desired import BeforeTime, ConsumedBy, DesiredState, TopicState
from reconciler.models.plan import Plan


@dataclass(frozen=True)
class ReadScope:
    topics: frozenset[str] | None
    list_all: bool
    timestamps: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    epoch_topics: frozenset[str] = frozenset()
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def wants(self, topic: str) -> bool:
        """Whether the read depends on this topic (its configs are read, its errors count)."""
        return self.topics is None or topic in self.topics

    @property
    def metadata_topics(self) -> list[str] | None:
        """The topic names to ask Metadata for; None for every topic."""
        return None if self.list_all or self.topics is None else sorted(self.topics)


def desired_scope(desired: DesiredState) -> ReadScope:
    timestamps: dict[str, set[int]] = {}
    groups: dict[str, set[str]] = {}
    epoch_topics = set()
    for name, topic in desired.topics.items():
        # Rules of a topic declared absent never turn into truncations.
        if topic.state is not TopicState.PRESENT or not topic.truncate:
            continue
        epoch_topics.add(name)
        for rule in topic.truncate:
            if isinstance(rule, BeforeTime):
                timestamps.setdefault(name, set()).add(rule.timestamp_ms)
            elif isinstance(rule, ConsumedBy):
                for group in rule.groups:
                    groups.setdefault(group, set()).add(name)
    return ReadScope(
        topics=frozenset(desired.topics), list_all=True,
        timestamps={t: tuple(sorted(s)) for t, s in sorted(timestamps.items())},
        epoch_topics=frozenset(epoch_topics),
        groups={g: frozenset(t) for g, t in sorted(groups.items())})


def topics_scope(names: Iterable[str] | None) -> ReadScope:
    """Named topics (None: all of them) with their full configs, for import and snapshots."""
    if names is None:
        return ReadScope(topics=None, list_all=True)
    return ReadScope(topics=frozenset(names), list_all=False)


def plan_scope(plan: Plan) -> ReadScope:
    """What apply re-reads before writing: the plan's topics, and leader-epoch proof for the
    topics it writes fenced by epoch (truncations). Truncation targets are fixed in the plan, so no
    timestamps or groups."""
    return ReadScope(
        topics=frozenset(a.topic for a in plan.actions), list_all=False,
        epoch_topics=frozenset(a.topic for a in plan.actions if a.kind.facts.epoch_fenced))


def timestamp_slots(timestamps: Mapping[str, tuple[int, ...]]) -> int:
    """How many timestamp lookups one partition needs at most. Kafka refuses a partition twice in
    one ListOffsets request, so each slot is its own request per leader: the count depends on
    the rules per topic, never on the number of topics."""
    return max((len(t) for t in timestamps.values()), default=0)
