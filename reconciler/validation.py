"""Broker-side validation of a plan, with nothing changed: CreateTopics, CreatePartitions and
IncrementalAlterConfigs with validate_only. DeleteRecords has no validate_only in Kafka; the
planner's client-side checks (range, cleanup.policy, protection, policy limits) stand in for it.

Each refusal is tied to the action that caused it (and to the config key, when the broker's
message names one of the action's keys), so a reviewer never reads it under another action of
the same topic.
"""
from __future__ import annotations

import re

from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic, Diagnostic, Plan, Severity
from reconciler.ports import BrokerError, ClusterPort, create_topic_batches

_VERBS = {"create_topic": "create", "add_partitions": "add partitions to", "alter_configs": "change the configs of"}


def broker_refusals(actions: list, cluster: ClusterPort) -> list[Diagnostic]:
    """One error diagnostic per action among `actions` that the brokers would refuse."""
    creates = [a for a in actions if isinstance(a, CreateTopic)]
    grows = [a for a in actions if isinstance(a, AddPartitions)]
    alters = [a for a in actions if isinstance(a, AlterConfigs)]
    answers: dict[tuple[str, str], BrokerError | None] = {}
    for batch in create_topic_batches(creates):
        answers.update({("create_topic", t): e for t, e in cluster.create_topics(batch, validate_only=True).items()})
    if grows:
        answers.update({("add_partitions", t): e
                        for t, e in cluster.create_partitions(grows, validate_only=True).items()})
    if alters:
        answers.update({("alter_configs", t): e for t, e in cluster.alter_configs(alters, validate_only=True).items()})
    by_kind = {(a.kind, a.topic): a for a in actions}
    found = []
    for (kind, topic), error in sorted(answers.items()):
        if error is None:
            continue
        action = by_kind[(kind, topic)]
        key = _key_named(action, error)
        found.append(Diagnostic(
            severity=Severity.ERROR, code=f"broker-{error.name.lower().replace('_', '-')}", topic=topic,
            message=f"the brokers would refuse to {_VERBS[kind]} {topic}" + (f" ({key})" if key else "") + f": {error}",
            source=action.source, action=kind, key=key))
    return found


def validate_on_brokers(plan: Plan, cluster: ClusterPort) -> Plan:
    """The plan with one error diagnostic per action the brokers would refuse."""
    found = broker_refusals(plan.actions, cluster)
    if not found:
        return plan
    return plan.model_copy(update={"diagnostics": [*found, *plan.diagnostics]})


def _key_named(action, error: BrokerError) -> str | None:
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
