"""Which ACL operation each action needs, and whether the read shows the principal has it. Pure.

Kafka tells a principal what it may do (KIP-430's authorized operations, read with every topic and
from DescribeCluster), so a plan can say before anything is sent that an action would be refused:

| action | needs (Kafka 4.0's ControllerApis / KafkaApis) |
| --- | --- |
| create topic | CREATE on the cluster or on the topic |
| add partitions | ALTER on the topic |
| reassign replicas | ALTER on the cluster (AlterPartitionReassignments) |
| alter configs | ALTER_CONFIGS on the topic |
| truncate (DeleteRecords) | DELETE on the topic |
| delete topic | DELETE on the topic |

Operations that were not read (None: an old broker, a snapshot from before) never block. A topic
the principal may not DESCRIBE is hidden: whether it exists is unknown, so nothing is planned for it.
"""

from __future__ import annotations

from reconciler.models.desired import ClusterSpec
from reconciler.models.observed import ObservedState
from reconciler.models.plan import ActionKind, unhandled

# kafka-acls names an operation in CamelCase (--operation AlterConfigs).
_ACL_TOOL_NAME = {
    "CREATE": "Create",
    "ALTER": "Alter",
    "ALTER_CONFIGS": "AlterConfigs",
    "DELETE": "Delete",
    "DESCRIBE": "Describe",
}


def needed(kind: ActionKind) -> str:
    """The operation an action of this kind needs on its topic (for creation: or on the cluster;
    for a reassignment: on the cluster)."""
    match kind:
        case ActionKind.CREATE_TOPIC:
            return "CREATE"
        case ActionKind.ADD_PARTITIONS | ActionKind.REASSIGN_REPLICAS:
            return "ALTER"
        case ActionKind.ALTER_CONFIGS:
            return "ALTER_CONFIGS"
        case ActionKind.TRUNCATE | ActionKind.DELETE_TOPIC:
            return "DELETE"
        case _:
            unhandled(kind)


def principal(spec: ClusterSpec) -> str:
    """The principal as kafka-acls names it, where the manifests tell it (a literal SASL user)."""
    user = spec.security.username
    if user and "${" not in user and spec.security.sasl_mechanism is not None:
        return f"User:{user}"
    return "<principal>"


def grant(spec: ClusterSpec, operation: str, topic: str | None) -> str:
    """The kafka-acls command that grants `operation` on `topic` (None: on the cluster)."""
    where = f"--topic {topic}" if topic is not None else "--cluster"
    return f"kafka-acls --add --allow-principal {principal(spec)} --operation {_ACL_TOOL_NAME.get(operation, operation)} {where}"


def lacking(kind: ActionKind, topic: str, observed: ObservedState) -> str | None:
    """The operation the read shows the principal lacks for this action, or None (it has it, or
    that is not known)."""
    operation = needed(kind)
    on_topic = observed.operations(topic)
    if kind is ActionKind.REASSIGN_REPLICAS:
        on_cluster = observed.cluster_authorized_operations
        return None if on_cluster is None or operation in on_cluster else operation
    if kind is ActionKind.CREATE_TOPIC:
        on_cluster = observed.cluster_authorized_operations
        if on_topic is None or on_cluster is None:
            return None
        return None if operation in on_topic or operation in on_cluster else operation
    return None if on_topic is None or operation in on_topic else operation


def missing_right_message(kind: ActionKind, topic: str, operation: str, spec: ClusterSpec) -> str:
    on_cluster = kind is ActionKind.REASSIGN_REPLICAS
    where = (
        "on the cluster"
        if on_cluster
        else f"on the cluster or on topic {topic}"
        if kind is ActionKind.CREATE_TOPIC
        else f"on topic {topic}"
    )
    return (
        f"not authorised to {kind.facts.heading} {topic}: the principal lacks {operation} {where}, so the "
        f"brokers would refuse it; grant it ({grant(spec, operation, None if on_cluster else topic)}) and plan again"
    )


def refusal(kind: ActionKind, topic: str, observed: ObservedState, spec: ClusterSpec) -> str | None:
    """Why apply must not send this action by `observed` (its re-read): the topic is hidden, or the
    operation it needs is missing; None otherwise."""
    if topic in observed.hidden_topics:
        return hidden_topic_message(topic, spec).replace("nothing is planned for it", "nothing was sent")
    operation = lacking(kind, topic, observed)
    return None if operation is None else missing_right_message(kind, topic, operation, spec)


def hidden_topic_message(topic: str, spec: ClusterSpec) -> str:
    return (
        f"not authorised to see topic {topic}: the principal may not DESCRIBE it, so whether it exists is "
        f"unknown and nothing is planned for it; grant DESCRIBE on topic {topic} "
        f"({grant(spec, 'DESCRIBE', topic)})"
    )


def hidden_topics_line(topics: list[str]) -> str:
    """One line for outputs that list what the read could not see (snapshot, drift)."""
    return f"not authorised to see: {', '.join(topics)} — grant DESCRIBE on them (their existence is unknown)"


def sizes_refused_line(error: str) -> str:
    """One line, said once, for partition sizes DescribeLogDirs did not give (`error`: its answer)."""
    return (
        f"partition sizes unknown: the principal lacks DESCRIBE on the cluster (DescribeLogDirs answered "
        f"{error}); grant it to see sizes"
    )
