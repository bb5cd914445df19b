"""What a least-privilege read saw and could not see, kept by both snapshot formats: hidden topics,
KIP-430 operations (of topics read, of absent declared ones and of the cluster) and refused sizes.
Snapshots without them (taken before, or by a principal that sees everything) keep their JSON."""

from __future__ import annotations

import json

import pytest

from reconciler.errors import SnapshotError
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_json import write_snapshot_json
from reconciler.models.observed import ObservedState
from tests.files.test_bad_snapshots import GOOD

RIGHTS_KEYS = {"hidden_topics", "absent_topic_operations", "cluster_authorized_operations", "sizes_refused"}


def least_privileged() -> ObservedState:
    state = load_snapshot(GOOD)
    name = next(iter(state.topics))
    topic = state.topics[name].model_copy(update={"authorized_operations": ["DESCRIBE", "DESCRIBE_CONFIGS", "READ"]})
    return state.model_copy(
        update={
            "topics": {**state.topics, name: topic},
            "hidden_topics": ["secret.a", "secret.b"],
            "absent_topic_operations": {"new.topic": ["CREATE", "DESCRIBE"]},
            "cluster_authorized_operations": ["DESCRIBE"],
            "sizes_refused": "CLUSTER_AUTHORIZATION_FAILED",
        }
    )


def test_json_keeps_every_right_and_leaves_them_out_when_nothing_was_hidden_or_read(tmp_path):
    state = least_privileged()
    path = tmp_path / "snap.json"
    write_snapshot_json(state, path)
    assert load_snapshot(path) == state
    written = json.loads(path.read_text())
    assert set(written) >= RIGHTS_KEYS and written["hidden_topics"] == ["secret.a", "secret.b"]
    # A snapshot from before these fields is written back without them.
    old = json.loads(load_snapshot(GOOD).to_json())
    assert not RIGHTS_KEYS & set(old) and "authorized_operations" not in json.dumps(old)


def test_parquet_keeps_every_right_as_rows_and_columns(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from reconciler.files.fleet import write_fleet_snapshot

    state = least_privileged()
    path = write_fleet_snapshot(state, tmp_path)
    assert load_snapshot(path) == state
    rows = {r["topic"]: r for r in pq.read_table(path).to_pylist()}
    assert {n: rows[n]["status"] for n in ("secret.a", "secret.b", "new.topic")} == {
        "secret.a": "hidden",
        "secret.b": "hidden",
        "new.topic": "absent",
    }
    assert {r["sizes_refused"] for r in rows.values()} == {"CLUSTER_AUTHORIZATION_FAILED"}
    assert rows["new.topic"]["authorized_operations"] == ["CREATE", "DESCRIBE"]


def test_a_parquet_status_row_with_partitions_or_an_unknown_status_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from reconciler.files.fleet import write_fleet_snapshot

    path = write_fleet_snapshot(least_privileged(), tmp_path)
    table = pq.read_table(path)
    statuses = [("gone" if s == "absent" else None if s is None else s) for s in table.column("status").to_pylist()]
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("status"), "status", pa.array(statuses, pa.string())), bad)
    with pytest.raises(SnapshotError, match=r"row \d+ \(topic 'new.topic'\): status 'gone' is null for a topic read"):
        load_snapshot(bad)
