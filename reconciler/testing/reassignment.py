"""KIP-455 partition reassignments and leader elections as Kafka 4.0's controller runs them
(ReplicationControlManager: alterPartitionReassignments, listPartitionReassignments,
electLeaders; PartitionReassignmentRevert for a cancel). Errors and messages are Kafka's.

Like the controller, a request's changes are all computed against the registrations as they
were before it, then applied in request order (one partition named twice: both apply, the
last one wins). Callers hold `state.lock`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import errors
from .controller import check_manual_assignment
from .errors import KafkaApiError
from .partition_change import Election, PartitionChange, build, reassignment_targets
from .state import ClusterState, Partition, Topic

PREFERRED, UNCLEAN = 0, 1  # ElectLeadersRequest election_type

# Errors.message() of the errors the controller answers with no message of its own.
ELECTION_NOT_NEEDED_MESSAGE = "Leader election not needed for topic partition."
PREFERRED_LEADER_NOT_AVAILABLE_MESSAGE = "The preferred leader was not available."
ELIGIBLE_LEADERS_NOT_AVAILABLE_MESSAGE = "Eligible topic partition leaders are not available."


@dataclass(frozen=True)
class PartitionResult:
    partition: int
    error: int = errors.NONE
    message: str | None = None


def alter_reassignments(
    state: ClusterState,
    topics: list[tuple[str, list[tuple[int, list[int] | None]]]],
) -> list[tuple[str, list[PartitionResult]]]:
    """AlterPartitionReassignments: (topic, [(partition, target replicas or None to cancel)])
    in, one result per entry out, in request order (a topic named twice answers twice)."""
    changes: list[tuple[Topic, Partition, PartitionChange]] = []
    results = []
    for name, partitions in topics:
        answers = []
        for index, replicas in partitions:
            try:
                topic, partition, change = _reassignment_change(state, name, index, replicas)
            except KafkaApiError as e:
                answers.append(PartitionResult(index, e.code, e.message))
                continue
            if change is not None:
                changes.append((topic, partition, change))
            answers.append(PartitionResult(index))
        results.append((name, answers))
    for topic, partition, change in changes:
        state.apply_change(topic, partition, change)
    return results


def _reassignment_change(
    state: ClusterState, name: str, index: int, replicas: list[int] | None
) -> tuple[Topic, Partition, PartitionChange | None]:
    topic = state.topics.get(name)
    if topic is None:
        raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
    if not 0 <= index < len(topic.partitions):
        raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{index}.")
    partition = topic.partitions[index]
    if replicas is None:
        return topic, partition, _cancel(state, topic, partition)
    check_manual_assignment(state, replicas)
    target, adding, removing = reassignment_targets(partition.replicas, replicas)
    # Empty adding/removing lists are not written: a replaced target keeps the earlier lists.
    return (
        topic,
        partition,
        build(
            partition.registration(),
            state.alive,
            replicas=target if target != partition.replicas else None,
            adding=adding or None,
            removing=removing or None,
        ),
    )


def _cancel(state: ClusterState, topic: Topic, partition: Partition) -> PartitionChange | None:
    """cancelPartitionReassignment: back to the replicas before the reassignment (the ones being
    added go; the ones being removed stay), at once."""
    if not partition.reassigning:
        # NoReassignmentInProgressException carries Errors' own message, which ApiError drops.
        raise KafkaApiError(errors.NO_REASSIGNMENT_IN_PROGRESS, None)
    replicas = [r for r in partition.replicas if r not in partition.adding]
    isr = [r for r in partition.isr if r not in partition.adding]
    unclean = state.unclean_allowed(topic)
    if not isr:
        if not unclean:
            raise KafkaApiError(
                errors.INVALID_REPLICA_ASSIGNMENT,
                f"Unable to revert partition assignment for {topic.name}:{partition.index} "
                "because it would require an unclean leader election.",
            )
        isr = replicas
    return build(
        partition.registration(),
        state.alive,
        replicas=replicas,
        isr=isr,
        adding=[],
        removing=[],
        election=Election.UNCLEAN if unclean else Election.ONLINE,
    )


def list_reassignments(
    state: ClusterState,
    topics: list[tuple[str, list[int]]] | None,
) -> list[tuple[str, list[Partition]]]:
    """ListPartitionReassignments: the partitions in progress, of every topic (None) or of the
    named partitions; unknown topics and partitions, and idle ones, are left out."""
    if topics is None:
        wanted = [(t, list(range(len(t.partitions)))) for t in state.topics.values()]
    else:
        wanted = [(state.topics[name], indexes) for name, indexes in topics if name in state.topics]
    found = []
    for topic, indexes in wanted:
        ongoing = [topic.partitions[i] for i in indexes if 0 <= i < len(topic.partitions) and topic.partitions[i].reassigning]
        if ongoing:
            found.append((topic.name, ongoing))
    return found


def elect_leaders(
    state: ClusterState,
    election_type: int,
    topics: list[tuple[str, list[int]]] | None,
) -> list[tuple[str, list[PartitionResult]]]:
    """ElectLeaders: (topic, [partition]) or None for every partition of every topic, in which
    case partitions that need no election are left out (their topics stay, maybe empty)."""
    if election_type not in (PREFERRED, UNCLEAN):
        raise KafkaApiError(errors.INVALID_REQUEST, f"Unknown election type {election_type}")
    election = Election.PREFERRED if election_type == PREFERRED else Election.UNCLEAN
    changes: list[tuple[Topic, Partition, PartitionChange]] = []
    results = []
    if topics is None:
        for topic in state.topics.values():
            answers = [_elect(state, topic.name, p.index, election, changes) for p in topic.partitions]
            results.append((topic.name, [a for a in answers if a.error != errors.ELECTION_NOT_NEEDED]))
    else:
        for name, indexes in topics:
            results.append((name, [_elect(state, name, i, election, changes) for i in indexes]))
    for topic, partition, change in changes:
        state.apply_change(topic, partition, change)
    return results


def _elect(
    state: ClusterState, name: str, index: int, election: Election, changes: list[tuple[Topic, Partition, PartitionChange]]
) -> PartitionResult:
    topic = state.topics.get(name)
    if topic is None:
        return PartitionResult(index, errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}")
    if not 0 <= index < len(topic.partitions):
        return PartitionResult(index, errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{index}")
    partition = topic.partitions[index]
    if (election is Election.PREFERRED and partition.leader == partition.replicas[0]) or (
        election is Election.UNCLEAN and partition.leader != -1
    ):
        return PartitionResult(index, errors.ELECTION_NOT_NEEDED, ELECTION_NOT_NEEDED_MESSAGE)
    change = build(partition.registration(), state.alive, election=election)
    if change is None:
        if election is Election.PREFERRED:
            return PartitionResult(index, errors.PREFERRED_LEADER_NOT_AVAILABLE, PREFERRED_LEADER_NOT_AVAILABLE_MESSAGE)
        return PartitionResult(index, errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE_MESSAGE)
    changes.append((topic, partition, change))
    return PartitionResult(index)
