"""The change log against the in-process test cluster: a snapshot with `reconcile snapshot`, then
changes out of band with kafka-python's admin client (and a leader move), then
`reconcile drift --cluster NAME --since FILE` lists what moved."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, NewPartitions, NewTopic

from reconciler.cli import main
from reconciler.ports import TopicShape, Visible
from tests.drift.test_live import MANIFEST
from tests.kafka.helpers import kafka_of


def _reconcile(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_drift_since_lists_what_moved_out_of_band(test_cluster, tmp_path: Path):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "live.yaml").write_text(MANIFEST)
    test_cluster.create_topic("orders.v1", partitions=2, replication_factor=3, configs={"retention.ms": "604800000"})
    test_cluster.create_topic("doomed", partitions=1, replication_factor=1)
    test_cluster.produce_many({("orders.v1", 0): 100, ("orders.v1", 1): 100})
    servers = test_cluster.bootstrap_servers
    r = _reconcile(
        "snapshot", str(manifests), "--cluster", "live", "--bootstrap-servers", servers, "-o", str(tmp_path / "before.json")
    )
    assert r.exit_code == 0, r.output

    # Out of band: what an operator with admin rights does by hand.
    with KafkaAdminClient(bootstrap_servers=servers) as admin:
        admin.create_topics([NewTopic("adhoc", num_partitions=3, replication_factor=2)])
        admin.delete_topics(["doomed"])
        admin.create_partitions({"orders.v1": NewPartitions(total_count=4)})
        admin.alter_configs([ConfigResource("TOPIC", "orders.v1", {"retention.ms": "3600000", "segment.ms": "60000"})])
    # The brokers show an operator's writes a moment later (KAFKA_SEMANTICS.md); drift reads after that.
    with kafka_of(test_cluster) as kafka:
        shown = Visible(
            topics={
                "adhoc": TopicShape(partitions=3),
                "doomed": TopicShape(exists=False),
                "orders.v1": TopicShape(partitions=4, configs={"retention.ms": "3600000", "segment.ms": "60000"}),
            }
        )
        assert kafka.confirm_visible(shown, 5) == {}
    p0 = test_cluster.partition("orders.v1", 0)
    test_cluster.move_leader("orders.v1", 0, to=next(b for b in p0.replicas if b != p0.leader))
    test_cluster.produce_many({("orders.v1", 1): 50})  # traffic: not a change

    out = tmp_path / "drift.json"
    r = _reconcile(
        "drift",
        str(manifests),
        "--cluster",
        "live",
        "--bootstrap-servers",
        servers,
        "--since",
        str(tmp_path / "before.json"),
        "--format",
        "json",
        "-o",
        str(out),
    )
    assert r.exit_code == 3, r.output  # drift from Git: partitions and retention.ms differ from the manifests
    [cluster] = json.loads(out.read_text())["clusters"]
    entries = [(e["topic"], e["kind"], e["key"], e["old"], e["new"], e["source"], e["count"]) for e in cluster["change_log"]]
    assert entries == [
        ("adhoc", "topic-created", None, None, "3 partitions, replication factor 2", None, None),
        ("doomed", "topic-deleted", None, "1 partition, replication factor 1", None, None, None),
        ("orders.v1", "partitions-added", None, "2", "4", None, None),
        ("orders.v1", "leaders", None, None, None, None, 1),
        ("orders.v1", "config-changed", "retention.ms", "604800000", "3600000", "DYNAMIC_TOPIC_CONFIG", None),
        ("orders.v1", "config-set", "segment.ms", "604800000", "60000", "DYNAMIC_TOPIC_CONFIG", None),
    ]
    assert cluster["counts"]["change_log"] == 6 and cluster["counts"]["changed_topics"] == 3

    r = _reconcile(
        "drift", str(manifests), "--cluster", "live", "--bootstrap-servers", servers, "--since", str(tmp_path / "before.json")
    )
    assert "(not drift by itself) (6):" in r.output and "Since the earlier observation: 6 changes to 3 topics." in r.output
