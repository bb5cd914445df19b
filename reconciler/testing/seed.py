"""Seed a TestCluster from a saved ObservedState snapshot (the project's JSON format), so the
offline demo and manual testing can start from a realistic cluster."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from . import controller
from .errors import KafkaApiError
from .state import ClusterState, CommittedOffset

if TYPE_CHECKING:
    from .cluster import TestCluster

DYNAMIC_TOPIC_CONFIG = 1


def _millis(taken_at: str | None) -> int:
    if not taken_at:
        return int(datetime.now(timezone.utc).timestamp() * 1000)
    return int(datetime.fromisoformat(taken_at.replace("Z", "+00:00")).timestamp() * 1000)


def seed_from_snapshot(cluster: TestCluster, path: str) -> None:
    """The cluster id, topics (ids, replicas where the broker ids exist here, topic-level configs),
    one record per second up to the snapshot time between log start and high watermark, leader
    epochs, and committed group offsets. Internal topics are left to the cluster. The cluster then
    answers as the one the snapshot was taken of, so a Cluster document's `cluster_id` pin holds."""
    with open(path, encoding="utf-8") as f:
        snapshot = json.load(f)
    state = cluster._state
    now_ms = _millis(snapshot.get("taken_at"))
    with state.lock:
        if snapshot.get("cluster_id"):
            state.cluster_id = snapshot["cluster_id"]
        for topic in snapshot.get("topics", {}).values():
            if topic.get("internal"):
                continue
            _seed_topic(state, topic, now_ms)
        for group, topics in snapshot.get("group_offsets", {}).items():
            state.coordinator(group)
            state.commit(
                group, {(t, int(p)): CommittedOffset(o, -1, "") for t, parts in topics.items() for p, o in parts.items()}
            )


def _seed_topic(state: ClusterState, topic: dict, now_ms: int) -> None:
    partitions = topic["partitions"]
    replicas = [p.get("replicas") or [] for p in partitions]
    exact = all(r and all(b in state.brokers for b in r) for r in replicas)
    configs = {
        k: c["value"]
        for k, c in topic.get("configs", {}).items()
        if c.get("source") == DYNAMIC_TOPIC_CONFIG and c.get("value") is not None
    }
    spec = controller.NewTopic(
        topic["name"],
        -1 if exact else len(partitions),
        -1 if exact else min(max(len(r) for r in replicas) or 1, len(state.live_brokers())),
        assignments=dict(enumerate(replicas)) if exact else {},
        configs=configs,
    )
    [result] = controller.create_topics(state, [spec], validate_only=False)
    if result.error:
        raise KafkaApiError(result.error, f"{topic['name']}: {result.message}")
    created = state.topics[topic["name"]]
    if topic.get("topic_id"):
        del state.topics_by_id[created.id]
        created.id = uuid.UUID(topic["topic_id"])
        state.topics_by_id[created.id] = created
    for seen, p in zip(partitions, created.partitions):
        start, count = seen["log_start_offset"], seen["high_watermark"] - seen["log_start_offset"]
        size = (seen.get("size_bytes") or 0) // max(1, count) or 100
        # Only the retained records are written, so the partition's size is the one seen.
        p.log.start_at(start)
        state.append_uniform(created, p, count, now_ms - count * 1000, 1000, size)
        p.leader_epoch = seen.get("leader_epoch", 0)
        p.history.entries = [(p.leader_epoch, seen["log_start_offset"])]
    state.views.publish(state.topics, state.dynamic_broker_configs, at_once=True)
