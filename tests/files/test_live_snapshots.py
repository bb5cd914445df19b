"""Snapshots the live reader writes are accepted by the checks on load, offline partitions included:
a broker of the test cluster is stopped, the cluster read, saved as JSON and as Parquet, and
planned from both files through the real CLI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_json import write_snapshot_json
from reconciler.manifests import load_manifests
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

TOPICS = """kind: Topic
name: fragile
partitions: 3
truncate: [{keep_last: 1}, {before_time: "2026-01-01T00:00:00Z"}]
"""


def test_a_live_snapshot_with_an_offline_partition_loads_and_plans(test_cluster, tmp_path):
    pytest.importorskip("pyarrow")
    from reconciler.files.fleet import write_fleet_snapshot

    test_cluster.create_topic("fragile", partitions=3, replication_factor=1)
    test_cluster.create_topic("healthy", partitions=2, replication_factor=1)
    down = test_cluster.partition("fragile", 1).leader
    test_cluster.stop_broker(down)
    manifests = write_manifests(tmp_path / "m", test_cluster.bootstrap_servers, TOPICS)
    with kafka_of(test_cluster) as kafka:
        observed = kafka.observe_desired(load_manifests(manifests).desired_state(CLUSTER), sizes=True)
    offline = [p for p in observed.topics["fragile"].partitions if p.leader == -1]
    assert offline and all((p.log_start_offset, p.high_watermark) == (-1, -1) for p in offline)
    json_file = tmp_path / "live.json"
    write_snapshot_json(observed, json_file)
    parquet_file = write_fleet_snapshot(observed, tmp_path / "fleet")
    assert load_snapshot(json_file) == load_snapshot(parquet_file) == observed
    outputs = []
    for snapshot in (json_file, parquet_file):
        result = CliRunner().invoke(main, ["plan", str(manifests), "--snapshot", str(snapshot)])
        assert result.exit_code in (0, 2), result.output
        outputs.append(result.output)
        result = CliRunner().invoke(main, ["drift", str(manifests), "--snapshot", str(snapshot), "--since", str(json_file)])
        assert result.exit_code in (0, 3), result.output
        assert f"fragile-{offline[0].partition}" in result.output, result.output  # listed offline
    assert outputs[0] == outputs[1]
