"""Builders for desired and observed state in unit tests (plain data, no cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from reconciler.models.desired import ClusterSpec, DesiredState, DesiredTopic, Policy
from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedPartition, ObservedState, ObservedTopic
from reconciler.models.plan import Action

A = TypeVar("A", bound=Action)


def desired(*topics: DesiredTopic, policy: Policy = Policy(), ignore_topics=()) -> DesiredState:
    return DesiredState(
        cluster=ClusterSpec(name="test", bootstrap_servers=["localhost:9092"], ignore_topics=list(ignore_topics)),
        topics={t.name: t for t in topics},
        policy=policy,
    )


def want(name: str, partitions: int = 3, replication_factor: int = 3, **fields) -> DesiredTopic:
    return DesiredTopic(name=name, partitions=partitions, replication_factor=replication_factor, **fields)


def partition(
    index: int, log_start: int = 0, hw: int = 100, leader: int = 1, epoch: int = 5, replicas=(1, 2, 3), **fields
) -> ObservedPartition:
    return ObservedPartition(
        partition=index,
        leader=leader,
        leader_epoch=epoch,
        replicas=list(replicas),
        isr=list(replicas),
        log_start_offset=log_start,
        high_watermark=hw,
        **fields,
    )


def have(
    name: str,
    partitions: int = 3,
    replication_factor: int = 3,
    log_start: int = 0,
    hw: int = 100,
    set_on_topic: dict[str, str] | None = None,
    inherited: dict[str, str] | None = None,
    topic_id: str | None = None,
    **partition_fields,
) -> ObservedTopic:
    configs = {k: ObservedConfig(value=v, source=ConfigSource.DEFAULT_CONFIG) for k, v in (inherited or {}).items()}
    configs.update(
        {k: ObservedConfig(value=v, source=ConfigSource.DYNAMIC_TOPIC_CONFIG) for k, v in (set_on_topic or {}).items()}
    )
    replicas = tuple(range(1, replication_factor + 1))
    return ObservedTopic(
        name=name,
        topic_id=topic_id or f"id-{name}",
        configs=configs,
        partitions=[partition(i, log_start, hw, replicas=replicas, **partition_fields) for i in range(partitions)],
    )


def observed(*topics: ObservedTopic, group_offsets=None) -> ObservedState:
    return ObservedState(
        cluster="test", cluster_id="cluster-1", topics={t.name: t for t in topics}, group_offsets=group_offsets or {}
    )


def only(actions: Sequence[Action], kind: type[A]) -> A:
    """The plan's one action, which must be a `kind`."""
    [action] = actions
    assert isinstance(action, kind), f"expected one {kind.__name__}, got {action!r}"
    return action


def first(actions: Sequence[Action], kind: type[A]) -> A:
    """The plan's first action, which must be a `kind`."""
    assert actions and isinstance(actions[0], kind), f"expected a {kind.__name__} first, got {actions!r}"
    return actions[0]


def each(actions: Sequence[Action], kind: type[A]) -> list[A]:
    """The plan's actions, every one of which must be a `kind`."""
    assert all(isinstance(a, kind) for a in actions), f"expected only {kind.__name__}, got {actions!r}"
    return [a for a in actions if isinstance(a, kind)]
