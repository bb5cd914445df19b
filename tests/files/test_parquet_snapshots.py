"""Parquet snapshots through the one snapshot reader: written from good.json with the real writer,
then corrupted with pyarrow; each bad value is reported with its row and its path in the row's
topic, through the real CLI (`plan --snapshot`, `drift --snapshot`, `drift --fleet`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.files.fleet import discover_fleet, run_name, write_fleet_snapshot
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_parquet import read_snapshot_parquet
from tests.files.test_bad_snapshots import BAD, EXPECT, GOOD, MANIFESTS, assert_refused, reconcile

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "snapshots"


def test_parquet_snapshot_round_trip_is_lossless(tmp_path):
    for name in ("prod-eu", "staging-eu"):
        state = load_snapshot(EXAMPLES / f"{name}.json")
        path = write_fleet_snapshot(state, tmp_path)
        assert path == tmp_path / name / f"{run_name(state.taken_at)}.parquet"
        assert read_snapshot_parquet(path) == state
    fleet = discover_fleet(tmp_path)
    assert sorted(fleet) == ["prod-eu", "staging-eu"] and all(len(v) == 1 for v in fleet.values())


@pytest.fixture(scope="module")
def good_parquet(tmp_path_factory) -> Path:
    return write_fleet_snapshot(load_snapshot(GOOD), tmp_path_factory.mktemp("fleet"))


def corrupt(source: Path, target: Path, change) -> Path:
    table = pq.read_table(source)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), target)
    return target


def test_plan_on_a_parquet_snapshot_is_the_plan_on_the_json_one(good_parquet, tmp_path):
    outputs = []
    for snapshot in (GOOD, good_parquet):
        out = tmp_path / f"{snapshot.suffix[1:]}.plan.json"
        result = reconcile("plan", MANIFESTS, "--snapshot", snapshot, "--format", "json", "-o", out)
        assert result.exit_code == 2, result.output
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    assert load_snapshot(good_parquet) == load_snapshot(GOOD)


def test_the_format_is_told_by_content_not_by_name(good_parquet, tmp_path):
    disguised = tmp_path / "snapshot.json"
    shutil.copy(good_parquet, disguised)
    assert load_snapshot(disguised) == load_snapshot(GOOD)
    json_named_parquet = tmp_path / "snapshot.parquet"
    shutil.copy(GOOD, json_named_parquet)
    assert load_snapshot(json_named_parquet) == load_snapshot(GOOD)
    assert reconcile("import", tmp_path / "m", "--snapshot", disguised, "--dry-run").exit_code == 0


def test_json_snapshots_do_not_import_pyarrow():
    code = (
        "import sys; from reconciler.files.snapshot import load_snapshot; load_snapshot(sys.argv[1]); "
        "assert 'pyarrow' not in sys.modules, 'pyarrow imported'"
    )
    done = subprocess.run([sys.executable, "-c", code, str(GOOD)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_a_parquet_snapshot_without_pyarrow_says_what_to_install(good_parquet):
    code = (
        "import sys; sys.modules['pyarrow'] = None; from reconciler.cli import main; "
        "main(['plan', sys.argv[1], '--snapshot', sys.argv[2]])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(MANIFESTS), str(good_parquet)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "pip install 'kafka-reconciler[spark]'" in done.stderr and str(good_parquet) in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def _rows_by_topic(rows):
    return {r["topic"]: r for r in rows}


PARQUET_CASES = {
    "negative-high-watermark": (
        lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"][1].update(high_watermark=-5),
        ["partitions[1].high_watermark: must be >= 0"],
    ),
    "log-start-above-high-watermark": (
        lambda rows: _rows_by_topic(rows)["payments.events"]["partitions"][0].update(log_start_offset=10**9),
        ["partitions[0].log_start_offset: log start offset 1000000000 is above the high watermark"],
    ),
    "leader-not-a-replica-and-no-partitions": (
        lambda rows: (
            _rows_by_topic(rows)["orders.v1"]["partitions"][0].update(leader=99),
            _rows_by_topic(rows)["payments.events"].update(partitions=None),
        ),
        ["partitions[0].leader: leader 99 is not one of the replicas", "partitions: List should have at least 1 item"],
    ),
    "null-offset": (
        lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"][3].update(log_start_offset=None),
        ["partitions[3].log_start_offset: Input should be a valid integer"],
    ),
    "partition-gap": (
        lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"][3].update(partition=30),
        ["partitions[3].partition: partition ids are 0..7 in order"],
    ),
    "config-source-out-of-enum": (
        lambda rows: _rows_by_topic(rows)["orders.v1"]["configs"][0].update(source=42),
        ["source: Input should be"],
    ),
    "negative-committed-offset": (
        lambda rows: _rows_by_topic(rows)["orders.v1"]["group_offsets"][0].update(offset=-2),
        ['group_offsets."billing"."orders.v1"."0": Input should be greater than or equal to 0'],
    ),
    "topic-twice": (lambda rows: rows.append(dict(rows[0])), ["row 2: topic 'orders.v1' is also in row 0"]),
    "illegal-topic-name": (
        lambda rows: _rows_by_topic(rows)["orders.v1"].update(topic="orders v1?"),
        ["name: not a legal Kafka topic name"],
    ),
    "config-key-twice": (  # a mapping would keep the last entry without a word
        lambda rows: _rows_by_topic(rows)["orders.v1"]["configs"].append(
            {**_rows_by_topic(rows)["orders.v1"]["configs"][0], "value": "other"}
        ),
        ["configs.", "listed more than once in the row's configs"],
    ),
}


@pytest.mark.parametrize("case", sorted(PARQUET_CASES))
def test_a_corrupted_parquet_snapshot_is_refused_with_its_row(case, good_parquet, tmp_path):
    change, messages = PARQUET_CASES[case]
    path = corrupt(good_parquet, tmp_path / f"{case}.parquet", change)
    for command in ("plan", "drift"):
        result = reconcile(command, MANIFESTS, "--snapshot", path)
        assert_refused(result, path, [])
        lines = [line.strip() for line in result.output.splitlines()]
        for message in messages:
            assert any(line.startswith("row ") and message in line for line in lines), (message, result.output)


def test_a_parquet_row_names_the_topic(good_parquet, tmp_path):
    path = corrupt(
        good_parquet,
        tmp_path / "bad.parquet",
        lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"][1].update(high_watermark=-5),
    )
    row = [r["topic"] for r in pq.read_table(path).to_pylist()].index("orders.v1")
    result = reconcile("plan", MANIFESTS, "--snapshot", path)
    assert f"row {row} (topic 'orders.v1'): partitions[1].high_watermark: must be >= 0" in result.output, result.output


def test_a_corrupted_parquet_header_and_files_that_are_not_parquet(good_parquet, tmp_path):
    table = pq.read_table(good_parquet)
    cases = {}
    for name, header in {
        "header-not-json": b"{not json",
        "header-deep": b"[" * 10000 + b"]" * 10000,
        "header-array": b"[]",
        "header-bad-port": None,
    }.items():
        if header is None:
            meta = json.loads(table.schema.metadata[b"reconciler.snapshot"])
            meta["brokers"][0]["port"] = 0
            header = json.dumps(meta).encode()
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table.replace_schema_metadata({b"reconciler.snapshot": header}), path)
        cases[path] = name
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1" + b"\0" * 100)
    cases[garbage] = "garbage"
    no_columns = tmp_path / "no-columns.parquet"
    pq.write_table(pa.table({"x": [1]}), no_columns)
    cases[no_columns] = "no-columns"
    for path in cases:
        for command in ("plan", "drift"):
            assert_refused(reconcile(command, MANIFESTS, "--snapshot", path), path, [])
    result = reconcile("plan", MANIFESTS, "--snapshot", tmp_path / "header-bad-port.parquet")
    assert "header: brokers[0].port: Input should be greater than or equal to 1" in result.output, result.output
    # The header is not the whole file, so its place is said within it, not as FILE:LINE:COLUMN.
    result = reconcile("plan", MANIFESTS, "--snapshot", tmp_path / "header-not-json.parquet")
    place = f"{tmp_path / 'header-not-json.parquet'}: Parquet key-value metadata reconciler.snapshot, line 1, column 2: "
    assert f"\n  {place}not JSON (" in result.output, result.output


def test_a_bad_snapshot_in_a_fleet_is_refused_naming_it(good_parquet, tmp_path):
    fleet = tmp_path / "fleet"
    (fleet / "prod-eu").mkdir(parents=True)
    corrupt(
        good_parquet,
        fleet / "prod-eu" / good_parquet.name,
        lambda rows: _rows_by_topic(rows)["orders.v1"]["partitions"][1].update(high_watermark=-5),
    )
    result = reconcile("drift", MANIFESTS, "--fleet", fleet, "--engine", "local")
    assert_refused(result, fleet / "prod-eu" / good_parquet.name, [])
    assert "partitions[1].high_watermark: must be >= 0" in result.output
    other = tmp_path / "fleet2"
    other.mkdir()
    shutil.copy(BAD / "high-watermark-negative.json", other / "a.json")
    assert_refused(reconcile("drift", MANIFESTS, "--fleet", other), other / "a.json", EXPECT["high-watermark-negative.json"])
    unknown = tmp_path / "fleet3"
    (unknown / "eu-nowhere").mkdir(parents=True)
    shutil.copy(good_parquet, unknown / "eu-nowhere" / good_parquet.name)
    result = reconcile("drift", MANIFESTS, "--fleet", unknown, "--engine", "local")
    assert result.exit_code == 1 and str(unknown / "eu-nowhere" / good_parquet.name) in result.output, result.output


def test_capacity_figures_round_trip_and_impossible_ones_are_refused_in_the_header(tmp_path):
    state = load_snapshot(GOOD)
    state = state.model_validate(
        {
            **state.model_dump(),
            "log_dirs": {1: [{"log_dir": "/var/lib/kafka", "total_bytes": 10**12, "usable_bytes": 4 * 10**11}]},
            "capacity_unknown": {2: "DescribeLogDirs v3 has no capacity figures (a broker before Kafka 3.3, KIP-827)"},
        }
    )
    path = write_fleet_snapshot(state, tmp_path / "fleet")
    assert read_snapshot_parquet(path) == state
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"reconciler.snapshot"])
    meta["log_dirs"]["1"][0]["usable_bytes"] = 2 * 10**12
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata({b"reconciler.snapshot": json.dumps(meta).encode()}), bad)
    result = reconcile("plan", MANIFESTS, "--snapshot", bad)
    assert_refused(result, bad, [])
    assert 'header: log_dirs."1"[0].usable_bytes: more free bytes than the filesystem\'s total_bytes' in result.output, (
        result.output
    )
