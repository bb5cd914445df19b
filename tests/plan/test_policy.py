"""Client-side policy: every violation found, each naming the topic's manifest line."""

from __future__ import annotations

from reconciler.models.desired import Everything, Policy, SourceRef, TopicState
from reconciler.plan.policy import check_desired, is_protected
from tests.factories import desired, want

AT = SourceRef(file="topics.yaml", line=7)
POLICY = Policy(
    topic_name_pattern=r"[a-z]+\.[a-z0-9]+",
    min_partitions=3,
    max_partitions=12,
    allowed_replication_factors=[3],
    required_configs={"min.insync.replicas": None, "cleanup.policy": "delete"},
    protected_topic_patterns=[r"^payments\."],
)


def test_a_compliant_topic_passes():
    ok = want("orders.v1", partitions=6, configs={"min.insync.replicas": "2", "cleanup.policy": "delete"})
    assert check_desired(desired(ok, policy=POLICY)) == []


def test_every_violation_is_reported_with_the_topic_position():
    bad = want("Orders", partitions=64, replication_factor=1, configs={"cleanup.policy": "compact"}, source=AT)
    problems = check_desired(desired(bad, policy=POLICY))
    assert {(p.file, p.line) for p in problems} == {("topics.yaml", 7)}
    text = "\n".join(p.message for p in problems)
    for expected in (
        "does not match the policy's topic_name_pattern",
        "above the policy's max_partitions 12",
        "replication_factor 1 is not one of the policy's allowed_replication_factors [3]",
        "must set config min.insync.replicas",
        "sets cleanup.policy=compact, the policy requires cleanup.policy=delete",
    ):
        assert expected in text
    assert len(problems) == 5


def test_required_values_compare_as_kafka_parses_them():
    topic = want("a.b", partitions=3, configs={"min.insync.replicas": " 2", "cleanup.policy": "delete"})
    assert (
        check_desired(desired(topic, policy=POLICY.model_copy(update={"required_configs": {"min.insync.replicas": "2"}}))) == []
    )


def test_protection_by_flag_or_pattern_forbids_truncation_and_deletion():
    state = desired(
        want("payments.ledger", partitions=3, truncate=[Everything()], source=AT),
        want("audit.log", partitions=3, protected=True, state=TopicState.ABSENT, source=AT),
        policy=Policy(protected_topic_patterns=[r"^payments\."]),
    )
    assert is_protected(state, "payments.ledger") and is_protected(state, "audit.log")
    assert is_protected(state, "payments.other") and not is_protected(state, "orders.v1")
    messages = sorted(p.message for p in check_desired(state))
    assert "audit.log on cluster test is protected and cannot be marked state: absent" in messages[0]
    assert "payments.ledger on cluster test is protected and must not have truncation rules" in messages[1]


def test_absent_topics_are_not_held_to_shape_rules():
    gone = want("X", partitions=100, state=TopicState.ABSENT)
    assert check_desired(desired(gone, policy=POLICY)) == []
