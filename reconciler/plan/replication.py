"""Replica reassignments, planned: which partitions of a topic move, to which brokers, and the
checks made before anything is sent (AlterPartitionReassignments has no validate_only). Pure.

A topic gets one `ReassignReplicas` with only the partitions whose replicas change, when its
replication factor differs from the manifest's, a pinned `replica_assignment` differs from what
the cluster has, or a replica sits on a broker the cluster declares in `drain_brokers`. Where the
replicas go is `reconciler.plan.placement`'s: one `Placement` per plan, holding the load of every topic
in the observation, so the topics (planned in name order) share the balance. A plan of part of a
cluster (the local drift engine's) is given the current replicas of the topics it leaves out
(`Elsewhere`), so that it places and checks as the whole cluster's plan does.

Decisions worth knowing:
- Alive brokers are the ones Metadata lists (Kafka lists only registered, unfenced brokers); a
  broker id that appears in some replica list but not in Metadata is down. An observation without
  brokers (a snapshot written without them) cannot be placed on: an error, not a guess.
- A reassignment in progress counts as what it will leave (the partition's replicas without the
  ones being removed). Toward the target the manifests ask for, the partition's move is marked
  `in_progress`: apply waits for it and sends nothing new. Toward another target it is left alone
  with a warning naming both targets; a second reassignment is never planned over a running one.
  One whose result and whose start both satisfy the manifests is someone else's, and only noted.
- Errors (the plan must not be applied), each naming the topic, the partition or the broker:
  a pinned list naming a broker that is unknown, drained or down; too few eligible brokers for
  the replication factor (a broker down refuses an increase that needs it); a factor the policy
  does not allow; a factor below the topic's effective min.insync.replicas once the plan's config
  changes are made (every acks=all write would fail); a move of a partition without a leader; a
  decrease that would keep no in-sync replica.
- Warnings: replicas that must share a rack (more replicas than racks), and brokers without a rack
  among racked ones (placement then ignores racks).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from reconciler.errors import noun
from reconciler.models.desired import DesiredState, DesiredTopic, SourceRef
from reconciler.models.observed import Broker, ConfigSource, ObservedState, ObservedTopic
from reconciler.models.plan import (
    ActionKind,
    ConfigChange,
    Diagnostic,
    DiagnosticCode,
    PartitionMove,
    ReassignReplicas,
    Severity,
    TopicPreconditions,
)
from reconciler.plan.placement import BrokerInfo, Placement, PlacementError, rack_aware

MIN_INSYNC = "min.insync.replicas"
_INHERITED = (
    ConfigSource.DYNAMIC_BROKER_CONFIG,
    ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    ConfigSource.STATIC_BROKER_CONFIG,
    ConfigSource.DEFAULT_CONFIG,
)


@dataclass
class ReplicaPlan:
    """What planning one topic's replicas found."""

    action: ReassignReplicas | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


_REPLICAS = operator.attrgetter("replicas")

# The current replicas (topic -> partition -> brokers) of the cluster's topics that the observation
# planned leaves out, asked for only when replicas are placed or pins checked.
Elsewhere = Callable[[], Mapping[str, Mapping[int, Sequence[int]]]]


def _brokers(ids: Sequence[int]) -> str:
    return ", ".join(map(str, ids))


def _listed(replicas: Sequence[int]) -> str:
    return "[" + _brokers(replicas) + "]"


class ReplicaPlanner:
    """One per plan. The placement (every topic's load) is built on the first topic that needs it.
    `elsewhere`: the replicas of the cluster's topics `observed` leaves out (see `Elsewhere`)."""

    def __init__(self, desired: DesiredState, observed: ObservedState, elsewhere: Elsewhere | None = None):
        self._desired, self._observed = desired, observed
        self._elsewhere = elsewhere
        self._others: Mapping[str, Mapping[int, Sequence[int]]] | None = None
        self._drain = frozenset(desired.cluster.drain_brokers)
        self._alive = {b.node_id: b for b in observed.brokers}
        self._placement: Placement | None = None

    def plan(self, want: DesiredTopic, have: ObservedTopic, changes: Sequence[ConfigChange]) -> ReplicaPlan:
        """The topic's reassignment, if any, and what is wrong with it. `changes`: the plan's config
        changes of the topic (min.insync.replicas is checked as it will be)."""
        observed, name = self._observed, want.name
        moving = observed.reassignments.get(name, {})
        if not moving and not want.replica_assignment:
            # What the check below finds, without its per-partition lists (the usual case): every
            # partition has the factor's count of replicas and none on a broker being drained.
            replicas = list(map(_REPLICAS, have.partitions))
            if set(map(len, replicas)) <= {want.replication_factor} and (
                not self._drain or all(map(self._drain.isdisjoint, replicas))
            ):
                return ReplicaPlan()
        now = {p.partition: observed.target_replicas(name, p.partition) for p in have.partitions}
        pinned = {p: b for p, b in want.replica_assignment.items() if p in now}  # new partitions: next plan
        if not moving and not any(self._differs(now[p], want, pinned.get(p)) for p in now):
            return ReplicaPlan()
        out = _Found(want)
        # What the topic had before any reassignment in progress: the factor it changes from.
        started = {
            p.partition: [b for b in p.replicas if b not in getattr(moving.get(p.partition), "adding_replicas", ())]
            for p in have.partitions
        }
        rf_before = len(started[0])
        if want.replication_factor != rf_before:
            self._check_factor(want, have, changes, rf_before, out)
        if not self._alive:
            out.error(
                DiagnosticCode.REPLICATION_FACTOR_CHANGE,
                f"{name}: its replicas must change ({self._reason(want, rf_before, started, pinned)}), but the "
                "observation lists no brokers (a snapshot written without them), so they cannot be placed; "
                "plan against the cluster, or take a new snapshot",
            )
            return out.result()
        if pinned and not self._pinned_ok(want, now, pinned, out):
            return out.result()
        placement = self._placement_state()
        try:
            targets = placement.place(name, want.replication_factor, pinned, isr={p.partition: p.isr for p in have.partitions})
        except PlacementError as e:
            # Its message names the topic as the placement knows it; the plan names it once, first.
            out.error(DiagnosticCode.REPLICATION_FACTOR_CHANGE, f"{name}: {str(e).removeprefix(f'topic {name!r}: ')}")
            return out.result()
        moves = self._moves(want, have, now, targets, out)
        if not moves:
            return out.result()
        self._check_moves(want, have, moves, placement, out)
        out.action = ReassignReplicas(
            topic=name,
            replication_factor_before=rf_before,
            replication_factor_after=want.replication_factor,
            partitions=moves,
            throttle_bytes_per_s=self._desired.cluster.reassignment.throttle_bytes_per_s,
            reason=self._reason(want, rf_before, started, pinned, moves),
            source=want.source,
            preconditions=TopicPreconditions(exists=True, topic_id=have.topic_id, partition_count=len(have.partitions)),
        )
        return out.result()

    # -- what differs --------------------------------------------------------------------------

    def _differs(self, replicas: Sequence[int], want: DesiredTopic, pinned: Sequence[int] | None) -> bool:
        return (
            len(replicas) != want.replication_factor
            or any(b in self._drain for b in replicas)
            or (pinned is not None and list(pinned) != list(replicas))
        )

    def _reason(
        self,
        want: DesiredTopic,
        rf_before: int,
        started: dict[int, list[int]],
        pinned: dict[int, list[int]],
        moves: Sequence[PartitionMove] = (),
    ) -> str:
        reasons = []
        if want.replication_factor != rf_before:
            reasons.append(f"the manifest declares replication_factor {want.replication_factor}")
        drained = sorted({b for replicas in started.values() for b in replicas if b in self._drain})
        if drained:
            reasons.append(f"the cluster drains {noun(len(drained), 'broker')} {_brokers(drained)}")
        if any(list(b) != started[p] for p, b in pinned.items()):
            reasons.append("the manifest pins replica_assignment")
        waiting = [m.partition for m in moves if m.in_progress]
        if waiting:
            reasons.append(
                f"already being reassigned there ({noun(len(waiting), 'partition')} {_brokers(waiting)}): apply waits for it"
            )
        return "; ".join(reasons) or "a reassignment is in progress"

    def _moves(
        self, want: DesiredTopic, have: ObservedTopic, now: dict[int, list[int]], targets: dict[int, list[int]], out: _Found
    ) -> list[PartitionMove]:
        moving = self._observed.reassignments.get(want.name, {})
        moves = []
        for p in have.partitions:
            index, target = p.partition, targets[p.partition]
            size = p.size_bytes
            running = moving.get(index)
            if running is None:
                if target != now[index]:
                    before = list(p.replicas)
                    added = len([b for b in target if b not in before])
                    moves.append(
                        PartitionMove(
                            partition=index, before=before, after=target, bytes_to_copy=None if size is None else size * added
                        )
                    )
                continue
            started_from = [b for b in p.replicas if b not in running.adding_replicas]
            if target != now[index]:
                out.warning(
                    DiagnosticCode.REASSIGNMENT_IN_PROGRESS,
                    f"{want.name}-{index}: a reassignment is in progress toward {_listed(now[index])} (from "
                    f"{_listed(started_from)}), and the manifests want {_listed(target)}; this plan leaves the "
                    "partition alone: plan again once it is done, or cancel it "
                    "(reconcile apply --cancel-reassignments)",
                    index,
                )
            elif self._differs(started_from, want, want.replica_assignment.get(index)):
                added = len([b for b in target if b not in started_from])
                moves.append(
                    PartitionMove(
                        partition=index,
                        before=started_from,
                        after=target,
                        in_progress=True,
                        bytes_to_copy=None if size is None else size * added,
                    )
                )
            else:
                out.note(
                    DiagnosticCode.REASSIGNMENT_IN_PROGRESS,
                    f"{want.name}-{index}: a reassignment is in progress ({_listed(started_from)} -> "
                    f"{_listed(now[index])}); the manifests hold before and after it, so the plan leaves it alone",
                    index,
                )
        return moves

    # -- checks --------------------------------------------------------------------------------

    def _check_factor(
        self, want: DesiredTopic, have: ObservedTopic, changes: Sequence[ConfigChange], rf_before: int, out: _Found
    ) -> None:
        rf, policy = want.replication_factor, self._desired.policy
        allowed = policy.allowed_replication_factors
        if allowed is not None and rf not in allowed:
            out.error(
                DiagnosticCode.POLICY_REPLICATION_FACTOR,
                f"{want.name}: replication factor {rf_before} -> {rf}, and the policy allows only "
                f"{_brokers(sorted(allowed))}; declare one of them",
                source=policy.source_of("allowed_replication_factors") or want.source,
            )
        min_insync = self._min_insync_after(have, changes)
        if min_insync is not None and min_insync > rf:
            out.error(
                DiagnosticCode.MIN_INSYNC_ABOVE_REPLICATION,
                f"{want.name}: replication factor {rf_before} -> {rf} is below its min.insync.replicas "
                f"{min_insync}, so every write with acks=all would fail; lower min.insync.replicas to at most "
                f"{rf} first (declare it on the topic), or keep replication_factor at {rf_before}",
                key=MIN_INSYNC,
            )

    def _min_insync_after(self, have: ObservedTopic, changes: Sequence[ConfigChange]) -> int | None:
        """The topic's min.insync.replicas once the plan's config changes are made."""
        change = next((c for c in changes if c.key == MIN_INSYNC), None)
        if change is None:
            value = have.config_value(MIN_INSYNC)
        elif change.op == "set":
            value = change.after
        else:  # the override goes: the topic inherits what a topic without one has
            value = next(
                (
                    t.configs[MIN_INSYNC].value
                    for _, t in sorted(self._observed.topics.items())
                    if MIN_INSYNC in t.configs and t.configs[MIN_INSYNC].source in _INHERITED
                ),
                "1",
            )
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None

    def _pinned_ok(self, want: DesiredTopic, now: dict[int, list[int]], pinned: dict[int, list[int]], out: _Found) -> bool:
        known = set(self._alive) | set(chain.from_iterable(self._all_replicas()))
        ok = True
        for partition, brokers in sorted(pinned.items()):
            where = f"{want.name}-{partition}: replica_assignment {_listed(brokers)}"
            for broker in brokers:
                if broker not in known:
                    problem = f"names broker {broker}, which is not in the cluster (brokers {_brokers(sorted(self._alive))})"
                elif broker in self._drain:
                    problem = f"names broker {broker}, which the cluster drains (drain_brokers)"
                elif broker not in self._alive and broker not in now[partition]:
                    problem = f"adds broker {broker}, which is down (not in the cluster's metadata)"
                else:
                    continue
                ok = False
                out.error(
                    DiagnosticCode.REPLICA_ASSIGNMENT_INVALID,
                    f"{where} {problem}; pin live brokers that are not drained, or remove the pin",
                    partition,
                )
        return ok

    def _check_moves(
        self, want: DesiredTopic, have: ObservedTopic, moves: list[PartitionMove], placement: Placement, out: _Found
    ) -> None:
        by_index = {p.partition: p for p in have.partitions}
        for move in moves:
            p = by_index[move.partition]
            if p.leader < 0:
                out.error(
                    DiagnosticCode.PARTITION_OFFLINE,
                    f"{want.name}-{move.partition} has no leader (offline; replicas {_listed(p.replicas)}), so "
                    "no replica can be copied from it; bring its brokers back, then plan again",
                    move.partition,
                )
            elif p.isr and not move.adding and not set(move.after) & set(p.isr):
                out.error(
                    DiagnosticCode.REPLICATION_FACTOR_CHANGE,
                    f"{want.name}-{move.partition}: {_listed(move.before)} -> {_listed(move.after)} would remove "
                    f"every in-sync replica (in sync: {_listed(p.isr)}); wait until the replicas catch up, "
                    "then plan again",
                    move.partition,
                )
        for note in placement.notes:
            out.warning(DiagnosticCode.RACK_SPREAD, f"{want.name}: {note}")
        racks = {b.rack for b in self._observed.brokers if b.rack is not None and b.node_id not in self._drain}
        if placement.rack_aware and want.replication_factor > len(racks):
            out.warning(
                DiagnosticCode.RACK_SPREAD,
                f"{want.name}: replication factor {want.replication_factor} on {len(racks)} rack(s) "
                f"({', '.join(sorted(racks))}): some replicas of a partition share a rack, and losing that "
                "rack loses them together",
            )

    def place_new(self, want: DesiredTopic) -> dict[int, list[int]]:
        """The replica lists a new topic is created with when the manifests constrain where they
        go (pinned `replica_assignment`, `drain_brokers`, racks on every eligible broker), so that
        CreateTopics places it as the plan shows and one apply converges; {} to let the brokers
        place it (nothing constrains it, or the observation lists no brokers). Raises PlacementError."""
        if not self._alive:
            return {}
        # Asked before the placement is built: that weighs every topic's replicas, and most new topics need none of it.
        if not (want.replica_assignment or self._drain or rack_aware(map(_broker_info, self._observed.brokers), self._drain)):
            return {}
        return self._placement_state().place_new(want.name, want.partitions, want.replication_factor, want.replica_assignment)

    # -- the cluster ---------------------------------------------------------------------------

    def _all_replicas(self) -> list[Sequence[int]]:
        return [p.replicas for t in self._observed.topics.values() for p in t.partitions] + [
            replicas for parts in self._other_topics().values() for replicas in parts.values()
        ]

    def _other_topics(self) -> Mapping[str, Mapping[int, Sequence[int]]]:
        if self._others is None:
            self._others = self._elsewhere() if self._elsewhere is not None else {}
        return self._others

    def _placement_state(self) -> Placement:
        if self._placement is None:
            observed = self._observed
            down = sorted(set(chain.from_iterable(self._all_replicas())) - set(self._alive))
            brokers = [_broker_info(b) for b in observed.brokers]
            brokers += [BrokerInfo(node_id=b, rack=None, alive=False) for b in down]
            current: dict[str, Mapping[int, Sequence[int]]] = {
                name: {p.partition: observed.target_replicas(name, p.partition) for p in topic.partitions}
                for name, topic in observed.topics.items()
            }
            current.update(self._other_topics())
            self._placement = Placement(brokers, current, self._drain)
        return self._placement


def _broker_info(broker: Broker) -> BrokerInfo:
    """A broker Metadata lists, as the placement knows it (alive)."""
    return BrokerInfo(node_id=broker.node_id, rack=broker.rack)


class _Found:
    """A topic's findings as they are made, each diagnostic placed under the reassignment."""

    def __init__(self, want: DesiredTopic):
        self._want = want
        self.action: ReassignReplicas | None = None
        self.diagnostics: list[Diagnostic] = []

    def result(self) -> ReplicaPlan:
        return ReplicaPlan(action=self.action, diagnostics=self.diagnostics)

    def _add(
        self,
        severity: Severity,
        code: DiagnosticCode,
        message: str,
        partition: int | None,
        source: SourceRef | None = None,
        key: str | None = None,
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                severity=severity,
                code=code,
                message=message,
                topic=self._want.name,
                partition=partition,
                source=source or self._want.source,
                action=ActionKind.REASSIGN_REPLICAS,
                key=key,
            )
        )

    def error(
        self,
        code: DiagnosticCode,
        message: str,
        partition: int | None = None,
        source: SourceRef | None = None,
        key: str | None = None,
    ) -> None:
        self._add(Severity.ERROR, code, message, partition, source, key)

    def warning(self, code: DiagnosticCode, message: str, partition: int | None = None) -> None:
        self._add(Severity.WARNING, code, message, partition)

    def note(self, code: DiagnosticCode, message: str, partition: int | None = None) -> None:
        self._add(Severity.INFO, code, message, partition)
