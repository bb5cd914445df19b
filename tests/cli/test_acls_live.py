"""`reconcile acls` proved on the test cluster's Kafka 4.0 authorizer: for each role and each command
it serves, the printed bindings are enough (the command does its work with exactly those), and
each one is needed (without it the command names it as missing: its kafka-acls line, or the line of
the right it implied that the command found missing first).

The principal is a SASL user named in the Cluster document, so `acls` needs no --principal and
the commands' messages name the same principal. A binding on a topic that does not exist yet
(CREATE) is exercised where it is missing, every other where it exists and differs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.plan.rights import IMPLIED_BY, Binding, Resource, command
from reconciler.testing import Acl, TestCluster
from tests.kafka.helpers import CLUSTER, write_manifests

USER, PASSWORD = "reconciler", "secret"
SECURITY = (
    "security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: reconciler, password: '${ACLS_TEST_PW}'}\n"
    "reassignment: {throttle: 10MiB}\n"
)
TOPICS = """\
kind: Topic
name: orders
partitions: 2
replication_factor: 2
configs: {retention.ms: 1d}
truncate: [{consumed_by: [billing]}]
---
kind: Topic
name: gone
state: absent
"""
MISSING, DRIFTED = "missing", "drifted"


@pytest.fixture(autouse=True)
def password(monkeypatch):
    monkeypatch.setenv("ACLS_TEST_PW", PASSWORD)


def reconcile(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


@contextmanager
def cluster(state: str) -> Iterator[TestCluster]:
    """MISSING: `orders` is to be created, `gone` to be deleted. DRIFTED: `orders` has one partition
    and one replica, Kafka's retention, and 50 records of which group billing consumed 20."""
    with TestCluster(brokers=2, sasl_users={USER: PASSWORD}, acls=[]) as c:
        c.create_topic("gone", partitions=1, replication_factor=1)
        if state == DRIFTED:
            c.create_topic("orders", partitions=1, replication_factor=1)
            c.produce_many({("orders", 0): 50}, timestamp_ms=1_790_000_000_000, step_ms=1000)
            c.commit_offsets("billing", {("orders", 0): 20})
        yield c


def printed(root, role: str) -> list[Binding]:
    text = reconcile("acls", root, "--cluster", CLUSTER, "--role", role)
    assert text.exit_code == 0, text.output
    answer = reconcile("acls", root, "--cluster", CLUSTER, "--role", role, "--format", "json")
    assert answer.exit_code == 0, answer.output
    document = json.loads(answer.stdout)
    assert document["principal"] == f"User:{USER}" and document["role"] == role
    bindings = [
        Binding(b["principal"], Resource[b["resource_type"]], b["resource_name"], b["operation"]) for b in document["bindings"]
    ]
    assert {(b["pattern_type"], b["permission_type"], b["host"]) for b in document["bindings"]} == {("LITERAL", "ALLOW", "*")}
    assert text.stdout.splitlines()[2:] == [command(b) for b in bindings]
    return bindings


def acl(binding: Binding) -> Acl:
    return Acl(binding.principal, binding.resource_type.value, binding.resource_name, binding.operation)


def named(binding: Binding) -> list[str]:
    """How a command names the binding as missing (whoever it names as the principal): by its own
    operation, or by one it implies."""
    implied = [op for op, by in IMPLIED_BY.items() if binding.operation in by]
    return [
        "--operation " + command(replace(binding, operation=op)).split(" --operation ")[1] for op in (binding.operation, *implied)
    ]


def output(result) -> str:
    return result.stdout + result.stderr


def applies(state: str, binding: Binding) -> bool:
    """Whether `state` exercises the binding: CREATE where the topic is missing, the rest where it exists."""
    return (binding.operation == "CREATE") == (state == MISSING)


# -- reader: plan --offline, snapshot, drift --cluster --------------------------------------------


def reader_commands(root, tmp_path):
    return {
        "plan --offline": (lambda: reconcile("plan", root, "--cluster", CLUSTER, "--offline", "--no-color"), 2),
        "snapshot": (lambda: reconcile("snapshot", root, "--cluster", CLUSTER, "-o", tmp_path / "snap.json"), 0),
        "drift --cluster": (lambda: reconcile("drift", root, "--cluster", CLUSTER), 3),
    }


def test_the_reader_bindings_are_enough_and_each_is_needed(tmp_path):
    with cluster(DRIFTED) as c:
        root = write_manifests(tmp_path / "m", c.bootstrap_servers, TOPICS, SECURITY)
        bindings = printed(root, "reader")
        assert [command(b).split("--operation ")[1] for b in bindings] == [
            "Describe --topic gone",
            "DescribeConfigs --topic gone",
            "Describe --topic orders",
            "DescribeConfigs --topic orders",
            "Describe --group billing",
            "Describe --cluster",
        ]
        commands = reader_commands(root, tmp_path)
        c.replace_acls(acl(b) for b in bindings)
        for name, (run, success) in commands.items():
            result = run()
            assert result.exit_code == success, (name, result.output)
            assert "error[" not in result.stdout and "warning:" not in result.stderr, (name, result.output)
            assert not any(line in output(result) for b in bindings for line in named(b)), (name, result.output)
        # Made by the reader, the plan was not validated on the brokers, and says so in every format.
        offline = ("plan", root, "--cluster", CLUSTER, "--offline")
        assert "Not validated by the brokers" in reconcile(*offline, "--no-color").stdout
        assert "> [!NOTE]\n> Not validated by the brokers" in reconcile(*offline, "--format", "markdown").stdout
        assert json.loads(reconcile(*offline, "--format", "json").stdout)["validated_on_brokers"] is False
        for removed in bindings:
            c.replace_acls(acl(b) for b in bindings if b != removed)
            for name, (run, _) in commands.items():
                result = run()
                assert any(line in output(result) for line in named(removed)), (name, removed, result.output)
                assert result.exit_code == 1 or _said_as_partial(name, removed, result), (name, removed, result.output)


def _said_as_partial(command_name: str, removed: Binding, result) -> bool:
    """The reads that keep what they saw and say what they did not (by design: a snapshot is still
    worth keeping, a drift report shows the topic as not visible, sizes unknown are a note)."""
    if removed.resource_type is Resource.CLUSTER:
        return "partition sizes unknown: the principal lacks DESCRIBE on the cluster" in output(result)
    if removed.operation == "DESCRIBE" and removed.resource_type is Resource.TOPIC:
        return {
            "snapshot": "warning: not authorised to see: " + removed.resource_name in result.stderr,
            "drift --cluster": result.exit_code == 3 and "not authorised to see topic " + removed.resource_name in result.stdout,
        }.get(command_name, False)
    return False


# -- planner: plan (validate_only) --------------------------------------------------------------


def test_the_planner_bindings_are_enough_and_each_is_needed(tmp_path):
    for state in (MISSING, DRIFTED):
        with cluster(state) as c:
            root = write_manifests(tmp_path / state, c.bootstrap_servers, TOPICS, SECURITY)
            bindings = printed(root, "planner")
            assert [command(b).split("--operation ")[1] for b in bindings] == [
                "Describe --topic gone",
                "DescribeConfigs --topic gone",
                "Alter --topic orders",
                "AlterConfigs --topic orders",
                "Create --topic orders",
                "Describe --group billing",
                "Describe --cluster",
            ]
            c.replace_acls(acl(b) for b in bindings)
            full = reconcile("plan", root, "--cluster", CLUSTER, "--no-color")
            assert full.exit_code == 2 and "error[" not in full.stdout, full.output
            assert "Not validated" not in full.stdout
            saved = json.loads(reconcile("plan", root, "--cluster", CLUSTER, "--format", "json").stdout)
            assert saved["validated_on_brokers"] is True
            validated = {r.api_name for r in c.request_log if getattr(r.request, "validate_only", False)}
            assert validated == ({"CreateTopics"} if state == MISSING else {"CreatePartitions", "IncrementalAlterConfigs"})
            for removed in (b for b in bindings if applies(state, b)):
                c.replace_acls(acl(b) for b in bindings if b != removed)
                result = reconcile("plan", root, "--cluster", CLUSTER, "--no-color")
                assert any(line in output(result) for line in named(removed)), (state, removed, result.output)
                assert result.exit_code == 1 or _said_as_partial("plan", removed, result), (state, removed, result.output)


# -- applier: apply ------------------------------------------------------------------------------


def apply(root):
    return reconcile("apply", "--manifests", root, "--cluster", CLUSTER, "--auto-approve", "--no-color")


def test_the_applier_bindings_are_enough_and_each_is_needed(tmp_path):
    with cluster(MISSING) as c:
        root = write_manifests(tmp_path / "m", c.bootstrap_servers, TOPICS, SECURITY)
        bindings = printed(root, "applier")
    assert [command(b).split("--operation ")[1] for b in bindings] == [
        "Delete --topic gone",
        "DescribeConfigs --topic gone",
        "Alter --topic orders",
        "AlterConfigs --topic orders",
        "Create --topic orders",
        "Delete --topic orders",
        "Describe --group billing",
        "Alter --cluster",
        "AlterConfigs --cluster",
    ]
    for state in (MISSING, DRIFTED):
        with cluster(state) as c:
            c.replace_acls(acl(b) for b in bindings)
            result = apply(write_manifests(tmp_path / f"enough-{state}", c.bootstrap_servers, TOPICS, SECURITY))
            assert result.exit_code == 0, (state, result.output)
            assert "gone" not in c.topic_names() and "orders" in c.topic_names()
            sent = {r.api_name for r in c.request_log}
            if state == DRIFTED:  # every write: partitions, replicas with a throttle, configs, truncation, deletion
                assert {"CreatePartitions", "AlterPartitionReassignments", "IncrementalAlterConfigs", "DeleteRecords"} <= sent
                assert c.partition_count("orders") == 2 and c.partition("orders", 0).log_start_offset == 20
                assert len(c.partition("orders", 0).replicas) == 2
            assert "DeleteTopics" in sent and ("CreateTopics" in sent) == (state == MISSING)
    # The split the bindings are for: a reader plans without validate_only, the applier applies that plan.
    with cluster(DRIFTED) as c:
        root = write_manifests(tmp_path / "split", c.bootstrap_servers, TOPICS, SECURITY)
        c.replace_acls(acl(b) for b in printed(root, "reader"))
        saved = tmp_path / "split" / "plan.json"
        planned = reconcile("plan", root, "--cluster", CLUSTER, "--offline", "--format", "json", "-o", saved)
        assert planned.exit_code == 2 and "error[" not in planned.stdout, planned.output
        c.replace_acls(acl(b) for b in bindings)
        applied = reconcile("apply", saved, "--manifests", root, "--no-color")
        assert applied.exit_code == 0, applied.output
        assert "validating the plan on the brokers (validate_only)" in applied.stderr
        assert c.partition_count("orders") == 2 and c.partition("orders", 0).log_start_offset == 20
    for removed in bindings:
        for state in (s for s in (MISSING, DRIFTED) if applies(s, removed)):
            with cluster(state) as c:
                c.replace_acls(acl(b) for b in bindings if b != removed)
                result = apply(
                    write_manifests(
                        tmp_path / f"{removed.operation}-{removed.resource_name}-{state}", c.bootstrap_servers, TOPICS, SECURITY
                    )
                )
                assert any(line in output(result) for line in named(removed)), (state, removed, result.output)
                assert result.exit_code == 1, (state, removed, result.output)
