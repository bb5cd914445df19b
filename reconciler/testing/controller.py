"""KRaft controller rules for topic and config changes (ReplicationControlManager and
ConfigurationControlManager in Kafka 4.0): validation order, error codes and messages, and the
10,000-record limit. The wire handlers and the TestCluster helpers both go through here.

Callers hold `state.lock`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from . import errors
from .configs import (
    ConfigValue,
    dynamic_broker_config_error,
    effective_topic_configs,
    is_list_config,
    list_parts,
    validate_topic_configs,
)
from .errors import KafkaApiError
from .state import ClusterState, Topic, unify_collision_chars

MAX_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
# QuorumController refuses an operation that would write more metadata records than this.
MAX_RECORDS_PER_USER_OP = 10_000

# IncrementalAlterConfigs operations.
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


@dataclass
class NewTopic:
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str | None] = field(default_factory=dict)


@dataclass
class CreatedTopic:
    """One CreateTopics result; on success also what the v5+ response echoes."""

    name: str
    error: int = errors.NONE
    message: str | None = None
    topic_id: uuid.UUID | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: list[ConfigValue] | None = None


def topic_name_error(name: str) -> str | None:
    """org.apache.kafka.common.internals.Topic.validate."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_NAME_LENGTH:
        return f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, topic name: {name}"
    if not _LEGAL_NAME.fullmatch(name):
        return f"Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def create_topics(state: ClusterState, topics: list[NewTopic], validate_only: bool) -> list[CreatedTopic]:
    """ReplicationControlManager.createTopics. Duplicate names are the caller's concern
    (ControllerApis answers them with INVALID_REQUEST before the controller sees them)."""
    failed: dict[str, tuple[int, str | None]] = {}
    colliding = state.collision_names
    for t in topics:
        problem = topic_name_error(t.name)
        if problem:
            failed[t.name] = (errors.INVALID_TOPIC_EXCEPTION, problem)
        elif ("." in t.name or "_" in t.name) and unify_collision_chars(t.name) in colliding:
            failed[t.name] = (
                errors.INVALID_TOPIC_EXCEPTION,
                f"Topic '{t.name}' collides with existing topic: {colliding[unify_collision_chars(t.name)]}",
            )
    for t in topics:
        if t.name in state.topics:
            failed[t.name] = (errors.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists.")
    for t in topics:
        if t.name not in failed:
            problem = validate_topic_configs(t.configs)
            if problem:
                failed[t.name] = (errors.INVALID_CONFIG, problem)

    planned: dict[str, tuple[list[list[int]], dict[str, str], CreatedTopic]] = {}
    records = 0
    for t in topics:
        if t.name in failed:
            continue
        try:
            assignments = _plan_assignments(state, t)
        except KafkaApiError as e:
            failed[t.name] = (e.code, e.message)
            continue
        rf = len(assignments[0])
        records += 1 + len(assignments) + len(t.configs)
        # Validation refused null values, so this only narrows the type.
        configs = {key: value for key, value in t.configs.items() if value is not None}
        planned[t.name] = (
            assignments,
            configs,
            CreatedTopic(
                t.name,
                topic_id=uuid.uuid4(),
                num_partitions=len(assignments),
                replication_factor=rf,
                configs=effective_topic_configs(configs, state.broker_configs),
            ),
        )

    if records > MAX_RECORDS_PER_USER_OP:
        too_large = "Unable to perform excessively large batch operation."
        return [CreatedTopic(t.name, errors.POLICY_VIOLATION, too_large) for t in topics]

    results = []
    for t in topics:
        if t.name in failed:
            code, message = failed[t.name]
            results.append(CreatedTopic(t.name, code, message))
            continue
        assignments, configs, result = planned[t.name]
        if not validate_only:
            state.add_topic(t.name, assignments, configs, result.topic_id)
        results.append(result)
    return results


def _plan_assignments(state: ClusterState, t: NewTopic) -> list[list[int]]:
    if t.assignments:
        if t.replication_factor != -1:
            raise KafkaApiError(
                errors.INVALID_REQUEST, "A manual partition assignment was specified, but replication factor was not set to -1."
            )
        if t.num_partitions != -1:
            raise KafkaApiError(
                errors.INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions was not set to -1."
            )
        if sorted(t.assignments) != list(range(len(t.assignments))):
            raise KafkaApiError(errors.INVALID_REPLICA_ASSIGNMENT, "Partitions must be numbered consecutively starting from 0.")
        assignments = [t.assignments[i] for i in range(len(t.assignments))]
        _check_manual_assignments(state, assignments)
        return assignments
    if t.replication_factor < -1 or t.replication_factor == 0:
        raise KafkaApiError(
            errors.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value."
        )
    if t.num_partitions < -1 or t.num_partitions == 0:
        raise KafkaApiError(errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    partitions = t.num_partitions if t.num_partitions != -1 else int(state.setting("num.partitions"))
    rf = t.replication_factor if t.replication_factor != -1 else int(state.setting("default.replication.factor"))
    return state.place_replicas(0, partitions, rf)


def check_manual_assignment(state: ClusterState, replicas: list[int], replication_factor: int | None = None) -> None:
    """ReplicationControlManager.validateManualPartitionAssignment (CreateTopics, CreatePartitions
    and AlterPartitionReassignments): the brokers are walked in sorted order. A registered but
    stopped (fenced) broker passes."""
    if not replicas:
        raise KafkaApiError(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker in sorted(replicas):
        if broker not in state.brokers:
            raise KafkaApiError(
                errors.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {broker}, but no such broker is registered.",
            )
        if broker == previous:
            raise KafkaApiError(
                errors.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes the broker {broker} more than once."
            )
        previous = broker
    if replication_factor is not None and len(replicas) != replication_factor:
        raise KafkaApiError(
            errors.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes a partition with "
            f"{len(replicas)} replica(s), but this is not consistent with "
            f"previous partitions, which have {replication_factor} replica(s).",
        )


def _check_manual_assignments(state: ClusterState, assignments: list[list[int]]) -> None:
    """A new topic's or new partitions' assignments: each valid, and each with a live broker."""
    for i, replicas in enumerate(assignments):
        check_manual_assignment(state, replicas, len(assignments[0]))
        if not any(state.alive(b) for b in replicas):
            raise KafkaApiError(
                errors.INVALID_REPLICA_ASSIGNMENT,
                f"All brokers specified in the manual partition assignment for "
                f"partition {i} are fenced or in controlled shutdown.",
            )


def create_partitions(
    state: ClusterState, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
) -> None:
    """ReplicationControlManager.createPartitions for one topic; raises KafkaApiError."""
    topic = state.topics.get(name)
    if topic is None:
        raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
    current = len(topic.partitions)
    if count == current:
        raise KafkaApiError(errors.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if count < current:
        raise KafkaApiError(
            errors.INVALID_PARTITIONS, f"The topic {name} currently has {current} partition(s); {count} would not be an increase."
        )
    additional = count - current
    if assignments is not None:
        if len(assignments) != additional:
            raise KafkaApiError(
                errors.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only "
                f"{len(assignments)} assignment(s) were specified.",
            )
        _check_manual_assignments(state, [topic.partitions[0].replicas] + assignments)
        new = [list(a) for a in assignments]
    else:
        new = state.place_replicas(current, additional, len(topic.partitions[0].replicas))
    if not validate_only:
        state.add_partitions(topic, new)


def delete_topic(state: ClusterState, name: str | None, topic_id: uuid.UUID | None, validate_only: bool) -> Topic:
    if name is not None:
        topic = state.topics.get(name)
    else:
        topic = state.topics_by_id.get(topic_id) if topic_id is not None else None
    if topic is None:
        if name is not None:
            raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        raise KafkaApiError(errors.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")
    if topic.internal:
        raise KafkaApiError(errors.INVALID_REQUEST, f"Cannot delete internal topic {topic.name}")
    if not validate_only:
        state.remove_topic(topic)
    return topic


def incremental_alter_topic_configs(
    state: ClusterState, name: str, ops: list[tuple[str, int, str | None]], validate_only: bool
) -> None:
    """ConfigurationControlManager.incrementalAlterConfigs for one topic resource: all or nothing."""
    keys = [key for key, _, _ in ops]
    if len(set(keys)) != len(keys):
        raise KafkaApiError(errors.INVALID_REQUEST, "Error due to duplicate config keys")
    # Only DELETE may come without a value; "" stands for its ignored one.
    checked: list[tuple[str, int, str]] = []
    for key, op, value in ops:
        if value is None and op != DELETE:
            raise KafkaApiError(errors.INVALID_REQUEST, f"Null value not supported for : {key}")
        if op not in (SET, DELETE, APPEND, SUBTRACT):
            raise KafkaApiError(errors.INVALID_REQUEST, f"Unknown alter config operation {op}")
        checked.append((key, op, value or ""))
    topic = state.topics.get(name)
    if topic is None:
        raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
    new = dict(topic.configs)
    for key, op, value in checked:
        if op == SET:
            new[key] = value
        elif op == DELETE:
            new.pop(key, None)
        else:
            if not is_list_config(key):
                raise KafkaApiError(
                    errors.INVALID_CONFIG, f"Can't {('APPEND', 'SUBTRACT')[op - 2]} to key {key} because its type is not LIST."
                )
            parts = list_parts(new.get(key), key)
            for item in value.split(","):
                if op == APPEND and item not in parts:
                    parts.append(item)
                elif op == SUBTRACT and item in parts:
                    parts.remove(item)
            new[key] = ",".join(parts)
    problem = validate_topic_configs(new)
    if problem:
        raise KafkaApiError(errors.INVALID_CONFIG, problem)
    if not validate_only:
        topic.configs = new


def alter_topic_configs(state: ClusterState, name: str, configs: dict[str, str | None], validate_only: bool) -> None:
    """Legacy AlterConfigs: the given set replaces every topic-level override."""
    topic = state.topics.get(name)
    if topic is None:
        raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
    problem = validate_topic_configs(configs)
    if problem:
        raise KafkaApiError(errors.INVALID_CONFIG, problem)
    if not validate_only:
        topic.configs = {key: value for key, value in configs.items() if value is not None}


def check_broker_config_ops(broker_id: int, name: str, ops: list[tuple[str, int, str | None]]) -> None:
    """ConfigAdminManager.preprocess for a BROKER resource, on the broker that received it: the
    name is "" (cluster-wide default) or this broker's id, and DynamicBrokerConfig.validate
    passes (its refusals come back as INVALID_REQUEST, KAFKA-13609)."""
    if name != "":
        try:
            node = int(name)
        except ValueError:
            raise KafkaApiError(errors.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}") from None
        if node != broker_id:
            raise KafkaApiError(errors.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id}, but received {name}")
    nulls = [key for key, op, value in ops if op != DELETE and value is None]
    if nulls:
        raise KafkaApiError(errors.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    for key, op, value in ops:
        if op not in (SET, DELETE, APPEND, SUBTRACT):
            raise KafkaApiError(errors.INVALID_REQUEST, f"Unknown operations type {op}")
        if op in (APPEND, SUBTRACT):
            # prepareIncrementalConfigs looks the key up among topic configs to see if it is a list.
            raise KafkaApiError(errors.INVALID_CONFIG, f"Unknown topic config name: {key}")
        if op == SET and value is not None:
            problem = dynamic_broker_config_error(key, value)
            if problem:
                raise KafkaApiError(errors.INVALID_REQUEST, problem)


def incremental_alter_broker_configs(
    state: ClusterState, name: str, ops: list[tuple[str, int, str | None]], validate_only: bool
) -> None:
    """ConfigurationControlManager for a BROKER entity ("" or "<id>"), already checked by the
    receiving broker (check_broker_config_ops). DELETE of a key that is not set is no error."""
    new = dict(state.dynamic_broker_configs.get(name, {}))
    for key, op, value in ops:
        if op == SET and value is not None:
            new[key] = value
        elif op == DELETE:
            new.pop(key, None)
    if validate_only:
        return
    if new:
        state.dynamic_broker_configs[name] = new
    else:
        state.dynamic_broker_configs.pop(name, None)
