"""Broker-side validation of a plan, with nothing changed: CreateTopics, CreatePartitions and
IncrementalAlterConfigs with validate_only. DeleteRecords has no validate_only in Kafka; the
planner's client-side checks (range, cleanup.policy, protection, policy limits) stand in for it.
"""
from __future__ import annotations

from reconciler.apply import ClusterPort, create_topic_batches
from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic, Diagnostic, Plan, Severity

_VERBS = {"create_topic": "create", "add_partitions": "add partitions to", "alter_configs": "change the configs of"}


def validate_on_brokers(plan: Plan, cluster: ClusterPort) -> Plan:
    """The plan with one error diagnostic per action the brokers would refuse."""
    creates = [a for a in plan.actions if isinstance(a, CreateTopic)]
    grows = [a for a in plan.actions if isinstance(a, AddPartitions)]
    alters = [a for a in plan.actions if isinstance(a, AlterConfigs)]
    refusals = {}
    for batch in create_topic_batches(creates):
        refusals.update({("create_topic", t): e for t, e in cluster.create_topics(batch, validate_only=True).items()})
    if grows:
        refusals.update({("add_partitions", t): e for t, e in cluster.create_partitions(grows, validate_only=True).items()})
    if alters:
        refusals.update({("alter_configs", t): e for t, e in cluster.alter_configs(alters, validate_only=True).items()})
    sources = {(a.kind, a.topic): a.source for a in plan.actions}
    found = [
        Diagnostic(severity=Severity.ERROR, code=f"broker-{error.name.lower().replace('_', '-')}", topic=topic,
                   message=f"the brokers would refuse to {_VERBS[kind]} {topic}: {error}",
                   source=sources[(kind, topic)])
        for (kind, topic), error in sorted(refusals.items()) if error is not None]
    if not found:
        return plan
    return plan.model_copy(update={"diagnostics": [*found, *plan.diagnostics]})
