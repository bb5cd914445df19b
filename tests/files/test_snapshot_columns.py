"""Parquet snapshots read as columns (`reconciler.files.snapshot_columns`): a file the columns
prove good gives the file reader's models; a file breaking any rule is never proven good, so the
file reader refuses it with its own messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.errors import SnapshotError
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.files.snapshot import load_snapshot, load_snapshot_columns
from reconciler.files.snapshot_columns import read_columns
from reconciler.files.snapshot_parquet import read_snapshot_parquet
from tests.files.test_bad_snapshots import GOOD
from tests.files.test_parquet_snapshots import PARQUET_CASES, _rows_by_topic, corrupt

pytest.importorskip("pyarrow")
pytest.importorskip("numpy")
EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "snapshots"


@pytest.fixture(scope="module")
def good_parquet(tmp_path_factory) -> Path:
    return write_fleet_snapshot(load_snapshot(GOOD), tmp_path_factory.mktemp("fleet"))


def _whole(path: Path):
    columns = read_columns(path)
    assert columns is not None
    return columns.with_topics(columns.topics(list(range(len(columns.names)))))


def test_proven_files_give_the_file_readers_models(good_parquet, tmp_path):
    assert _whole(good_parquet) == read_snapshot_parquet(good_parquet)
    for name in ("prod-eu", "staging-eu"):
        path = write_fleet_snapshot(load_snapshot(EXAMPLES / f"{name}.json"), tmp_path)
        assert _whole(path) == read_snapshot_parquet(path)


def test_an_offline_partition_written_with_minus_one_offsets_is_proven(good_parquet, tmp_path):
    def offline(rows):
        _rows_by_topic(rows)["orders.v1"]["partitions"][2].update(
            leader=-1, isr=[], log_start_offset=-1, high_watermark=-1, epoch_end_offset=None, offsets_by_timestamp=[]
        )

    path = corrupt(good_parquet, tmp_path / "offline.parquet", offline)
    assert _whole(path) == read_snapshot_parquet(path)
    assert _whole(path).topics["orders.v1"].partitions[2].high_watermark == -1


def _partition(name: str, index: int, **values):
    return lambda rows: _rows_by_topic(rows)[name]["partitions"][index].update(**values)


def _config(name: str, index: int, **values):
    return lambda rows: _rows_by_topic(rows)[name]["configs"][index].update(**values)


# Rules the file reader's own cases (PARQUET_CASES) do not break, each broken once.
COLUMN_CASES = {
    "replica-twice": _partition("orders.v1", 0, replicas=[1, 1, 2]),
    "isr-not-a-replica": _partition("orders.v1", 1, isr=[1, 9]),
    "isr-twice": _partition("orders.v1", 1, isr=[1, 1]),
    "offline-replica-not-a-replica": _partition("orders.v1", 1, offline_replicas=[9]),
    "negative-broker-id": _partition("orders.v1", 1, isr=[-3]),
    "null-replica-list": _partition("orders.v1", 1, replicas=None),
    "negative-size": _partition("orders.v1", 1, size_bytes=-1),
    "epoch-end-offset-below-minus-one": _partition("orders.v1", 1, epoch_end_offset=-2),
    "leader-below-minus-one": _partition("orders.v1", 1, leader=-2),
    "epoch-below-minus-one": _partition("orders.v1", 1, leader_epoch=-2),
    "minus-one-offsets-with-a-leader": _partition("orders.v1", 1, log_start_offset=-1, high_watermark=-1),
    "offline-with-an-epoch-end-offset": _partition(
        "orders.v1", 1, leader=-1, isr=[], log_start_offset=-1, high_watermark=-1, epoch_end_offset=5
    ),
    "offset-by-time-below-minus-one": _partition("orders.v1", 1, offsets_by_timestamp=[{"timestamp": 5, "offset": -2}]),
    "null-timestamp": _partition("orders.v1", 1, offsets_by_timestamp=[{"timestamp": None, "offset": 2}]),
    "null-partition": lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"].__setitem__(1, None),
    "empty-partitions": lambda rows: _rows_by_topic(rows)["orders.v1"].update(partitions=[]),
    "empty-config-key": _config("orders.v1", 0, key=""),
    "null-config-key": _config("orders.v1", 0, key=None),
    "null-sensitive": _config("orders.v1", 0, sensitive=None),
    "unknown-operation": lambda rows: _rows_by_topic(rows)["orders.v1"].update(authorized_operations=["FLY"]),
    "other-cluster-in-a-row": lambda rows: _rows_by_topic(rows)["orders.v1"].update(cluster="elsewhere"),
    "unknown-status": lambda rows: _rows_by_topic(rows)["orders.v1"].update(status="gone"),
    "dot-topic": lambda rows: _rows_by_topic(rows)["orders.v1"].update(topic=".."),
    "topic-name-of-250": lambda rows: _rows_by_topic(rows)["orders.v1"].update(topic="o" * 250),
    "topic-name-ending-in-a-newline": lambda rows: _rows_by_topic(rows)["orders.v1"].update(topic="orders.v1\n"),
    "config-key-twice": lambda rows: _rows_by_topic(rows)["orders.v1"]["configs"].append(
        dict(_rows_by_topic(rows)["orders.v1"]["configs"][0])
    ),
    "dot-topic-without-group-offsets": lambda rows: (
        _no_group_offsets(rows),
        _rows_by_topic(rows)["orders.v1"].update(topic="."),
    ),
    "null-cluster-in-a-row": lambda rows: _rows_by_topic(rows)["orders.v1"].update(cluster=None),
    # Without group offsets every row is a plain topic read: the columns list the names themselves.
    "topic-twice-without-group-offsets": lambda rows: (_no_group_offsets(rows), rows.append(dict(rows[0]))),
    "other-cluster-without-group-offsets": lambda rows: (
        _no_group_offsets(rows),
        _rows_by_topic(rows)["orders.v1"].update(cluster="elsewhere"),
    ),
}


def _no_group_offsets(rows):
    for row in rows:
        row["group_offsets"] = []


def test_a_file_of_plain_topic_rows_gives_the_file_readers_models(good_parquet, tmp_path):
    path = corrupt(good_parquet, tmp_path / "plain.parquet", _no_group_offsets)
    assert _whole(path) == read_snapshot_parquet(path)
    assert not read_snapshot_parquet(path).group_offsets


def test_config_lists_are_read_as_listed_and_equal_ones_are_one_tuple(good_parquet, tmp_path):
    listed: list[dict[str, object]] = [
        {"key": "retention.ms", "value": "86400000", "source": 1, "sensitive": False, "read_only": False},
        {"key": "sasl.jaas.config", "value": None, "source": 1, "sensitive": True, "read_only": True},
        {"key": "cleanup.policy", "value": "delete", "source": 5, "sensitive": False, "read_only": False},
    ]

    def configs(rows):
        by_topic = _rows_by_topic(rows)
        for copy in ("orders.v2", "orders.v3"):
            rows.append({**by_topic["orders.v1"], "topic": copy, "topic_id": None})
        by_topic = _rows_by_topic(rows)
        by_topic["orders.v1"]["configs"] = [dict(c) for c in listed]
        by_topic["orders.v2"]["configs"] = [dict(c) for c in listed]  # equal, read from other rows
        by_topic["orders.v3"]["configs"] = []
        by_topic["payments.events"]["configs"] = [dict(c) for c in reversed(listed)]  # the same entries, another order

    path = corrupt(good_parquet, tmp_path / "configs.parquet", configs)
    columns = read_columns(path)
    assert columns is not None
    as_listed = [
        tuple((c["key"], c["value"], c["source"], c["sensitive"], c["read_only"]) for c in row or [])
        for row in columns.table.column("configs").to_pylist()
    ]
    assert columns.configs == as_listed
    assert [type(v) for row in columns.configs for entry in row for v in entry] == [
        type(v) for row in as_listed for entry in row for v in entry
    ]
    row = dict(zip(columns.names, columns.configs, strict=True))
    assert row["orders.v1"] is row["orders.v2"]  # compared at once where drift groups topics by them
    assert row["orders.v3"] == () and row["payments.events"] == row["orders.v1"][::-1]
    assert _whole(path) == read_snapshot_parquet(path)


@pytest.mark.parametrize("case", sorted(set(COLUMN_CASES) | set(PARQUET_CASES)))
def test_a_file_breaking_a_rule_is_not_proven_and_the_file_reader_refuses_it(case, good_parquet, tmp_path):
    change = COLUMN_CASES[case] if case in COLUMN_CASES else PARQUET_CASES[case][0]
    path = corrupt(good_parquet, tmp_path / f"{case}.parquet", change)
    assert read_columns(path) is None
    with pytest.raises(SnapshotError):
        read_snapshot_parquet(path)


def test_json_snapshots_and_files_that_are_not_snapshots_are_left_to_the_file_reader(good_parquet, tmp_path):
    assert load_snapshot_columns(GOOD) is None
    assert load_snapshot_columns(good_parquet) is not None
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(good_parquet.read_bytes()[:200])
    assert load_snapshot_columns(broken) is None
    with pytest.raises(SnapshotError):
        load_snapshot(broken)
