"""Broker-side validation of a plan, with nothing changed: CreateTopics, CreatePartitions and
IncrementalAlterConfigs with validate_only. DeleteRecords has no validate_only in Kafka; the
planner's client-side checks (range, cleanup.policy, protection, policy limits) stand in for it.

Each refusal is tied to the action that caused it (and to the config key, when the broker's
message names one of the action's keys), so a reviewer never reads it under another action of
the same topic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reconciler.models.plan import (
    Action,
    ActionKind,
    AddPartitions,
    AlterConfigs,
    CreateTopic,
    DeleteTopic,
    Diagnostic,
    DiagnosticCode,
    Plan,
    ReassignReplicas,
    Severity,
    TruncateRecords,
    broker_refusal,
    unhandled,
)
from reconciler.ports import BrokerError, ClusterPort, create_topic_batches


def send_topic_requests(
    cluster: ClusterPort, actions: Sequence[Action], validate_only: bool
) -> dict[tuple[ActionKind, str], BrokerError | None]:
    """Each (kind, topic)'s answer to the requests that carry `actions` of the kinds the brokers can
    validate (creates, partition increases, config changes): the same requests validate and apply."""
    creates: list[CreateTopic] = []
    grows: list[AddPartitions] = []
    alters: list[AlterConfigs] = []
    for action in actions:
        match action:
            case CreateTopic():
                creates.append(action)
            case AddPartitions():
                grows.append(action)
            case AlterConfigs():
                alters.append(action)
            case ReassignReplicas() | TruncateRecords() | DeleteTopic():
                raise ValueError(f"{action.kind} has no validate_only request")
            case _:
                unhandled(action)
    answers: dict[tuple[ActionKind, str], BrokerError | None] = {}
    for batch in create_topic_batches(creates):
        answers.update(
            {(ActionKind.CREATE_TOPIC, t): e for t, e in cluster.create_topics(batch, validate_only=validate_only).items()}
        )
    if grows:
        answers.update(
            {(ActionKind.ADD_PARTITIONS, t): e for t, e in cluster.create_partitions(grows, validate_only=validate_only).items()}
        )
    if alters:
        answers.update(
            {(ActionKind.ALTER_CONFIGS, t): e for t, e in cluster.alter_configs(alters, validate_only=validate_only).items()}
        )
    return answers


def broker_refusals(actions: Sequence[Action], cluster: ClusterPort) -> list[Diagnostic]:
    """One error diagnostic per action among `actions` that the brokers would refuse."""
    checked = [a for a in actions if a.kind.facts.broker_verb is not None]
    answers = send_topic_requests(cluster, checked, validate_only=True)
    by_kind = {(a.kind, a.topic): a for a in checked}
    found = []
    for (kind, topic), error in sorted(answers.items()):
        if error is None:
            continue
        action = by_kind[(kind, topic)]
        key = _key_named(action, error)
        found.append(
            Diagnostic(
                severity=Severity.ERROR,
                code=broker_refusal(error.name),
                topic=topic,
                message=f"the brokers would refuse to {kind.facts.broker_verb} {topic}"
                + (f" ({key})" if key else "")
                + f": {error}",
                source=action.source,
                action=kind,
                key=key,
            )
        )
    return found


def validate_on_brokers(plan: Plan, cluster: ClusterPort) -> Plan:
    """The plan, marked validated, with one error diagnostic per action the brokers would refuse. An
    action the plan already refuses for a missing right is not asked about: the brokers would only
    say it again."""
    refused = {(d.action, d.topic) for d in plan.diagnostics if d.code == DiagnosticCode.MISSING_RIGHT}
    found = broker_refusals([a for a in plan.actions if (a.kind, a.topic) not in refused], cluster)
    return plan.model_copy(update={"diagnostics": [*found, *plan.diagnostics], "validated_on_brokers": True})


def _key_named(action: Action, error: BrokerError) -> str | None:
    """The one config key of the action that the broker's message names ("Invalid value -2 for
    configuration retention.ms: ..."), or None. Only for showing where; nothing is decided on it."""
    if isinstance(action, AlterConfigs):
        keys = [c.key for c in action.changes]
    elif isinstance(action, CreateTopic):
        keys = list(action.configs)
    else:
        return None
    named = [k for k in keys if re.search(rf"(?<![\w.]){re.escape(k)}(?![\w.])", error.message or "")]
    return named[0] if len(named) == 1 else None
