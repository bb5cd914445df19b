"""The planner as a least-privilege principal: hidden topics, each action's ACL operation
(`reconciler.plan.rights`), and sizes the brokers would not give. Pure, on hand-built states."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from reconciler.models.desired import ClientSecurity, KeepLast, TopicState
from reconciler.models.observed import Broker
from reconciler.models.plan import ActionKind, DiagnosticCode, Severity
from reconciler.plan import rights
from reconciler.plan.planner import PlanOptions, plan
from tests.factories import desired, have, observed, want

EVERYTHING = ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]
WHEN = datetime(2026, 10, 1, tzinfo=timezone.utc)


def without(*operations: str) -> list[str]:
    return [op for op in EVERYTHING if op not in operations]


def errors(result, severity: Severity = Severity.ERROR) -> list[tuple[str, str | None, str]]:
    return [(d.code, d.action, d.message) for d in result.diagnostics if d.severity is severity]


VALIDATED = PlanOptions(validated=True)


def test_a_hidden_declared_topic_is_an_error_and_nothing_is_planned_for_it():
    state = observed().model_copy(update={"hidden_topics": ["a"]})
    for declared in (want("a", truncate=[KeepLast(records=1)]), want("a", state=TopicState.ABSENT)):
        result = plan(desired(declared), state)
        assert not result.actions and result.has_errors
        [(code, action, message)] = errors(result)
        assert (code, action) == (DiagnosticCode.NOT_AUTHORISED, None)
        assert message.startswith(
            "not authorised to see topic a: the principal may not DESCRIBE it, so whether it exists is unknown"
        )


@pytest.mark.parametrize(
    ("kind", "declared", "have_kwargs", "lacking"),
    [
        (ActionKind.ADD_PARTITIONS, {"partitions": 6}, {}, "ALTER"),
        (
            ActionKind.ALTER_CONFIGS,
            {"configs": {"retention.ms": "2000"}},
            {"set_on_topic": {"retention.ms": "1000"}},
            "ALTER_CONFIGS",
        ),
        (ActionKind.TRUNCATE, {"truncate": [KeepLast(records=10)]}, {}, "DELETE"),
        (ActionKind.DELETE_TOPIC, {"state": TopicState.ABSENT}, {}, "DELETE"),
    ],
)
def test_an_action_whose_operation_the_principal_lacks_is_an_error_where_the_brokers_validate_it(
    kind, declared, have_kwargs, lacking
):
    topic = have("a", **have_kwargs)
    allowed = plan(
        desired(want("a", **declared)), observed(topic.model_copy(update={"authorized_operations": EVERYTHING})), VALIDATED
    )
    lacks = observed(topic.model_copy(update={"authorized_operations": without(lacking)}))
    refused = plan(desired(want("a", **declared)), lacks, VALIDATED)
    assert [a.kind for a in allowed.actions] == [a.kind for a in refused.actions] == [kind]
    assert not allowed.diagnostics
    validated = kind.facts.broker_verb is not None  # Kafka has no validate_only for deletions
    [(code, action, message)] = errors(refused, Severity.ERROR if validated else Severity.INFO)
    assert (code, action) == (DiagnosticCode.MISSING_RIGHT, kind)
    if validated:
        assert f"the principal lacks {lacking} on topic a" in message and "kafka-acls --add" in message
    else:
        assert message.startswith(f"the principal that made this plan lacks {lacking} on topic a, which {kind.facts.label}")
    # Not validated (plan --offline, a snapshot), the principal may not be the one that applies: a note.
    [(code, action, message)] = errors(plan(desired(want("a", **declared)), lacks), Severity.INFO)
    assert (code, action) == (DiagnosticCode.MISSING_RIGHT, kind)
    assert "apply checks the rights of its own principal before sending it (kafka-acls --add" in message


def test_the_other_actions_of_the_topic_still_plan_without_errors():
    topic = have("a", partitions=3).model_copy(update={"authorized_operations": without("DELETE")})
    result = plan(desired(want("a", partitions=6, truncate=[KeepLast(records=10)])), observed(topic))
    assert [a.kind for a in result.actions] == ["add_partitions", "truncate"]
    assert [(d.code, d.action) for d in result.diagnostics] == [(DiagnosticCode.MISSING_RIGHT, ActionKind.TRUNCATE)]


def test_operations_not_known_never_block():
    result = plan(desired(want("a", partitions=6, truncate=[KeepLast(records=10)]), want("new")), observed(have("a")))
    assert len(result.actions) == 3 and not result.diagnostics


@pytest.mark.parametrize(
    ("on_cluster", "on_topic", "refused"),
    [
        (None, None, False),
        (["DESCRIBE"], None, False),
        (None, ["DESCRIBE"], False),
        (["DESCRIBE"], ["DESCRIBE"], True),
        (["CREATE", "DESCRIBE"], ["DESCRIBE"], False),
        (["DESCRIBE"], ["CREATE", "DESCRIBE"], False),
    ],
)
def test_creating_needs_create_on_the_cluster_or_the_topic(on_cluster, on_topic, refused):
    state = observed().model_copy(
        update={
            "cluster_authorized_operations": on_cluster,
            "absent_topic_operations": {} if on_topic is None else {"new": on_topic},
        }
    )
    result = plan(desired(want("new")), state)
    assert [a.kind for a in result.actions] == ["create_topic"]
    assert [(d.code, d.action) for d in result.diagnostics] == (
        [(DiagnosticCode.MISSING_RIGHT, ActionKind.CREATE_TOPIC)] if refused else []
    )


def test_the_grant_names_the_principal_when_the_manifests_do():
    spec = desired().cluster
    assert rights.principal(spec) == "<principal>"
    named = spec.model_copy(
        update={
            "security": ClientSecurity(
                protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", username="reconciler", password="${PW}"
            )
        }
    )
    assert rights.grant(named, "DELETE", "t") == "kafka-acls --add --allow-principal User:reconciler --operation Delete --topic t"
    from_env = named.model_copy(update={"security": named.security.model_copy(update={"username": "${USER}"})})
    assert rights.principal(from_env) == "<principal>"


def test_refused_sizes_are_said_once_where_an_estimate_needs_them():
    topics = [have(n, set_on_topic={"retention.ms": "86400000"}, size_bytes=None) for n in ("a", "b")]
    state = observed(*topics).model_copy(update={"taken_at": WHEN, "sizes_refused": "CLUSTER_AUTHORIZATION_FAILED"})
    cuts = plan(
        desired(*(want(n, configs={"retention.ms": "86400000"}, truncate=[KeepLast(records=1)]) for n in ("a", "b"))), state
    )
    [note] = [d for d in cuts.diagnostics if d.code == DiagnosticCode.SIZES_UNKNOWN]
    assert (note.severity, note.topic) == (Severity.INFO, None)
    assert note.message == rights.sizes_refused_line("CLUSTER_AUTHORIZATION_FAILED", desired().cluster)
    assert note.message.endswith("(kafka-acls --add --allow-principal <principal> --operation Describe --cluster)")
    quiet = plan(desired(*(want(n, configs={"retention.ms": "86400000"}) for n in ("a", "b"))), state)
    assert not quiet.actions and not quiet.diagnostics


def test_apply_refuses_by_the_re_read():
    spec = desired().cluster
    state = observed(have("a").model_copy(update={"authorized_operations": without("DELETE")})).model_copy(
        update={"hidden_topics": ["b"]}
    )
    assert rights.refusal(ActionKind.ALTER_CONFIGS, "a", state, spec) is None
    assert (rights.refusal(ActionKind.TRUNCATE, "a", state, spec) or "").startswith(
        "not authorised to truncate a: the principal lacks DELETE on topic a"
    )
    assert "nothing was sent" in (rights.refusal(ActionKind.TRUNCATE, "b", state, spec) or "")


def test_a_reassignment_needs_alter_on_the_cluster():
    brokers = [Broker(node_id=i, host="b", port=9092) for i in (1, 2, 3)]
    topic = have("a", partitions=1, replication_factor=1).model_copy(update={"authorized_operations": EVERYTHING})

    def planned(cluster_operations):
        state = observed(topic).model_copy(update={"brokers": brokers, "cluster_authorized_operations": cluster_operations})
        return plan(desired(want("a", partitions=1, replication_factor=3)), state, VALIDATED)

    for known in (None, ["ALTER", "DESCRIBE"]):  # unknown never blocks
        result = planned(known)
        assert [a.kind for a in result.actions] == [ActionKind.REASSIGN_REPLICAS] and not errors(result)
    refused = planned(["DESCRIBE"])
    assert [a.kind for a in refused.actions] == [ActionKind.REASSIGN_REPLICAS]
    [(code, action, message)] = errors(refused, Severity.INFO)  # no validate_only for reassignments
    assert (code, action) == (DiagnosticCode.MISSING_RIGHT, ActionKind.REASSIGN_REPLICAS)
    assert "lacks ALTER on the cluster" in message and "--operation Alter --cluster" in message
    refusal = rights.refusal(ActionKind.REASSIGN_REPLICAS, "a", refused_state(["DESCRIBE"]), desired().cluster)
    assert refusal is not None and refusal.startswith(
        "not authorised to reassign replicas of a: the principal lacks ALTER on the cluster"
    )


def refused_state(cluster_operations):
    topic = have("a").model_copy(update={"authorized_operations": EVERYTHING})
    return observed(topic).model_copy(update={"cluster_authorized_operations": cluster_operations})


def test_a_throttled_reassignment_also_needs_alter_configs_on_the_cluster_and_the_topic():
    spec = desired().cluster
    kind = ActionKind.REASSIGN_REPLICAS
    assert rights.refusal(kind, "a", refused_state(["ALTER", "DESCRIBE"]), spec) is None
    assert "lacks ALTER_CONFIGS on the cluster" in str(
        rights.refusal(kind, "a", refused_state(["ALTER", "DESCRIBE"]), spec, True)
    )
    every = ["ALTER", "ALTER_CONFIGS", "DESCRIBE", "DESCRIBE_CONFIGS"]
    state = refused_state(every).model_copy(
        update={"topics": {"a": have("a").model_copy(update={"authorized_operations": without("ALTER_CONFIGS")})}}
    )
    assert "lacks ALTER_CONFIGS on topic a" in str(rights.refusal(kind, "a", state, spec, True))
