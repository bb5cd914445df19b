"""The adapter's read as a least-privilege principal (User:ANONYMOUS over PLAINTEXT) against the test
cluster's Kafka 4.0 authorizer: hidden topics, KIP-430 operations, refused sizes, and what the
planner makes of them."""

from __future__ import annotations

import json
from collections import Counter

from reconciler.manifests import load_manifests
from reconciler.models.plan import DiagnosticCode, Severity
from reconciler.plan.planner import PlanOptions, plan
from reconciler.testing import Acl, TestCluster
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

ME = "ANONYMOUS"
CLUSTER_DESCRIBE = Acl(ME, "cluster", "kafka-cluster", "DESCRIBE")


def desired(tmp_path, cluster, names, extra: str = ""):
    topics = "---\n".join(f"kind: Topic\nname: {n}\npartitions: 1\n{extra}" for n in names)
    return load_manifests(write_manifests(tmp_path, cluster.bootstrap_servers, topics)).desired_state(CLUSTER)


def test_hidden_declared_topics_cost_one_more_metadata_whatever_their_number(tmp_path):
    hidden = [f"secret-{i:02d}" for i in range(30)]
    # CREATE alone does not let the principal see whether a topic exists (no DESCRIBE): that topic would be hidden.
    acls = [
        Acl(ME, "topic", "seen", "ALL"),
        CLUSTER_DESCRIBE,
        *(Acl(ME, "topic", "new-", op, pattern="prefixed") for op in ("CREATE", "DESCRIBE")),
    ]
    with TestCluster(brokers=1, acls=acls) as c:
        for name in ["seen", *hidden]:
            c.create_topic(name, partitions=1, replication_factor=1)
        want = desired(tmp_path, c, ["seen", "new-one", *hidden])
        with kafka_of(c) as kafka:
            kafka.supports_epoch_fencing()
            c.clear_request_log()
            observed = kafka.observe_desired(want)
        metadata = [r.request for r in c.request_log if r.api_name == "Metadata"]
        assert len(metadata) == 2 and metadata[0] is not None and metadata[1] is not None
        assert metadata[0].topics is None  # all topics, then the unlisted by name
        assert sorted(t.name for t in metadata[1].topics) == sorted(["new-one", *hidden])
        assert observed.hidden_topics == hidden and list(observed.topics) == ["seen"]
        # A missing topic the principal may describe is absent (it may be created), with its operations.
        assert observed.absent_topic_operations == {"new-one": ["CREATE", "DESCRIBE"]}
        assert observed.topics["seen"].authorized_operations == [
            "ALTER",
            "ALTER_CONFIGS",
            "CREATE",
            "DELETE",
            "DESCRIBE",
            "DESCRIBE_CONFIGS",
            "READ",
            "WRITE",
        ]
        assert observed.cluster_authorized_operations == ["DESCRIBE"]
        made = plan(want, observed)
    assert [(a.kind, a.topic) for a in made.actions] == [("create_topic", "new-one")]
    assert Counter(d.code for d in made.diagnostics) == {DiagnosticCode.NOT_AUTHORISED: 30}


def test_creating_needs_create_on_the_cluster_or_the_topic(tmp_path):
    with TestCluster(brokers=1, acls=[CLUSTER_DESCRIBE, Acl(ME, "topic", "new-", "DESCRIBE", pattern="prefixed")]) as c:
        want = desired(tmp_path, c, ["new-one"])
        with kafka_of(c) as kafka:
            # as `plan` makes it: the brokers validate creations, which needs CREATE too
            refused = plan(want, kafka.observe_desired(want), PlanOptions(validated=True))
            c.allow(ME, "cluster", "kafka-cluster", "CREATE")
            allowed = plan(want, kafka.observe_desired(want), PlanOptions(validated=True))
    [action] = refused.actions
    [error] = refused.diagnostics
    assert (error.code, error.action, error.severity) == (DiagnosticCode.MISSING_RIGHT, action.kind, Severity.ERROR)
    assert error.message.startswith(
        "not authorised to create topic new-one: the principal lacks CREATE on the cluster or on topic new-one"
    )
    assert [a.topic for a in allowed.actions] == ["new-one"] and not allowed.diagnostics


def test_without_cluster_describe_its_operations_are_unknown_and_sizes_refused_once(tmp_path):
    with TestCluster(brokers=3, acls=[Acl(ME, "topic", "t", "ALL")]) as c:
        c.create_topic("t", partitions=3, replication_factor=1)
        with kafka_of(c) as kafka:
            observed = kafka.observe_topics(["t"], sizes=True)
            want = desired(tmp_path, c, ["t"])
            planned = kafka.observe_desired(want)
    # Kafka reports no cluster operations at all without DESCRIBE: not known, so creating is not refused.
    assert planned.cluster_authorized_operations is None
    assert observed.sizes_refused == "CLUSTER_AUTHORIZATION_FAILED"
    assert all(p.size_bytes is None for p in observed.topics["t"].partitions)


def test_apply_re_read_sees_a_topic_hidden_since_the_plan(tmp_path):
    with TestCluster(brokers=1, acls=[Acl(ME, "topic", "t", "ALL"), CLUSTER_DESCRIBE]) as c:
        c.create_topic("t", partitions=1, replication_factor=1)
        c.produce_many({("t", 0): 10})
        want = desired(tmp_path, c, ["t"], "truncate: [{keep_last: 2}]\n")
        with kafka_of(c) as kafka:
            made = plan(want, kafka.observe_desired(want))
            c.deny(ME, "topic", "t", "DESCRIBE")
            again = kafka.observe_for_plan(made)
    assert [a.kind for a in made.actions] == ["truncate"]
    assert again.hidden_topics == ["t"] and again.topics == {}


def test_a_super_user_plans_exactly_as_without_an_authorizer(tmp_path):
    def planned(cluster: TestCluster, name: str):
        cluster.create_topic("t", partitions=1, replication_factor=1, configs={"retention.ms": "86400000"})
        cluster.produce_many({("t", 0): 10}, timestamp_ms=1_700_000_000_000, step_ms=1000)
        want = desired(tmp_path / name, cluster, ["t", "u"], "configs: {retention.ms: 1h}\ntruncate: [{keep_last: 2}]\n")
        with kafka_of(cluster) as kafka:
            made = plan(want, kafka.observe_desired(want))
        return made.model_dump_json(exclude={"cluster_id", "observed_at"}).replace(cluster.topic_id("t"), "ID")

    with TestCluster(brokers=1) as open_cluster:
        without = planned(open_cluster, "open")
    with TestCluster(brokers=1, super_users={ME}) as secured:
        with_super_user = planned(secured, "secured")
    assert with_super_user == without
    kinds = [a["kind"] for a in json.loads(without)["actions"]]
    assert kinds == ["create_topic", "alter_configs", "truncate"] and not json.loads(without)["diagnostics"]
