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
- `now_ms`: the instant the read stands for (the snapshot's `taken_at`). A retention change is
  estimated by asking ListOffsets for `now_ms - retention.ms`, so the scope and the snapshot
  must agree on it to the millisecond; those lookups join `timestamps` (the same batched
  requests: one more timestamp slot at most, never one more request per topic).
- `offset_topics`: the topics whose earliest and latest offsets are read (None: every topic's). A
  plan's read asks only for those its plan shows offsets of (`desired_scope(..., every_offset=False)`):
  topics with truncation rules, topics declared absent (a deletion counts its records), topics sized
  for an estimate. The others' partitions keep their leader and -1 offsets ("not read",
  `ObservedPartition.offsets_not_read`); a retention change reads its topic again, whole.
- `size_topics`: topics whose partition sizes (DescribeLogDirs) an estimate needs (the bytes a
  truncation or a retention cut deletes, a topic deletion frees), read even when sizes were not
  asked for.
- `cluster_operations`: read the cluster's authorized operations (DescribeCluster), which tell
  whether the principal may create topics: for reads that may plan creations.
- `reassignments`: read the reassignments in progress of the scope's topics (ListPartitionReassignments,
  one request): planning a declared topic needs them, so does apply's re-read of a reassignment.
- `capacity`: read the brokers' log directory capacity even where no partition is sized (the
  policy's max_disk_usage, or new topics' expected traffic, need it): DescribeLogDirs of no
  topic, one per broker. Whenever partitions are sized, the same answers carry it anyway.
- `replicas`: declared topic -> what its replicas must be (`ReplicaWant`), with the cluster's
  `drain_brokers`. Whether a topic's replicas move shows only in Metadata, so `with_moving_sizes`
  adds those topics to `size_topics` once it is read (a reassignment shows the data it copies),
  in the same DescribeLogDirs requests.

Whether a topic's retention changes shows only in its configs, and a retention change needs
lookups and sizes: `estimate_scope` asks for those in a second read of just those topics once the
first has shown the values. A plan's first read asks for none of them (most topics do not change
retention, and the lookups and sizes of 100,000 partitions cost more than a second read of a
few); a snapshot's asks for every declared retention's, since it is kept for later plans. A topic
lowering retention.ms step by step (`retention_stepping: gradual`) is estimated at the step,
which depends on the value on the cluster: always a second read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from reconciler import kafka_configs
from reconciler.models.desired import (
    BeforeTime,
    ConsumedBy,
    DesiredState,
    DesiredTopic,
    RetentionStepping,
    TopicState,
    UndeclaredConfigs,
)
from reconciler.models.observed import ObservedState, ObservedTopic
from reconciler.models.plan import ActionKind, AlterConfigs, ConfigChange, Plan, ReassignReplicas
from reconciler.plan import retention
from reconciler.plan.capacity import ingest_lookup
from reconciler.plan.policy import idle_guard
from reconciler.units import epoch_ms


@dataclass(frozen=True)
class ReplicaWant:
    """A declared topic's replication factor and pinned replica lists (partition -> brokers)."""

    replication_factor: int
    pinned: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadScope:
    topics: frozenset[str] | None
    list_all: bool
    timestamps: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    epoch_topics: frozenset[str] = frozenset()
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)
    now_ms: int | None = None
    size_topics: frozenset[str] = frozenset()
    offset_topics: frozenset[str] | None = None
    cluster_operations: bool = False
    reassignments: bool = False
    replicas: Mapping[str, ReplicaWant] = field(default_factory=dict)
    drain_brokers: frozenset[int] = frozenset()
    capacity: bool = False
    # topics whose evidence of idleness is read (guarded deletions: docs/idle-topics.md)
    activity_topics: frozenset[str] = frozenset()
    # every listed topic's evidence too (snapshots and drift, with the Policy's idle_after)
    every_activity: bool = False

    def with_moving_sizes(self, replicas: Mapping[str, Sequence[Sequence[int]]]) -> ReadScope:
        """This scope, also sizing the topics whose replicas (topic -> per partition, from Metadata)
        are not what `replicas` declares, or sit on a drained broker (and reading their offsets)."""
        moving = {
            name
            for name, lists in replicas.items()
            if name in self.replicas and _replicas_move(self.replicas[name], lists, self.drain_brokers)
        }
        if not moving - self.size_topics:
            return self
        offsets = None if self.offset_topics is None else self.offset_topics | moving
        return replace(self, size_topics=self.size_topics | moving, offset_topics=offsets)

    def wants(self, topic: str) -> bool:
        """Whether the read depends on this topic (its configs are read, its errors count)."""
        return self.topics is None or topic in self.topics

    def reads_offsets(self, topic: str) -> bool:
        """Whether the topic's earliest and latest offsets are read."""
        return self.offset_topics is None or topic in self.offset_topics

    @property
    def metadata_topics(self) -> list[str] | None:
        """The topic names to ask Metadata for; None for every topic."""
        return None if self.list_all or self.topics is None else sorted(self.topics)


def desired_scope(desired: DesiredState, now_ms: int | None = None, every_offset: bool = True) -> ReadScope:
    """What planning `desired` reads; with `now_ms`, also what estimating retention changes needs;
    without `every_offset`, only the offsets a plan shows (`offset_topics`)."""
    timestamps: dict[str, set[int]] = {}
    groups: dict[str, set[str]] = {}
    epoch_topics = set()
    size_topics = set()
    absent = set()
    for name, topic in desired.topics.items():
        if topic.state is not TopicState.PRESENT:
            absent.add(name)  # a deletion shows the records and the bytes it frees
            continue
        if now_ms is not None and _may_change_retention(topic):
            size_topics.add(name)
            limit = _time_limit_after(topic)
            if limit is not None:
                timestamps.setdefault(name, set()).add(retention.time_lookup(now_ms, limit))
        # Rules of a topic declared absent never turn into truncations.
        if not topic.truncate:
            continue
        epoch_topics.add(name)
        size_topics.add(name)  # a truncation shows the bytes it deletes
        for rule in topic.truncate:
            if isinstance(rule, BeforeTime):
                timestamps.setdefault(name, set()).add(rule.timestamp_ms)
            elif isinstance(rule, ConsumedBy):
                for group in rule.groups:
                    groups.setdefault(group, set()).add(name)
    return ReadScope(
        topics=frozenset(desired.topics),
        list_all=True,
        timestamps={t: tuple(sorted(s)) for t, s in sorted(timestamps.items())},
        epoch_topics=frozenset(epoch_topics),
        groups={g: frozenset(t) for g, t in sorted(groups.items())},
        now_ms=now_ms,
        size_topics=frozenset(size_topics | absent),
        offset_topics=None if every_offset else frozenset(epoch_topics | size_topics | absent),
        cluster_operations=any(t.state is TopicState.PRESENT for t in desired.topics.values()),
        reassignments=True,
        replicas={
            name: ReplicaWant(topic.replication_factor, {p: tuple(b) for p, b in topic.replica_assignment.items()})
            for name, topic in sorted(desired.topics.items())
            if topic.state is TopicState.PRESENT
        },
        drain_brokers=frozenset(desired.cluster.drain_brokers),
        capacity=needs_capacity(desired),
        activity_topics=frozenset(n for n in absent if idle_guard(desired, n) is not None),
        every_activity=every_offset and desired.policy.idle_after_ms is not None,
    )


def needs_capacity(desired: DesiredState) -> bool:
    """Whether a plan of `desired` needs the brokers' capacity even where it sizes no partition."""
    return desired.policy.max_disk_usage is not None or any(
        t.expected_bytes_per_day is not None for t in desired.topics.values() if t.state is TopicState.PRESENT
    )


def _replicas_move(want: ReplicaWant, replicas: Sequence[Sequence[int]], drain: frozenset[int]) -> bool:
    return any(
        len(brokers) != want.replication_factor
        or not drain.isdisjoint(brokers)
        or (i in want.pinned and tuple(brokers) != want.pinned[i])
        for i, brokers in enumerate(replicas)
    )


def estimate_scope(desired: DesiredState, seen: ObservedState) -> ReadScope | None:
    """What to read again so that the retention changes planned on `seen` can be estimated: the
    topics whose time or size limit the manifests lower and whose read lacks an offset, a lookup or
    a size the estimate needs (a read that did not ask for them: a plan's first read; a gradual step's
    lookup, which depends on the value read), with everything planning them needs, measured from
    `seen`'s instant (the fresh topics replace the old ones whole: `ObservedState.with_topics`);
    None when nothing is missing."""
    if seen.taken_at is None:
        return None
    limit = desired.policy.max_retention_decrease
    inherited, now_ms = retention.inherited_values(seen), epoch_ms(seen.taken_at)
    again: dict[str, set[int]] = {}  # topic -> the lookups its estimate needs
    unneeded: dict[str, int] = {}  # topic -> the retention lookup a raised limit does not need
    for name, topic in desired.topics.items():
        have = seen.topics.get(name)
        if have is None or topic.state is not TopicState.PRESENT or not _may_change_retention(topic):
            continue
        lowered, raised = _limits_move(topic, have, inherited)
        if not lowered and not raised:
            continue
        lookups = set()
        wanted = _time_limit_after(topic)
        if lowered and wanted is not None:
            lookups.add(retention.time_lookup(now_ms, wanted))
            step = _step(topic, have, inherited, wanted, limit)
            if step is not None:
                lookups.add(retention.time_lookup(now_ms, step))
        elif raised:
            # What a raised limit keeps more of grows at the topic's ingest rate (docs/capacity.md).
            lookups.add(ingest_lookup(now_ms))
            if wanted is not None:
                unneeded[name] = retention.time_lookup(now_ms, wanted)
        readable = [p for p in have.partitions if not p.unreadable]
        if (
            any(p.offsets_not_read for p in have.partitions)
            or any(lookup not in p.offsets_by_timestamp for p in readable for lookup in lookups)
            or (seen.sizes_refused is None and any(p.size_bytes is None for p in readable))
        ):
            again[name] = lookups
    for name in _budget_sized(desired, seen, again, inherited):
        again.setdefault(name, set())
    if not again:
        return None
    names = frozenset(again)
    scope = desired_scope(desired.model_copy(update={"topics": {n: desired.topics[n] for n in sorted(names)}}), now_ms)
    # Group offsets are the cluster's, not a topic's: the first read's stay.
    return ReadScope(
        topics=names,
        list_all=False,
        now_ms=now_ms,
        timestamps={
            n: tuple(sorted({*(t for t in scope.timestamps.get(n, ()) if t != unneeded.get(n)), *lookups}))
            for n, lookups in sorted(again.items())
            if lookups or n in scope.timestamps
        },
        epoch_topics=scope.epoch_topics & names,
        size_topics=names,
        reassignments=True,
        replicas={n: w for n, w in scope.replicas.items() if n in names},
        drain_brokers=scope.drain_brokers,
    )


def _budget_sized(
    desired: DesiredState, seen: ObservedState, again: Mapping[str, set[int]], inherited: Mapping[str, str]
) -> list[str]:
    """The topics whose sizes a team's disk budget counts and the first read left out: every topic
    of a team with a disk budget that the plan may add to (a topic created, given more replicas or a
    raised limit: `budgets.adding_teams` on the plan, told here from the manifests and the read)."""
    teams = {name for name, team in desired.teams.items() if team.budget.max_disk_bytes is not None}
    if not teams or seen.sizes_refused is not None:
        return []
    adding = set()
    for name, topic in desired.topics.items():
        if topic.owner not in teams or topic.owner in adding or topic.state is not TopicState.PRESENT:
            continue
        have = seen.topics.get(name)
        if (
            have is None
            or topic.replication_factor > len(have.partitions[0].replicas)
            or (_may_change_retention(topic) and _limits_move(topic, have, inherited)[1])
        ):
            adding.add(topic.owner)
    return [
        name
        for name, topic in desired.topics.items()
        if topic.owner in adding
        and name in seen.topics
        and name not in again
        and any(p.size_bytes is None and p.leader >= 0 for p in seen.topics[name].partitions)
    ]


def _limits_move(topic: DesiredTopic, have: ObservedTopic, inherited: Mapping[str, str]) -> tuple[bool, bool]:
    """Whether the manifests lower the topic's time or size limit (or turn one on), and whether
    they raise or remove one: what the planner estimates (the bytes deleted, the disk it grows by).
    Every declared key counts as changed, as the planner's changes would be."""
    declared = [(key, value) for key, value in topic.configs.items() if key in retention.SETTINGS_KEYS]
    removed = []
    if topic.undeclared_configs is UndeclaredConfigs.REMOVE:
        removed = [
            key
            for key, config in have.configs.items()
            if key in retention.SETTINGS_KEYS and key not in topic.configs and config.set_on_topic
        ]
    if not removed and all(have.config_value(key) == value for key, value in declared):
        return False, False  # the common case (every topic of a large cluster, each plan), decided without building models
    changes = [ConfigChange(key=key, op="set", after=value) for key, value in declared]
    changes += [ConfigChange(key=key, op="delete") for key in removed]
    before, after = retention.before_and_after(changes, have, inherited)
    found = retention.classify(before, after)
    return found.retention_ms is not None or found.retention_bytes is not None, retention.raises_a_limit(before, after)


def _step(topic: DesiredTopic, have: ObservedTopic, inherited: Mapping[str, str], wanted: int, limit: float | None) -> int | None:
    """The retention.ms a gradual topic steps to first, when that is not `wanted`; else None."""
    if limit is None or topic.retention_stepping is not RetentionStepping.GRADUAL:
        return None
    try:
        was = int(have.config_value("retention.ms") or inherited["retention.ms"])
    except ValueError:
        return None
    step = max(wanted, retention.lowest_allowed(was, limit)) if was >= 0 else wanted
    return step if step != wanted else None


def _may_change_retention(topic: DesiredTopic) -> bool:
    """Whether planning the topic can find a retention change: it declares a key that decides
    retention, or removes undeclared keys (a removed override lets an inherited value apply)."""
    return topic.undeclared_configs is UndeclaredConfigs.REMOVE or any(k in topic.configs for k in retention.RETENTION_KEYS)


def _time_limit_after(topic: DesiredTopic) -> int | None:
    """The retention.ms whose lookup a time cut needs, as far as the manifests tell before the
    read: the declared value; else, where an inherited value may come to apply (retention switched
    on, an override removed), Kafka's default (a broker setting may differ: the estimate then says
    it could not be made, never 0); else None: the time limit does not change."""
    if "retention.ms" in topic.configs:
        value = topic.configs["retention.ms"]
    elif topic.undeclared_configs is UndeclaredConfigs.REMOVE or kafka_configs.cleanup_policy_allows_delete(
        topic.configs.get("cleanup.policy", "")
    ):
        value = kafka_configs.TOPIC_CONFIGS["retention.ms"].default
    else:
        return None
    try:
        limit = int(value)
    except ValueError:
        return None
    return limit if limit >= 0 else None


def topics_scope(names: Iterable[str] | None) -> ReadScope:
    """Named topics (None: all of them) with their full configs, for import and snapshots."""
    if names is None:
        return ReadScope(topics=None, list_all=True)
    return ReadScope(topics=frozenset(names), list_all=False)


def plan_scope(plan: Plan, now_ms: int | None = None, sized: frozenset[str] = frozenset()) -> ReadScope:
    """What apply re-reads before writing: the plan's topics, and leader-epoch proof for the
    topics it writes fenced by epoch (truncations). Truncation targets are fixed in the plan, so no
    truncation timestamps or groups; retention cuts are estimated again (with `now_ms`), so their
    time lookups and sizes are read; reassignments are checked against those in progress. `sized`:
    more topics whose sizes are read (a team's disk budget counts them: `budgets.sized_topics`)."""
    timestamps: dict[str, tuple[int, ...]] = {}
    size_topics = set()
    for action in plan.actions:
        if not isinstance(action, AlterConfigs) or action.retention is None or not action.retention.counted:
            continue
        size_topics.add(action.topic)
        if now_ms is not None and action.retention.retention_ms is not None:
            timestamps[action.topic] = (retention.time_lookup(now_ms, action.retention.retention_ms),)
    return ReadScope(
        topics=frozenset(a.topic for a in plan.actions) | sized,
        list_all=False,
        epoch_topics=frozenset(a.topic for a in plan.actions if a.kind.facts.epoch_fenced),
        timestamps=dict(sorted(timestamps.items())),
        now_ms=now_ms,
        size_topics=frozenset(size_topics) | sized,
        cluster_operations=any(a.kind in (ActionKind.CREATE_TOPIC, ActionKind.REASSIGN_REPLICAS) for a in plan.actions),
        reassignments=any(isinstance(a, ReassignReplicas) for a in plan.actions),
        capacity=any(row.total_bytes is not None for row in plan.capacity),  # checked again against the policy
        activity_topics=frozenset(a.topic for a in plan.actions if a.preconditions.idle is not None),
    )


def timestamp_slots(timestamps: Mapping[str, tuple[int, ...]]) -> int:
    """How many timestamp lookups one partition needs at most. Kafka refuses a partition twice in
    one ListOffsets request, so each slot is its own request per leader: the count depends on
    the rules per topic, never on the number of topics."""
    return max((len(t) for t in timestamps.values()), default=0)
