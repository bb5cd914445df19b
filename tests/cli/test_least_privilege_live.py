"""plan, snapshot and drift as a least-privilege principal, through the CLI, against a test cluster
with Kafka 4.0's authorizer. Over PLAINTEXT the principal is User:ANONYMOUS; the test cluster's own
set-up (create_topic, produce) bypasses the ACLs, as an administrator's would."""

from __future__ import annotations

import html
import json

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.testing import Acl, TestCluster
from tests.kafka.helpers import CLUSTER, write_manifests

ME = "ANONYMOUS"
CLUSTER_DESCRIBE = Acl(ME, "cluster", "kafka-cluster", "DESCRIBE")
HIDDEN_AND_SEEN = """\
kind: Topic
name: orders
partitions: 1
truncate: [{keep_last: 5}]
---
kind: Topic
name: seen
partitions: 1
"""
# Each action of one topic needs another right: ALTER, ALTER_CONFIGS, DELETE.
EVERY_CHANGE = """\
kind: Topic
name: orders
partitions: 2
configs: {retention.ms: 2d}
truncate: [{keep_last: 5}]
"""
SIZES = "kind: Topic\nname: orders\npartitions: 1\nconfigs: {retention.ms: 1h}\ntruncate: [{keep_last: 5}]\n"
SIZES_LINE = (
    "partition sizes unknown: the principal lacks DESCRIBE on the cluster (DescribeLogDirs answered "
    "CLUSTER_AUTHORIZATION_FAILED); grant it to see sizes (kafka-acls --add --allow-principal <principal> "
    "--operation Describe --cluster)"
)


def reconcile(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def with_orders(cluster: TestCluster, records: int = 50) -> None:
    cluster.create_topic("orders", partitions=1, replication_factor=1)
    cluster.produce_many({("orders", 0): records}, timestamp_ms=1_700_000_000_000, step_ms=1000)


def test_a_declared_topic_the_principal_may_not_describe_is_an_error_never_a_create(tmp_path):
    with TestCluster(brokers=1, acls=[Acl(ME, "topic", "seen", "ALL"), CLUSTER_DESCRIBE]) as c:
        with_orders(c)
        c.create_topic("seen", partitions=1, replication_factor=1)
        root = write_manifests(tmp_path / "m", c.bootstrap_servers, HIDDEN_AND_SEEN)

        plan = reconcile("plan", root, "--cluster", CLUSTER, "--no-color")
        assert plan.exit_code == 1, plan.output
        assert (
            "error[not-authorised] not authorised to see topic orders: the principal may not DESCRIBE it, so "
            "whether it exists is unknown"
        ) in plan.stdout
        assert "--allow-principal <principal> --operation Describe --topic orders" in plan.stdout
        assert "create topic" not in plan.stdout and "truncate orders" not in plan.stdout
        assert "1 error" in plan.stdout

        snapshot = tmp_path / "snap.json"
        taken = reconcile("snapshot", root, "--cluster", CLUSTER, "-o", snapshot)
        assert taken.exit_code == 0, taken.output  # what was seen is still worth keeping
        assert "warning: not authorised to see: orders — grant DESCRIBE" in taken.stderr
        saved = json.loads(snapshot.read_text())
        assert saved["hidden_topics"] == ["orders"] and "orders" not in saved["topics"]

        offline = reconcile("plan", root, "--snapshot", snapshot, "--no-color")
        assert offline.exit_code == 1 and "error[not-authorised]" in offline.stdout
        assert "create topic" not in offline.stdout

        for source in (("--cluster", CLUSTER), ("--snapshot", snapshot)):
            drift = reconcile("drift", root, *source, "--format", "json")
            assert drift.exit_code == 3, drift.output  # a topic nobody can see is drift
            [cluster] = json.loads(drift.stdout)["clusters"]
            assert [(i["kind"], i["topic"]) for i in cluster["items"]] == [("not-visible", "orders")]
            assert cluster["not_visible_topics"] == ["orders"] and cluster["counts"]["plan_errors"] == 0
            text = reconcile("drift", root, *source).stdout
            assert "Not authorised to see these declared topics (grant DESCRIBE" in text
            assert text.count("not authorised to see topic orders") == 1 and "1 declared topic not visible" in text
    assert c.topic_names() == ["orders", "seen"]


def test_a_truncation_without_delete_is_noted_under_it_and_apply_refuses_it(tmp_path):
    acls = [Acl(ME, "topic", "orders", op) for op in ("ALTER", "ALTER_CONFIGS")] + [CLUSTER_DESCRIBE]
    with TestCluster(brokers=1, acls=acls) as c:
        with_orders(c)
        root = write_manifests(tmp_path / "m", c.bootstrap_servers, EVERY_CHANGE)
        saved = tmp_path / "plan.json"
        plan = reconcile("plan", root, "--cluster", CLUSTER, "--no-color", "-o", saved, "--format", "json")
        # DeleteRecords has no validate_only: the principal that applies may not be this one.
        assert plan.exit_code == 2, plan.output
        lines = plan.stdout.splitlines()
        truncate = next(i for i, line in enumerate(lines) if "x truncate orders" in line)
        [note] = [i for i, line in enumerate(lines) if "[missing-right]" in line]
        assert truncate < note < truncate + 8  # under the truncation, not another action
        assert (
            lines[note]
            .strip()
            .startswith(
                "info[missing-right] the principal that made this plan lacks DELETE on topic orders, which truncate needs"
            )
        )
        assert "~ add partitions to orders: 1 -> 2" in plan.stdout and "~ alter configs of orders" in plan.stdout
        assert [d["action"] for d in json.loads(saved.read_text())["diagnostics"]] == ["truncate"]

        applied = reconcile("apply", saved, "--manifests", root, "--bootstrap-servers", c.bootstrap_servers)
        assert applied.exit_code == 1, applied.output
        assert "not authorised to truncate orders: the principal lacks DELETE on topic orders" in applied.output
        assert "DeleteRecords" not in {r.api_name for r in c.request_log}
        assert c.partition("orders", 0).log_start_offset == 0


def test_a_config_change_without_alter_configs_is_a_plan_error_once_the_brokers_are_asked(tmp_path):
    acls = [Acl(ME, "topic", "orders", op) for op in ("DESCRIBE", "DESCRIBE_CONFIGS")] + [CLUSTER_DESCRIBE]
    with TestCluster(brokers=1, acls=acls) as c:
        with_orders(c)
        root = write_manifests(
            tmp_path / "m", c.bootstrap_servers, "kind: Topic\nname: orders\npartitions: 1\nconfigs: {retention.ms: 2d}\n"
        )
        validated = reconcile("plan", root, "--cluster", CLUSTER, "--no-color")
        assert validated.exit_code == 1 and validated.stdout.count("error[") == 1, validated.stdout
        assert (
            "error[missing-right] not authorised to alter configs of orders: the principal lacks ALTER_CONFIGS "
            "on topic orders, so the brokers would refuse it; grant it (kafka-acls --add --allow-principal "
            "<principal> --operation AlterConfigs --topic orders)"
        ) in validated.stdout
        # Not validated, the plan's principal need not be the one that applies (a reader): a note.
        offline = reconcile("plan", root, "--cluster", CLUSTER, "--no-color", "--offline")
        assert offline.exit_code == 2 and "error[" not in offline.stdout, offline.stdout
        assert (
            "info[missing-right] the principal that made this plan lacks ALTER_CONFIGS on topic orders, which alter "
            "configs needs; apply checks the rights of its own principal before sending it (kafka-acls --add "
            "--allow-principal <principal> --operation AlterConfigs --topic orders)"
        ) in offline.stdout


def test_without_cluster_describe_the_reason_sizes_are_unknown_is_said_once(tmp_path):
    with TestCluster(brokers=1, acls=[Acl(ME, "topic", "orders", "ALL")]) as c:
        with_orders(c)
        root = write_manifests(tmp_path / "m", c.bootstrap_servers, SIZES)
        snapshot = tmp_path / "snap.json"
        taken = reconcile("snapshot", root, "--cluster", CLUSTER, "-o", snapshot)
        assert taken.exit_code == 0 and taken.stderr.count(SIZES_LINE) == 1, taken.output
        saved = json.loads(snapshot.read_text())
        assert saved["sizes_refused"] == "CLUSTER_AUTHORIZATION_FAILED"
        assert {p["size_bytes"] for p in saved["topics"]["orders"]["partitions"]} == {None}

        plan = reconcile("plan", root, "--snapshot", snapshot, "--no-color")
        assert plan.stdout.count("info[sizes-unknown] " + SIZES_LINE) == 1, plan.stdout
        for fmt in ("text", "markdown", "html"):
            report = reconcile("drift", root, "--cluster", CLUSTER, "--format", fmt)
            line = html.escape(SIZES_LINE) if fmt == "html" else SIZES_LINE
            assert report.exit_code == 3 and report.stdout.count(line) == 1, (fmt, report.output)
        [cluster] = json.loads(reconcile("drift", root, "--snapshot", snapshot, "--format", "json").stdout)["clusters"]
        assert cluster["sizes_refused"] == "CLUSTER_AUTHORIZATION_FAILED"
