"""How the KRaft controller changes one partition's registration (PartitionChangeBuilder and
PartitionReassignmentReplicas in Kafka 4.0): finishing a reassignment once the ISR allows it,
electing a leader, and when the leader epoch rises.

Pure: a registration and the wanted targets in, the change (or None: nothing to write) out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

NO_LEADER = -1


class Election(Enum):
    ONLINE = "online"  # keep a valid leader, else the first valid target replica
    PREFERRED = "preferred"  # the first target replica if it is valid
    UNCLEAN = "unclean"  # as ONLINE, then any live replica (records may be lost)


@dataclass(frozen=True)
class Registration:
    """What the controller records for a partition (PartitionRegistration)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    leader: int

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)


@dataclass(frozen=True)
class PartitionChange:
    """One PartitionChangeRecord: None fields are unchanged. A `leader` (even the current one)
    raises the leader epoch by one."""

    replicas: tuple[int, ...] | None = None
    isr: tuple[int, ...] | None = None
    adding: tuple[int, ...] | None = None
    removing: tuple[int, ...] | None = None
    leader: int | None = None
    unclean: bool = False


def reassignment_targets(current: Sequence[int], target: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """PartitionReassignmentReplicas(current, target): (replicas, adding, removing). Both sets are
    sorted (a TreeSet); the replica list is the target then the replicas being removed."""
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    return list(target) + removing, adding, removing


def build(
    part: Registration,
    acceptable: Callable[[int], bool],
    *,
    replicas: Sequence[int] | None = None,
    isr: Sequence[int] | None = None,
    adding: Sequence[int] | None = None,
    removing: Sequence[int] | None = None,
    election: Election = Election.ONLINE,
) -> PartitionChange | None:
    """PartitionChangeBuilder.build: targets not given keep the registration's values.
    `acceptable(broker)` says whether a broker may lead (registered and not fenced)."""
    t_replicas = tuple(replicas) if replicas is not None else part.replicas
    t_isr = tuple(isr) if isr is not None else part.isr
    t_adding = tuple(adding) if adding is not None else part.adding
    t_removing = tuple(removing) if removing is not None else part.removing

    completed = _completed_reassignment(t_replicas, t_isr, t_adding, t_removing)
    if completed is not None:
        t_replicas, t_isr = completed
        t_adding = t_removing = ()

    leader, unclean = _elect(part, t_replicas, t_isr, acceptable, election)
    new_leader: int | None = leader if leader != part.leader else None
    if new_leader is None and not set(part.replicas) <= set(t_replicas):
        # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: dropping a replica bumps the epoch.
        new_leader = part.leader
    if unclean:
        t_isr = (leader,)
    change = PartitionChange(
        replicas=t_replicas if t_replicas != part.replicas else None,
        isr=t_isr if t_isr != part.isr else None,
        adding=t_adding if t_adding != part.adding else None,
        removing=t_removing if t_removing != part.removing else None,
        leader=new_leader,
        unclean=unclean,
    )
    return None if change == PartitionChange() else change


def _completed_reassignment(
    replicas: tuple[int, ...], isr: tuple[int, ...], adding: tuple[int, ...], removing: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """PartitionReassignmentReplicas.maybeCompleteReassignment: done once the ISR, without the
    replicas being removed, holds every replica that stays. (The adding list is not consulted:
    a replaced target can leave a replica in it that is also being removed.)"""
    if not adding and not removing:
        return None
    new_isr, new_replicas = isr, replicas
    if removing:
        new_isr = tuple(r for r in isr if r not in removing)
        new_replicas = tuple(r for r in replicas if r not in removing)
        if not new_isr or not new_replicas:
            return None
    if not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


def _elect(
    part: Registration, replicas: Sequence[int], isr: Sequence[int], acceptable: Callable[[int], bool], election: Election
) -> tuple[int, bool]:
    """(leader, unclean): electPreferredLeader / electAnyLeader."""

    def valid(r: int) -> bool:
        return r in isr and acceptable(r)

    if election is Election.PREFERRED:
        if valid(replicas[0]):
            return replicas[0], False
        if valid(part.leader):
            return part.leader, False
        return next((r for r in replicas[1:] if valid(r)), NO_LEADER), False
    if valid(part.leader):
        return part.leader, False
    clean = next((r for r in replicas if valid(r)), None)
    if clean is not None:
        return clean, False
    if election is Election.UNCLEAN:
        unclean = next((r for r in replicas if acceptable(r)), None)
        if unclean is not None:
            return unclean, True
    return NO_LEADER, False
