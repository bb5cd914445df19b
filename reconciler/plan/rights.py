"""Which ACL each request needs, what each action and each role sends, and whether the read shows
the principal has it. Pure.

`REQUESTS` is the one statement of what Kafka 4.0 authorises each request the reconciler sends
with (KafkaApis, ControllerApis, AuthHelper); the plan's and apply's rights checks and
`reconcile acls` all read it:

| request | needs |
| --- | --- |
| Metadata, ListOffsets, OffsetForLeaderEpoch | DESCRIBE on the topic (one it may not DESCRIBE is hidden) |
| DescribeConfigs of a topic / of a broker | DESCRIBE_CONFIGS on the topic / on the cluster |
| DescribeCluster (its authorized operations), DescribeLogDirs, ListPartitionReassignments | DESCRIBE on the cluster |
| FindCoordinator (group), OffsetFetch | DESCRIBE on the group (OffsetFetch: and DESCRIBE on each topic) |
| ListGroups | DESCRIBE on the cluster (else only the groups it may DESCRIBE are listed) |
| CreateTopics | CREATE on the topic (or on the cluster), with validate_only too |
| CreatePartitions | ALTER on the topic, with validate_only too |
| IncrementalAlterConfigs of a topic / of a broker | ALTER_CONFIGS on the topic / on the cluster, with validate_only too |
| DeleteRecords, DeleteTopics | DELETE on the topic |
| AlterPartitionReassignments, ElectLeaders | ALTER on the cluster |

Kafka lets an ALLOW imply: READ, WRITE, DELETE and ALTER imply DESCRIBE, ALTER_CONFIGS implies
DESCRIBE_CONFIGS (StandardAuthorizerData), so a minimal set of bindings leaves the implied ones out.

Operations that were not read (None: an old broker, a snapshot from before) never block. A topic
the principal may not DESCRIBE is hidden: whether it exists is unknown, so nothing is planned for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from reconciler.models.desired import ClusterSpec, DesiredState, TopicState
from reconciler.models.observed import ObservedState
from reconciler.models.plan import ActionKind, unhandled
from reconciler.plan.policy import is_protected
from reconciler.plan.read_scope import desired_scope
from reconciler.ports import BrokerError, ErrorKind


class Resource(str, Enum):
    TOPIC = "topic"
    GROUP = "group"
    CLUSTER = "cluster"


# The one CLUSTER resource's name (org.apache.kafka.common.resource.Resource.CLUSTER_NAME).
CLUSTER_NAME = "kafka-cluster"

Need = tuple[Resource, str]

REQUESTS: dict[str, tuple[Need, ...]] = {
    "Metadata": ((Resource.TOPIC, "DESCRIBE"),),
    "ListOffsets": ((Resource.TOPIC, "DESCRIBE"),),
    "OffsetForLeaderEpoch": ((Resource.TOPIC, "DESCRIBE"),),
    "DescribeConfigs(topic)": ((Resource.TOPIC, "DESCRIBE_CONFIGS"),),
    "DescribeConfigs(broker)": ((Resource.CLUSTER, "DESCRIBE_CONFIGS"),),
    # Without DESCRIBE on the cluster Kafka reports no authorized operations at all.
    "DescribeCluster": ((Resource.CLUSTER, "DESCRIBE"),),
    "DescribeLogDirs": ((Resource.CLUSTER, "DESCRIBE"),),
    "ListPartitionReassignments": ((Resource.CLUSTER, "DESCRIBE"),),
    "FindCoordinator": ((Resource.GROUP, "DESCRIBE"),),
    "OffsetFetch": ((Resource.GROUP, "DESCRIBE"), (Resource.TOPIC, "DESCRIBE")),
    "ListGroups": ((Resource.CLUSTER, "DESCRIBE"),),
    # Or CREATE on the cluster (ControllerApis.createTopics); the topic's own is the least.
    "CreateTopics": ((Resource.TOPIC, "CREATE"),),
    "CreatePartitions": ((Resource.TOPIC, "ALTER"),),
    "IncrementalAlterConfigs(topic)": ((Resource.TOPIC, "ALTER_CONFIGS"),),
    "IncrementalAlterConfigs(broker)": ((Resource.CLUSTER, "ALTER_CONFIGS"),),
    "DeleteRecords": ((Resource.TOPIC, "DELETE"),),
    "DeleteTopics": ((Resource.TOPIC, "DELETE"),),
    "AlterPartitionReassignments": ((Resource.CLUSTER, "ALTER"),),
    "ElectLeaders": ((Resource.CLUSTER, "ALTER"),),
}

# What a read sends for the topics and groups of its scope (reconciler.kafka.observe).
TOPIC_READ = ("Metadata", "DescribeConfigs(topic)", "ListOffsets")
EPOCH_READ = ("OffsetForLeaderEpoch",)
GROUP_READ = ("FindCoordinator", "OffsetFetch")
# The evidence of idle topics (reconciler.kafka.idle_evidence): every group is listed and its
# offsets read, so DESCRIBE on every group (the wildcard resource name).
IDLE_GROUP_READ = ("ListGroups", "OffsetFetch")
EVERY_GROUP = "*"
CLUSTER_READ = ("DescribeCluster", "DescribeLogDirs", "ListPartitionReassignments")
# A throttled reassignment reads and sets the brokers' rates and the topic's throttled replicas.
THROTTLE = ("DescribeConfigs(broker)", "IncrementalAlterConfigs(broker)", "IncrementalAlterConfigs(topic)")


def action_requests(kind: ActionKind, throttled: bool = False) -> tuple[str, ...]:
    """The requests an action of this kind sends, its own first (apply's; validate_only sends the
    first with validate_only set, for the kinds Kafka can validate)."""
    match kind:
        case ActionKind.CREATE_TOPIC:
            return ("CreateTopics",)
        case ActionKind.ADD_PARTITIONS:
            return ("CreatePartitions",)
        case ActionKind.ALTER_CONFIGS:
            return ("IncrementalAlterConfigs(topic)",)
        case ActionKind.TRUNCATE:
            return ("DeleteRecords", "OffsetForLeaderEpoch", "ListOffsets")
        case ActionKind.DELETE_TOPIC:
            return ("DeleteTopics",)
        case ActionKind.REASSIGN_REPLICAS:
            return ("AlterPartitionReassignments", "ElectLeaders", *(THROTTLE if throttled else ()))
        case _:
            unhandled(kind)


def needs(kind: ActionKind, throttled: bool = False) -> list[Need]:
    """What an action of this kind needs, its own request's first, each once."""
    return list(dict.fromkeys(need for request in action_requests(kind, throttled) for need in REQUESTS[request]))


# -- bindings and kafka-acls ---------------------------------------------------------------------

# kafka-acls names an operation in CamelCase (--operation AlterConfigs).
_ACL_TOOL_NAME = {
    "CREATE": "Create",
    "ALTER": "Alter",
    "ALTER_CONFIGS": "AlterConfigs",
    "DELETE": "Delete",
    "DESCRIBE": "Describe",
    "DESCRIBE_CONFIGS": "DescribeConfigs",
}
# org.apache.kafka.metadata.authorizer.StandardAuthorizerData: what an ALLOW of an operation implies.
IMPLIED_BY = {"DESCRIBE": ("READ", "WRITE", "DELETE", "ALTER"), "DESCRIBE_CONFIGS": ("ALTER_CONFIGS",)}


@dataclass(frozen=True)
class Binding:
    """One ALLOW ACL binding, as Kafka's AclBinding names its parts."""

    principal: str
    resource_type: Resource
    resource_name: str
    operation: str
    pattern_type: str = "LITERAL"
    permission_type: str = "ALLOW"
    host: str = "*"

    def as_json(self) -> dict[str, str]:
        return {
            "principal": self.principal,
            "host": self.host,
            "resource_type": self.resource_type.name,
            "resource_name": self.resource_name,
            "pattern_type": self.pattern_type,
            "operation": self.operation,
            "permission_type": self.permission_type,
        }


def command(binding: Binding) -> str:
    """The kafka-acls command that adds `binding`."""
    match binding.resource_type:
        case Resource.CLUSTER:
            where = "--cluster"
        case Resource.TOPIC | Resource.GROUP:
            name = "'*'" if binding.resource_name == "*" else binding.resource_name  # not a shell glob
            where = f"--{binding.resource_type.value} {name}"
    if binding.pattern_type != "LITERAL":
        where += f" --resource-pattern-type {binding.pattern_type.lower()}"
    operation = _ACL_TOOL_NAME.get(binding.operation, binding.operation)
    return f"kafka-acls --add --allow-principal {binding.principal} --operation {operation} {where}"


def kerberos_short_name(kerberos_principal: str) -> str:
    """The name Kafka's DEFAULT sasl.kerberos.principal.to.local.rules give a principal of the
    brokers' default realm: its first component (svc-kafka/ci-runner@EXAMPLE.COM -> svc-kafka)."""
    return kerberos_principal.partition("@")[0].split("/")[0]


def principal(spec: ClusterSpec) -> str:
    """The principal as kafka-acls names it, where the manifests tell it (a literal SASL user, a
    literal Kerberos principal); else what it looks like, in angle brackets."""
    security = spec.security
    mechanism = security.sasl_mechanism
    if mechanism == "GSSAPI":
        name = security.kerberos_principal
        return f"User:{kerberos_short_name(name)}" if name and "${" not in name else "User:<Kerberos short name>"
    if mechanism == "OAUTHBEARER":
        return "<IAM identity>" if security.aws_msk_iam else "User:<the token's sub claim>"
    user = security.username
    if user and "${" not in user and mechanism is not None:
        return f"User:{user}"
    return "<principal>"


def principal_unknown(spec: ClusterSpec) -> str:
    """Why the manifests do not tell the principal, and how its name is made."""
    security = spec.security
    if security.sasl_mechanism == "OAUTHBEARER" and security.aws_msk_iam:
        return (
            "Amazon MSK with IAM access control authorises with IAM policies, not Kafka ACLs: allow the "
            "kafka-cluster:* actions in the identity's IAM policy (docs/authentication.md)"
        )
    if security.sasl_mechanism == "OAUTHBEARER":
        return "with OAUTHBEARER the principal is User: followed by the token's sub claim, which the manifests do not hold"
    if security.sasl_mechanism == "GSSAPI":
        return (
            "with GSSAPI the principal is User: followed by the Kerberos short name of security.kerberos_principal, "
            "which is not set"
        )
    return (
        "only a literal SASL username or Kerberos principal does; a ${VAR} reference, TLS client certificates and "
        "PLAINTEXT do not"
    )


def grant(spec: ClusterSpec, operation: str, topic: str | None, resource: Resource | None = None) -> str:
    """The kafka-acls command that grants `operation` on `topic` (None: on the cluster), or on
    the `resource` of that name."""
    kind = resource or (Resource.CLUSTER if topic is None else Resource.TOPIC)
    return command(Binding(principal(spec), kind, topic if topic is not None else CLUSTER_NAME, operation))


# -- roles ------------------------------------------------------------------------------------


class Role(str, Enum):
    READER = "reader"  # plan --offline, plan --snapshot, snapshot, drift
    PLANNER = "planner"  # plan: the reader's reads and validate_only
    APPLIER = "applier"  # apply: the planner's, and every write


def possible_actions(desired: DesiredState, name: str) -> list[ActionKind]:
    """Every kind of action a plan of these manifests may hold for the topic, whatever the cluster
    looks like. Any present topic may be missing, have fewer partitions, other replicas, or
    configs to change (a left-over replication throttle is removed from any topic)."""
    topic = desired.topics[name]
    protected = is_protected(desired, name)
    if topic.state is TopicState.ABSENT:
        return [] if protected else [ActionKind.DELETE_TOPIC]
    kinds = [ActionKind.CREATE_TOPIC, ActionKind.ADD_PARTITIONS, ActionKind.REASSIGN_REPLICAS, ActionKind.ALTER_CONFIGS]
    return kinds + ([ActionKind.TRUNCATE] if topic.truncate and not protected else [])


def role_requests(desired: DesiredState, role: Role) -> list[tuple[str, Resource | None, str]]:
    """(request, resource it is about, name) for everything the role sends for these manifests."""
    scope = desired_scope(desired)  # what a plan's read asks for: every declared topic, the groups
    topics = sorted(scope.topics or ())
    sent: list[tuple[str, Resource | None, str]] = [(r, None, CLUSTER_NAME) for r in CLUSTER_READ]
    sent += [(r, Resource.TOPIC, t) for t in topics for r in TOPIC_READ]
    sent += [(r, Resource.TOPIC, t) for t in sorted(scope.epoch_topics) for r in EPOCH_READ]
    for group, read in scope.groups.items():
        sent += [(r, Resource.GROUP, group) for r in GROUP_READ]
        sent += [("OffsetFetch", Resource.TOPIC, t) for t in sorted(read)]
    if scope.activity_topics or scope.every_activity:  # guarded deletions; idle_after: snapshot, drift
        sent += [(r, Resource.GROUP, EVERY_GROUP) for r in IDLE_GROUP_READ]
    if role is Role.READER:
        return sent
    throttled = desired.cluster.reassignment.throttle_bytes_per_s is not None
    for name in topics:
        for kind in possible_actions(desired, name):
            if role is Role.PLANNER and kind.facts.broker_verb is None:
                continue  # Kafka cannot validate it: the planner never sends it
            requests = action_requests(kind, throttled) if role is Role.APPLIER else action_requests(kind)[:1]
            sent += [(r, Resource.TOPIC, name) for r in requests]
    return sent


def role_bindings(desired: DesiredState, role: Role, who: str) -> list[Binding]:
    """The least set of LITERAL ALLOW bindings `who` needs for what the role sends: each request's
    needs, less those implied by another binding on the same resource."""
    wanted: dict[tuple[Resource, str], set[str]] = {}
    for request, about, name in role_requests(desired, role):
        for kind, operation in REQUESTS[request]:
            if kind is about or kind is Resource.CLUSTER:
                key = (kind, CLUSTER_NAME if kind is Resource.CLUSTER else name)
                wanted.setdefault(key, set()).add(operation)
    order = list(Resource)
    bindings = []
    for (kind, name), operations in sorted(wanted.items(), key=lambda item: (order.index(item[0][0]), item[0][1])):
        for operation in sorted(operations):
            if not any(other in operations for other in IMPLIED_BY.get(operation, ())):
                bindings.append(Binding(who, kind, name, operation))
    return bindings


# -- checks against a read ------------------------------------------------------------------------


def lacking(kind: ActionKind, topic: str, observed: ObservedState, throttled: bool = False) -> Need | None:
    """What the read shows the principal lacks for this action, or None (it has it all, or that
    is not known). Of two missing, the one that implies the other is named: granting it grants both."""
    on_topic = observed.operations(topic)
    on_cluster = observed.cluster_authorized_operations
    missing: list[Need] = []
    for resource, operation in needs(kind, throttled):
        if resource is Resource.CLUSTER:
            if on_cluster is not None and operation not in on_cluster:
                missing.append((resource, operation))
        elif operation == "CREATE":
            if on_topic is not None and on_cluster is not None and operation not in (*on_topic, *on_cluster):
                missing.append((resource, operation))
        elif on_topic is not None and operation not in on_topic:
            missing.append((resource, operation))
    implied = {(resource, op) for resource, operation in missing for op, by in IMPLIED_BY.items() if operation in by}
    return next((need for need in missing if need not in implied), None)


def may_send(request: str, observed: ObservedState) -> bool:
    """False when the read shows the principal lacks a cluster right `request` needs (and every
    right that implies it); True when it has them, or that is not known."""
    on_cluster = observed.cluster_authorized_operations
    return on_cluster is None or all(
        operation in on_cluster or any(by in on_cluster for by in IMPLIED_BY.get(operation, ()))
        for resource, operation in REQUESTS[request]
        if resource is Resource.CLUSTER
    )


def missing_right_message(kind: ActionKind, topic: str, need: Need, spec: ClusterSpec) -> str:
    resource, operation = need
    on_cluster = resource is Resource.CLUSTER
    where = (
        "on the cluster"
        if on_cluster
        else f"on the cluster or on topic {topic}"
        if operation == "CREATE"
        else f"on topic {topic}"
    )
    return (
        f"not authorised to {kind.facts.heading} {topic}: the principal lacks {operation} {where}, so the "
        f"brokers would refuse it; grant it ({grant(spec, operation, None if on_cluster else topic)}) and plan again"
    )


def refused_by_broker(error: BrokerError, kind: ActionKind, topic: str, spec: ClusterSpec) -> str:
    """An outcome's message for a write the brokers refused; for want of a right, which one (the
    cluster's operations are unknown to a principal without DESCRIBE on it, so apply could not
    tell before sending)."""
    text = f"the broker refused: {error}"
    if error.kind is not ErrorKind.NOT_AUTHORISED:
        return text
    resource, operation = needs(kind)[0]
    on_cluster = resource is Resource.CLUSTER
    where = "the cluster" if on_cluster else f"topic {topic}"
    return (
        f"{text}; the principal lacks {operation} on {where}: grant it ({grant(spec, operation, None if on_cluster else topic)})"
    )


def unproven_right_message(kind: ActionKind, topic: str, need: Need, spec: ClusterSpec) -> str:
    """For an action no broker was asked about: the plan's principal may not be the one that applies."""
    resource, operation = need
    on_cluster = resource is Resource.CLUSTER
    return (
        f"the principal that made this plan lacks {operation} on "
        f"{'the cluster' if on_cluster else 'topic ' + topic}, which {kind.facts.label} needs; apply checks "
        f"the rights of its own principal before sending it ({grant(spec, operation, None if on_cluster else topic)})"
    )


def refusal(kind: ActionKind, topic: str, observed: ObservedState, spec: ClusterSpec, throttled: bool = False) -> str | None:
    """Why apply must not send this action by `observed` (its re-read): the topic is hidden, or an
    operation it needs is missing; None otherwise."""
    if topic in observed.hidden_topics:
        return hidden_topic_message(topic, spec).replace("nothing is planned for it", "nothing was sent")
    need = lacking(kind, topic, observed, throttled)
    return None if need is None else missing_right_message(kind, topic, need, spec)


def hidden_topic_message(topic: str, spec: ClusterSpec) -> str:
    return (
        f"not authorised to see topic {topic}: the principal may not DESCRIBE it, so whether it exists is "
        f"unknown and nothing is planned for it; grant DESCRIBE on topic {topic} "
        f"({grant(spec, 'DESCRIBE', topic)})"
    )


def hidden_topics_line(topics: list[str], spec: ClusterSpec) -> str:
    """One line for outputs that list what the read could not see (snapshot, drift)."""
    grants = "; ".join(grant(spec, "DESCRIBE", t) for t in topics)
    return f"not authorised to see: {', '.join(topics)} — grant DESCRIBE on them (their existence is unknown): {grants}"


def sizes_refused_line(error: str, spec: ClusterSpec | None = None) -> str:
    """One line, said once, for partition sizes DescribeLogDirs did not give (`error`: its answer)."""
    who = principal(spec) if spec is not None else "<principal>"
    how = f" ({command(Binding(who, Resource.CLUSTER, CLUSTER_NAME, 'DESCRIBE'))})"
    return (
        f"partition sizes unknown: the principal lacks DESCRIBE on the cluster (DescribeLogDirs answered "
        f"{error}); grant it to see sizes{how}"
    )


def read_refused(what: str, operation: str, name: str, resource: Resource, spec: ClusterSpec) -> str:
    """The end of a read's error for a request refused for want of a right."""
    return (
        f"{what}: the principal lacks {operation} on {resource.value} {name}; grant it ({grant(spec, operation, name, resource)})"
    )
