"""`reconcile drift` lists idle topics when the Policy sets idle_after (docs/idle-topics.md), over
real sockets: one cluster live, a snapshot, `--since` and a fleet, in every format. Internal topics,
`idle_exempt_topics` and topics with recent records, live groups or anything unknown are never
listed; with an earlier observation, a high watermark or a committed offset that moved keeps a
topic off the list too."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from reconciler.cli import main
from tests.kafka.helpers import CLUSTER, write_manifests

DAY_MS = 86_400_000
POLICY = "kind: Policy\nidle_after: 30d\nidle_exempt_topics: ['\\.dlq$']\n---\n"
TOPICS = "kind: Topic\nname: legacy.orders\npartitions: 2\n---\nkind: Topic\nname: payments\npartitions: 1\n"


def seeded(cluster) -> int:
    """legacy.orders (declared): written 75 days ago, read to its end by legacy-billing (Empty);
    orphan.v0 (not declared): written 40 days ago; orders.dlq: empty (exempt); payments: written
    now; quiet.live: old records but a group with live members; __consumer_offsets: internal."""
    now = int(time.time() * 1000)
    for name, partitions in (("legacy.orders", 2), ("payments", 1), ("orphan.v0", 1), ("orders.dlq", 1), ("quiet.live", 1)):
        cluster.create_topic(name, partitions=partitions, replication_factor=1)
    cluster.produce("legacy.orders", 0, [now - 76 * DAY_MS, now - 75 * DAY_MS])
    cluster.produce("orphan.v0", 0, [now - 40 * DAY_MS])
    cluster.produce("payments", 0, [now])
    cluster.produce("quiet.live", 0, [now - 90 * DAY_MS])
    cluster.commit_offsets("legacy-billing", {("legacy.orders", 0): 2})
    cluster.commit_offsets("live-reader", {("quiet.live", 0): 1})
    cluster.join_group("live-reader", "m-1", {"quiet.live": [0]})
    return now


def reconcile(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_live_drift_lists_the_idle_topics_managed_and_not_with_their_evidence(test_cluster, tmp_path):
    now = seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    result = reconcile("drift", manifests, "--cluster", CLUSTER, "--format", "json")
    assert result.exit_code == 3, result.output  # orphan.v0 and the others are unmanaged: drift, as before
    (cluster,) = json.loads(result.stdout)["clusters"]
    assert cluster["idle_after_ms"] == 30 * DAY_MS and cluster["counts"]["idle_topics"] == 2
    legacy, orphan = cluster["idle"]
    assert (legacy["topic"], legacy["managed"], orphan["topic"], orphan["managed"]) == ("legacy.orders", True, "orphan.v0", False)
    assert legacy["newest_timestamp"] == now - 75 * DAY_MS and legacy["newest_partition"] == 0
    assert legacy["idle_for_ms"] == legacy["read_at_ms"] - legacy["newest_timestamp"] >= 75 * DAY_MS
    assert legacy["groups"] == ["legacy-billing (Empty)"] and legacy["records"] == 2 and legacy["size_bytes"] == 200
    items = [i for i in cluster["items"] if i["kind"] == "idle-topic"]
    assert [(i["topic"], i["key"]) for i in items] == [("legacy.orders", "managed"), ("orphan.v0", "unmanaged")]
    assert "idle for 75d" in items[0]["detail"] and "groups with commits: legacy-billing (Empty)" in items[0]["detail"]

    text = reconcile("drift", manifests, "--cluster", CLUSTER).stdout
    assert "Idle topics (idle for 30d or more; not drift by itself) (2):" in text, text
    assert "Idle for 30d or more: 2 topics." in text
    for fmt in ("markdown", "html"):
        shown = reconcile("drift", manifests, "--cluster", CLUSTER, "--format", fmt).stdout
        assert "Idle topics (idle for 30d or more" in shown and "legacy-billing (Empty)" in shown and "orphan.v0" in shown


def test_without_idle_after_nothing_is_read_or_said_of_idleness(test_cluster, tmp_path):
    seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, TOPICS)
    test_cluster.clear_request_log()
    result = reconcile("drift", manifests, "--cluster", CLUSTER, "--format", "json")
    (cluster,) = json.loads(result.stdout)["clusters"]
    assert "idle" not in cluster and "idle_topics" not in cluster["counts"]
    assert not [r for r in test_cluster.request_log if r.api_name == "ListGroups"]
    assert "Idle" not in reconcile("drift", manifests, "--cluster", CLUSTER).stdout


def test_snapshots_fleets_and_since_agree_and_a_topic_written_since_is_not_idle(test_cluster, tmp_path):
    seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    snap = tmp_path / "earlier.json"
    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", snap).exit_code == 0
    fleet = tmp_path / "fleet"
    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", fleet, "--format", "parquet").exit_code == 0

    def idle(*args) -> list[str]:
        result = reconcile("drift", manifests, *args, "--format", "json")
        assert result.exit_code == 3, result.output
        return [t["topic"] for t in json.loads(result.stdout)["clusters"][0]["idle"]]

    assert idle("--snapshot", snap) == idle("--fleet", fleet, "--engine", "local") == ["legacy.orders", "orphan.v0"]
    # A replayed record (an old timestamp) moves only the high watermark; a group commits on the other.
    now = int(time.time() * 1000)
    test_cluster.produce("legacy.orders", 1, [now - 80 * DAY_MS])
    test_cluster.commit_offsets("late-reader", {("orphan.v0", 0): 1})
    # Without an earlier observation neither shows: the records are old, the group has no members.
    assert idle("--cluster", CLUSTER) == ["legacy.orders", "orphan.v0"]
    assert idle("--cluster", CLUSTER, "--since", snap) == []
    time.sleep(1.1)  # the fleet's next run is a later file (runs are named by the second)
    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", fleet, "--format", "parquet").exit_code == 0
    assert idle("--fleet", fleet, "--engine", "local") == []


def test_an_earlier_snapshot_without_evidence_leaves_idleness_unknown(test_cluster, tmp_path):
    seeded(test_cluster)
    plain = write_manifests(tmp_path / "plain", test_cluster.bootstrap_servers, TOPICS)
    snap = tmp_path / "old.json"
    assert reconcile("snapshot", plain, "--cluster", CLUSTER, "-o", snap).exit_code == 0
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    result = reconcile("drift", manifests, "--snapshot", snap, "--format", "json")
    assert json.loads(result.stdout)["clusters"][0]["idle"] == []
    result = reconcile("drift", manifests, "--cluster", CLUSTER, "--since", snap, "--format", "json")
    assert json.loads(result.stdout)["clusters"][0]["idle"] == []


def test_both_engines_find_the_same_idle_topics_in_a_fleet(spark, test_cluster, tmp_path):
    from reconciler.drift import engine
    from reconciler.drift.tables import read_table_rows
    from reconciler.manifests import load_manifests

    seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    desired = load_manifests(manifests).desired_state(CLUSTER)
    fleet = tmp_path / "fleet"

    def both(tables) -> list[str]:
        local = engine.run_fleet(fleet, lambda _: desired, engine="local", tables=tables / "local")
        remote = engine.run_fleet(fleet, lambda _: desired, engine="spark", tables=tables / "spark")
        assert local.report.comparable() == remote.report.comparable()
        items = read_table_rows(tables / "local", "drift_items")
        assert items == read_table_rows(tables / "spark", "drift_items")
        assert [r["topic"] for r in items if r["kind"] == "idle-topic"] == [t.topic for t in local.report.clusters[0].idle or []]
        return [t.topic for t in local.report.clusters[0].idle or []]

    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", fleet, "--format", "parquet").exit_code == 0
    assert both(tmp_path / "one") == ["legacy.orders", "orphan.v0"]
    time.sleep(1.1)  # runs are named by the second
    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", fleet, "--format", "parquet").exit_code == 0
    assert both(tmp_path / "two") == ["legacy.orders", "orphan.v0"]  # nothing moved between the runs
    test_cluster.commit_offsets("late-reader", {("orphan.v0", 0): 1})
    time.sleep(1.1)  # runs are named by the second
    assert reconcile("snapshot", manifests, "--cluster", CLUSTER, "-o", fleet, "--format", "parquet").exit_code == 0
    assert both(tmp_path / "three") == ["legacy.orders"]  # a group committed on orphan.v0 since the run before
