"""reconcile import against the in-process test cluster: import, then plan the same cluster live,
and the plan is empty."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.kafka.connection import connect
from reconciler.manifests import load_manifests
from reconciler.plan.planner import plan as make_plan
from reconciler.testing import TestCluster
from reconciler.testing.seed import seed_from_snapshot

ROOT = Path(__file__).resolve().parents[2]
PROD_EU = ROOT / "manifests" / "snapshots" / "prod-eu.json"

TOPICS = {
    # name: (partitions, replication factor, configs set on the topic)
    "orders.v1": (
        48,
        3,
        {
            "cleanup.policy": "delete",
            "retention.ms": "604800000",
            "min.insync.replicas": "2",
            "max.message.bytes": "2097152",
            "segment.ms": "3600000",
        },
    ),
    "customer_profiles-compacted": (
        12,
        3,
        {
            "cleanup.policy": "compact",
            "min.compaction.lag.ms": "3600000",
            "delete.retention.ms": "86400000",
            "segment.bytes": "536870912",
            "min.cleanable.dirty.ratio": "0.25",
        },
    ),
    "metrics.cpu_load-v2": (
        6,
        2,
        {
            "compression.type": "zstd",
            "retention.bytes": "10737418240",
            "message.timestamp.type": "LogAppendTime",
            "retention.ms": "-1",
        },
    ),
    "audit_events.eu-west-1": (
        3,
        3,
        {"cleanup.policy": "compact,delete", "unclean.leader.election.enable": "false", "retention.ms": "1500"},
    ),
    "plain": (1, 1, {}),
}


def reconcile(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.yaml"))}


def seed(cluster) -> None:
    for name, (partitions, rf, configs) in TOPICS.items():
        cluster.create_topic(name, partitions=partitions, replication_factor=rf, configs=configs)
    # A consumer group commit makes the cluster create its internal __consumer_offsets topic.
    cluster.commit_offsets("billing", {("orders.v1", 0): 0})


def live_plan(root: Path, cluster_name: str, bootstrap: str):
    desired = load_manifests(root).desired_state(cluster_name)
    spec = desired.cluster.model_copy(update={"bootstrap_servers": bootstrap.split(",")})
    with connect(spec, progress=lambda message: None) as kafka:
        return make_plan(desired, kafka.observe_desired(desired))


def test_live_import_then_live_plan_is_empty(test_cluster, tmp_path):
    seed(test_cluster)
    out = tmp_path / "manifests"
    result = reconcile("import", str(out), "--cluster", "lab", "--bootstrap-servers", test_cluster.bootstrap_servers)
    assert result.exit_code == 0, result.output
    assert f"{len(TOPICS)} topics imported" in result.output
    assert "__consumer_offsets: internal topic" in result.output

    files = files_under(out)
    assert f"bootstrap_servers: [{test_cluster.bootstrap_servers.replace(',', ', ')}]\n" in files["clusters/lab.yaml"]
    # pinned to the cluster read, so that a wrong address later is refused (tests/cli/test_cluster_pin_live.py)
    assert files["clusters/lab.yaml"].endswith(f"\ncluster_id: {test_cluster.cluster_id}\n")
    orders = files["topics/lab/orders.yaml"]
    assert "name: orders.v1\nclusters: [lab]\npartitions: 48\nreplication_factor: 3\n" in orders
    assert "  max.message.bytes: 2MiB\n  min.insync.replicas: 2\n  retention.ms: 7d\n  segment.ms: 1h\n" in orders
    assert "  cleanup.policy: compact\n" in files["topics/lab/customer.yaml"]
    assert "  retention.ms: -1\n" in files["topics/lab/metrics.yaml"]
    assert "  retention.ms: 1500\n" in files["topics/lab/audit.yaml"]
    assert files["topics/lab/plain.yaml"].endswith("partitions: 1\nreplication_factor: 1\n")
    # Only what is set on the topic: the cluster reports every other key as inherited.
    assert "segment.bytes" not in orders and "truncate:" not in orders.replace("`truncate:`", "")

    planned = live_plan(out, "lab", test_cluster.bootstrap_servers)
    assert planned.actions == [] and not planned.has_errors, [a.model_dump() for a in planned.actions]
    assert planned.unmanaged_topics == []
    # And through the command, which also validates on the brokers.
    result = reconcile("plan", str(out), "--cluster", "lab", "--bootstrap-servers", test_cluster.bootstrap_servers)
    assert result.exit_code == 0, result.output

    # Importing again from the live cluster, later: nothing changes on disk.
    before = files_under(out)
    result = reconcile(
        "import", str(out), "--cluster", "lab", "--overwrite", "--bootstrap-servers", test_cluster.bootstrap_servers
    )
    assert result.exit_code == 0, result.output
    assert files_under(out) == before


@pytest.mark.live  # its own cluster, with broker settings
def test_live_import_leaves_broker_settings_to_the_brokers(tmp_path):
    # Topics inherit these from the brokers (STATIC_BROKER_CONFIG): an import must not pin them.
    with TestCluster(brokers=3, broker_configs={"log.retention.hours": "72", "min.insync.replicas": "2"}) as cluster:
        cluster.create_topic("inherits.all", partitions=4, replication_factor=3)
        cluster.create_topic("overrides_one", partitions=2, replication_factor=3, configs={"retention.ms": "3600000"})
        result = reconcile("import", str(tmp_path), "--cluster", "lab", "--bootstrap-servers", cluster.bootstrap_servers)
        assert result.exit_code == 0, result.output
        files = files_under(tmp_path)
        assert files["topics/lab/inherits.yaml"].endswith("partitions: 4\nreplication_factor: 3\n")
        assert files["topics/lab/overrides.yaml"].endswith("configs:\n  retention.ms: 1h\n")
        planned = live_plan(tmp_path, "lab", cluster.bootstrap_servers)
        assert planned.actions == [] and not planned.has_errors


def test_import_of_a_cluster_seeded_from_the_example_snapshot(test_cluster, tmp_path):
    seed_from_snapshot(test_cluster, str(PROD_EU))
    result = reconcile(
        "import",
        str(tmp_path),
        "--cluster",
        "prod-eu",
        "--group-by",
        "none",
        "--bootstrap-servers",
        test_cluster.bootstrap_servers,
    )
    assert result.exit_code == 0, result.output
    assert sorted(files_under(tmp_path)) == ["clusters/prod-eu.yaml", "topics/prod-eu.yaml"]
    assert "  retention.bytes: 50GiB\n  retention.ms: 1d\n" in (tmp_path / "topics/prod-eu.yaml").read_text()
    # The seeded cluster answers with the snapshot's id, which the import pins, as the example manifests do.
    assert (tmp_path / "clusters/prod-eu.yaml").read_text().endswith("\ncluster_id: q7Yc0eZ2T9ii5dXk3Lw0Aw\n")
    planned = live_plan(tmp_path, "prod-eu", test_cluster.bootstrap_servers)
    assert planned.actions == [] and not planned.has_errors
    assert planned.unmanaged_topics == []


def test_live_import_into_existing_manifests_uses_the_cluster_document(test_cluster, tmp_path):
    # The Cluster document names the cluster's real addresses; --bootstrap-servers reaches the test
    # cluster instead, as it would from CI.
    (tmp_path / "clusters.yaml").write_text(
        "kind: Cluster\nname: lab\nbootstrap_servers: [kafka-1.lab.internal:9092]\nignore_topics: ['^plain$']\n"
    )
    (tmp_path / "orders.yaml").write_text(
        "kind: Topic\nname: orders.v1\npartitions: 48\nreplication_factor: 3\n"
        "configs: {cleanup.policy: delete, retention.ms: 7d, min.insync.replicas: 2, max.message.bytes: 2MiB, segment.ms: 1h}\n"
    )
    seed(test_cluster)
    result = reconcile("import", str(tmp_path), "--cluster", "lab", "--bootstrap-servers", test_cluster.bootstrap_servers)
    assert result.exit_code == 0, result.output
    assert "orders.v1: already declared at orders.yaml:2:7" in result.output
    assert "plain: matches the Cluster document's ignore_topics '^plain$'" in result.output
    assert "clusters/lab.yaml" not in files_under(tmp_path)  # the existing Cluster document is kept
    planned = live_plan(tmp_path, "lab", test_cluster.bootstrap_servers)
    assert planned.actions == [] and not planned.has_errors
