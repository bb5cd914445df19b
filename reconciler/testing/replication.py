"""Replica catch-up over time: a replica a reassignment adds copies the leader's log at a rate,
then joins the ISR (which may complete the reassignment).

Progress is computed from the time elapsed on the cluster's clock whenever the cluster is read
(every request, and TestCluster's inspection helpers), so nothing runs in the background and a
test moves time on with TestCluster.tick() instead of sleeping.

Rates, as Kafka's replication quotas apply them: a replica listed in the topic's
follower.replication.throttled.replicas ("<partition>:<broker>" or "*") shares its broker's
follower.replication.throttled.rate with the other throttled replicas that broker is copying; a
partition whose leader is listed in leader.replication.throttled.replicas shares the leader
broker's leader.replication.throttled.rate likewise. A replica gets the lower of what applies,
and at most the cluster's replication_rate (None: unthrottled copies are done at once).
Copying pauses while the new replica's broker or the leader is stopped, and while
reassignments are stalled.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from .configs import throttled
from .state import ClusterState, Partition, Topic

LEADER_RATE, FOLLOWER_RATE = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
LEADER_REPLICAS, FOLLOWER_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
# Bytes left that count as copied (floating-point steps never land exactly on zero).
_DONE = 1e-6


@dataclass
class _Copy:
    topic: Topic
    partition: Partition
    replica: int
    leader_throttled: bool
    follower_throttled: bool

    @property
    def remaining(self) -> float:
        return max(0.0, self.partition.log.copy_size() - self.partition.copied[self.replica])


def catch_up(state: ClusterState) -> None:
    """Advance every copying replica to the cluster clock's now. Callers hold state.lock."""
    now = state.clock()
    elapsed, state.replicated_at = max(0.0, now - state.replicated_at), now
    if state.reassignments_stalled:
        return
    while True:
        copies = _copies(state)
        if not copies:
            return
        rates = _rates(state, copies)
        step = min([elapsed] + [c.remaining / rate for c, rate in zip(copies, rates, strict=True) if rate > 0])
        for c, rate in zip(copies, rates, strict=True):
            gained = c.remaining if math.isinf(rate) else rate * step
            c.partition.copied[c.replica] += min(gained, c.remaining)
        elapsed -= step
        done = [c for c in copies if c.remaining <= _DONE]
        # Joining the ISR may complete a reassignment and change the leader, hence the new round.
        for c in done:
            state.join_isr(c.topic, c.partition, c.replica)
        if not done and elapsed <= 0:
            return


def _copies(state: ClusterState) -> list[_Copy]:
    copies = []
    for name in sorted(state.copying_topics):
        topic = state.topics.get(name)
        partitions = [p for p in topic.partitions if p.copied] if topic is not None else []
        if topic is None or not partitions:
            state.copying_topics.discard(name)
            continue
        leader_list, follower_list = topic.configs.get(LEADER_REPLICAS), topic.configs.get(FOLLOWER_REPLICAS)
        for p in partitions:
            if p.leader != -1 and state.alive(p.leader):
                copies += [
                    _Copy(topic, p, r, throttled(leader_list, p.index, p.leader), throttled(follower_list, p.index, r))
                    for r in sorted(p.copied)
                    if state.alive(r)
                ]
    return copies


def _rates(state: ClusterState, copies: list[_Copy]) -> list[float]:
    """Bytes/s for each copy, throttled shares split evenly among the copies sharing a broker."""
    by_leader = Counter(c.partition.leader for c in copies if c.leader_throttled)
    by_follower = Counter(c.replica for c in copies if c.follower_throttled)
    fast = math.inf if state.replication_rate is None else state.replication_rate
    rates = []
    for c in copies:
        rate = fast
        if c.leader_throttled:
            rate = min(rate, state.throttle_rate(c.partition.leader, LEADER_RATE) / by_leader[c.partition.leader])
        if c.follower_throttled:
            rate = min(rate, state.throttle_rate(c.replica, FOLLOWER_RATE) / by_follower[c.replica])
        rates.append(rate)
    return rates
