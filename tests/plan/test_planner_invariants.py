"""Planner invariants over generated (desired, observed) pairs; hypothesis shrinks a failure to a
smallest case.

- Applying a plan's effects and planning again gives no actions.
- A truncation target is never negative, never beyond the high watermark, never at or below the
  log start (that would be a no-op sent as a destructive action).
- Unmanaged topics never produce actions.
- With replication-factor changes, pinned replicas and a drained broker: once the reassignments
  are done, every partition has the factor's count of replicas, follows its pin, keeps none on a
  drained broker, and planning again gives no actions.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.models.desired import (
    BeforeOffset,
    BeforeTime,
    ClusterSpec,
    ConsumedBy,
    DesiredState,
    Everything,
    KeepLast,
    TopicState,
    UndeclaredConfigs,
)
from reconciler.models.observed import Broker, ObservedPartition, ObservedState, ObservedTopic
from reconciler.models.plan import TruncateRecords
from reconciler.plan.planner import plan
from tests.factories import desired, have, observed, want
from tests.simulate import apply_effects

BASE = datetime(2026, 10, 1, tzinfo=timezone.utc)
HOURS = range(4)  # the times a time rule may name, and the lookups the observed side answers
CONFIG_VALUES = {
    "retention.ms": ["1000", "604800000"],
    "cleanup.policy": ["delete", "compact,delete"],
    "segment.bytes": ["1048576", "1073741824"],
}
GROUPS = ["g1", "g2", "g3"]
INVARIANTS = settings(
    max_examples=int(os.environ.get("INVARIANT_EXAMPLES", "300")),
    deadline=None,
    derandomize=not os.environ.get("INVARIANT_EXAMPLES"),
)


def configs():
    return st.dictionaries(st.sampled_from(sorted(CONFIG_VALUES)), st.just(None)).flatmap(
        lambda keys: st.fixed_dictionaries({k: st.sampled_from(CONFIG_VALUES[k]) for k in keys})
    )


def rules(partitions: int, hw: int):
    offset = st.integers(0, hw)
    rule = st.one_of(
        offset.map(lambda o: BeforeOffset(offset=o)),
        st.dictionaries(st.integers(0, partitions - 1), offset, min_size=1).map(lambda p: BeforeOffset(partitions=p)),
        st.sampled_from(HOURS).map(lambda h: BeforeTime(timestamp=BASE + timedelta(hours=h))),
        st.integers(0, hw + 10).map(lambda n: KeepLast(records=n)),
        st.just(Everything()),
        st.lists(st.sampled_from(GROUPS), min_size=1, max_size=2, unique=True).map(lambda g: ConsumedBy(groups=g)),
    )
    # `everything` is the only rule of its topic (the loader refuses it next to others).
    return st.lists(rule, max_size=2).map(lambda rs: [Everything()] if any(isinstance(r, Everything) for r in rs) else rs)


@st.composite
def topic_cases(draw, index: int):
    name = f"t{index}"
    partitions, hw = draw(st.integers(1, 4)), draw(st.integers(0, 500))
    log_start = draw(st.integers(0, hw))
    wanted_configs = draw(configs())
    if draw(st.booleans()):
        wanted_configs["cleanup.policy"] = "delete"
    wanted = want(
        name,
        partitions=partitions + draw(st.sampled_from([0, 0, 1])),
        configs=wanted_configs,
        state=TopicState.ABSENT if draw(st.integers(0, 9)) == 0 else TopicState.PRESENT,
        truncate=draw(rules(partitions, hw)),
        undeclared_configs=draw(st.sampled_from(list(UndeclaredConfigs))),
    )
    if draw(st.integers(0, 9)) < 2:
        return wanted, None, {}
    found = st.one_of(st.just(-1), st.integers(log_start, hw))
    lookups = {int((BASE + timedelta(hours=h)).timestamp() * 1000): draw(found) for h in HOURS}
    present = have(
        name, partitions=partitions, log_start=log_start, hw=hw, set_on_topic=draw(configs()), offsets_by_timestamp=lookups
    )
    committed = {g: {p: draw(st.integers(0, hw)) for p in range(partitions)} for g in GROUPS if draw(st.integers(0, 9)) < 8}
    return wanted, present, committed


@st.composite
def cases(draw):
    count = draw(st.integers(1, 6))
    wanted, present = [], [have("unmanaged", set_on_topic={"retention.ms": "1"})]
    groups: dict[str, dict[str, dict[int, int]]] = {g: {} for g in GROUPS}
    for i in range(count):
        topic, observed_topic, committed = draw(topic_cases(i))
        wanted.append(topic)
        if observed_topic is not None:
            present.append(observed_topic)
        for group, offsets in committed.items():
            groups[group][topic.name] = offsets
    return desired(*wanted), observed(*present, group_offsets=groups)


@INVARIANTS
@given(cases())
def test_planner_invariants(case):
    want_state, have_state = case
    first = plan(want_state, have_state)

    assert all(a.topic in want_state.topics for a in first.actions), "unmanaged topics never get actions"
    assert "unmanaged" in first.unmanaged_topics
    for action in first.actions:
        if isinstance(action, TruncateRecords):
            for t in action.partitions:
                assert 0 <= t.log_start_offset < t.target_offset <= t.high_watermark

    second = plan(want_state, apply_effects(have_state, first))
    assert second.actions == [], f"plan after apply still has {second.actions}"


# --- replicas: replication-factor changes, pinned replicas, drained brokers -----------------------


def _first(brokers: list[int], count: int) -> list[int]:
    return brokers[:count]


@st.composite
def replica_cases(draw: st.DrawFn) -> tuple[DesiredState, ObservedState]:
    """A cluster of 3 to 5 brokers, perhaps draining one, whose topics may change their replication
    factor and pin some partitions' replicas (to live brokers not drained, as the loader requires)."""
    alive = list(range(1, draw(st.integers(3, 5)) + 1))
    drain = draw(st.sampled_from([[], [], [alive[-1]], [alive[0]]]))
    eligible = [b for b in alive if b not in drain]
    wanted, present = [], []
    for index in range(draw(st.integers(1, 4))):
        name, partitions = f"r{index}", draw(st.integers(1, 3))
        rf_before = draw(st.integers(1, 3))
        rf = draw(st.integers(1, min(3, len(eligible))))
        first = draw(st.integers(0, len(alive) - 1))  # where the existing replicas start, round robin
        assignment = [[alive[(first + p + r) % len(alive)] for r in range(rf_before)] for p in range(partitions)]
        pins = draw(
            st.dictionaries(
                st.integers(0, partitions - 1),
                st.permutations(eligible).map(partial(_first, count=rf)),
                max_size=partitions,
            )
        )
        wanted.append(want(name, partitions=partitions, replication_factor=rf, replica_assignment=pins))
        present.append(
            ObservedTopic(
                name=name,
                topic_id=f"id-{name}",
                partitions=[
                    ObservedPartition(
                        partition=p,
                        leader=replicas[0],
                        leader_epoch=1,
                        replicas=replicas,
                        isr=replicas,
                        log_start_offset=0,
                        high_watermark=10,
                        size_bytes=1000,
                    )
                    for p, replicas in enumerate(assignment)
                ],
            )
        )
    brokers = [Broker(node_id=b, host=f"kafka-{b}", port=9092) for b in alive]
    spec = ClusterSpec(name="test", bootstrap_servers=["localhost:9092"], drain_brokers=drain)
    return (
        DesiredState(cluster=spec, topics={t.name: t for t in wanted}),
        ObservedState(cluster="test", cluster_id="c1", brokers=brokers, topics={t.name: t for t in present}),
    )


@INVARIANTS
@given(replica_cases())
def test_planner_invariants_with_replica_moves(case: tuple[DesiredState, ObservedState]) -> None:
    want_state, have_state = case
    first = plan(want_state, have_state)
    assert not first.has_errors, [d.message for d in first.diagnostics]
    after = apply_effects(have_state, first)
    drained = set(want_state.cluster.drain_brokers)
    for name, topic in after.topics.items():
        wanted = want_state.topics[name]
        for p in topic.partitions:
            assert len(p.replicas) == wanted.replication_factor, f"{name}-{p.partition}: {p.replicas}"
            assert not drained & set(p.replicas), f"{name}-{p.partition} keeps a replica on a drained broker"
            assert p.replicas == wanted.replica_assignment.get(p.partition, p.replicas), f"{name}-{p.partition} ignores its pin"
    second = plan(want_state, after)
    assert second.actions == [], f"plan after apply still has {second.actions}"
