"""Snapshots carry each topic's evidence of idleness when the Policy sets idle_after
(docs/snapshot-format.md): `reconcile snapshot` reads it over real sockets and writes it to JSON and
to Parquet alike; snapshots without it (older ones, or no idle_after) load with none, which means
"unknown", never idle."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.files.snapshot import load_snapshot
from tests.kafka.helpers import CLUSTER, write_manifests

DAY_MS = 86_400_000
POLICY = "kind: Policy\nidle_after: 30d\n---\n"
TOPICS = "kind: Topic\nname: legacy.orders\npartitions: 2\n"


def seeded(cluster) -> int:
    """legacy.orders: partition 0 written 75 days ago, partition 1 empty, read to its end by
    legacy-billing (Empty); payments written now, with a consumer of group live-reader."""
    now = int(time.time() * 1000)
    cluster.create_topic("legacy.orders", partitions=2, replication_factor=1)
    cluster.create_topic("payments", partitions=1, replication_factor=1)
    cluster.produce("legacy.orders", 0, [now - 76 * DAY_MS, now - 75 * DAY_MS])
    cluster.produce("payments", 0, [now])
    cluster.commit_offsets("legacy-billing", {("legacy.orders", 0): 2})
    cluster.commit_offsets("live-reader", {("payments", 0): 1})
    cluster.join_group("live-reader", "m-1", {"payments": [0]})
    return now


def snapshot(manifests, out, *extra) -> None:
    result = CliRunner().invoke(main, ["snapshot", str(manifests), "--cluster", CLUSTER, "-o", str(out), *extra])
    assert result.exit_code == 0, result.output


def test_a_snapshot_holds_every_topics_evidence_in_json_and_parquet_alike(test_cluster, tmp_path):
    now = seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    snapshot(manifests, tmp_path / "snap.json")
    snapshot(manifests, tmp_path / "fleet", "--format", "parquet")
    (parquet,) = (tmp_path / "fleet" / CLUSTER).glob("*.parquet")

    data = json.loads((tmp_path / "snap.json").read_text())
    legacy = data["activity"]["legacy.orders"]
    assert [(p["partition"], p["newest_offset"], p["high_watermark"]) for p in legacy["partitions"]] == [(0, 1, 2), (1, -1, 0)]
    assert legacy["partitions"][0]["newest_timestamp"] == now - 75 * DAY_MS
    assert legacy["groups"] == [{"group": "legacy-billing", "state": "Empty", "committed": {"0": 2}}]
    assert legacy["unknown"] == [] and legacy["size_bytes"] == 200
    assert [(g["group"], g["state"]) for g in data["activity"]["payments"]["groups"]] == [("live-reader", "Stable")]

    from_json, from_parquet = load_snapshot(tmp_path / "snap.json"), load_snapshot(parquet)
    for state in (from_json, from_parquet):
        assert state.activity["legacy.orders"].not_idle(30 * DAY_MS) == []
        assert state.activity["payments"].not_idle(30 * DAY_MS) != []
    assert from_parquet.activity["legacy.orders"] == from_json.activity["legacy.orders"].model_copy(
        update={"read_at_ms": from_parquet.activity["legacy.orders"].read_at_ms}
    )


def test_without_idle_after_a_snapshot_has_no_evidence_and_keeps_the_json_it_had(test_cluster, tmp_path):
    seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, TOPICS)
    snapshot(manifests, tmp_path / "snap.json")
    snapshot(manifests, tmp_path / "fleet", "--format", "parquet")
    (parquet,) = (tmp_path / "fleet" / CLUSTER).glob("*.parquet")
    assert "activity" not in json.loads((tmp_path / "snap.json").read_text())
    assert load_snapshot(tmp_path / "snap.json").activity == load_snapshot(parquet).activity == {}


def test_a_plan_from_a_snapshot_with_evidence_still_deletes_nothing_under_a_guard(test_cluster, tmp_path):
    """The snapshot's evidence is for drift: a guarded deletion waits for evidence read for its plan."""
    seeded(test_cluster)
    absent = "kind: Topic\nname: legacy.orders\nstate: absent\ndelete_only_if_idle_for: 30d\n"
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + absent)
    snapshot(manifests, tmp_path / "snap.json")
    assert "legacy.orders" in json.loads((tmp_path / "snap.json").read_text())["activity"]
    result = CliRunner().invoke(main, ["plan", str(manifests), "--snapshot", str(tmp_path / "snap.json")])
    assert "delete topic legacy.orders" not in result.output, result.output
    assert "a plan from a snapshot cannot show it" in result.output
    live = CliRunner().invoke(main, ["plan", str(manifests), "--cluster", CLUSTER])
    assert "delete topic legacy.orders" in live.output, live.output


def test_a_bad_value_in_the_evidence_is_refused_naming_its_row(test_cluster, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    seeded(test_cluster)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, POLICY + TOPICS)
    snapshot(manifests, tmp_path / "fleet", "--format", "parquet")
    (parquet,) = (tmp_path / "fleet" / CLUSTER).glob("*.parquet")
    table = pq.read_table(parquet)
    rows = table.to_pylist()
    row = next(i for i, r in enumerate(rows) if r["topic"] == "legacy.orders")
    rows[row]["activity"]["partitions"][0]["partition"] = -5
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), parquet)
    result = CliRunner().invoke(main, ["drift", str(manifests), "--fleet", str(tmp_path / "fleet"), "--engine", "local"])
    assert result.exit_code == 1, result.output
    says = f"row {row} (topic 'legacy.orders'): activity.partitions[0].partition: Input should be greater than or equal to 0"
    assert says in result.output, result.output
