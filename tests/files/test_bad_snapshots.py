"""Bad snapshots and saved plans, stored as data: one file per case under bad/ (saved plans under
bad/plans/), and an expect.json naming, per file, each problem the loader must report: the JSON
path of the bad value ("" for a file that is not a snapshot at all) and a message substring, and
for a file that is not JSON at all the place, `at`: "LINE:COLUMN", said `FILE:LINE:COLUMN: ...` as
manifest problems are.

Every snapshot case goes through the real CLI (`plan --snapshot`, `drift --snapshot`, and for
some `drift --since` and `import --snapshot`): exit 1, the file named, each path and message on
one line, never a traceback or an internal error. Parquet cases are written from good.json with
the real writer, then corrupted with pyarrow.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from reconciler.cli import main
from reconciler.errors import MAX_PROBLEMS, SnapshotError
from reconciler.files.saved_plan import load_plan_file, load_plan_json
from reconciler.files.snapshot import load_snapshot
from reconciler.models.observed import ObservedState

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFESTS = ROOT / "manifests"
GOOD = HERE / "good.json"
BAD = HERE / "bad"
EXPECT = json.loads((BAD / "expect.json").read_text(encoding="utf-8"))
CASES = sorted(EXPECT)
PLAN_EXPECT = json.loads((BAD / "plans" / "expect.json").read_text(encoding="utf-8"))
PLAN_CASES = sorted(PLAN_EXPECT)


def reconcile(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_refused(result, path: Path | str, expect: list[dict], max_len: int = 20_000) -> None:
    """Exit 1 with a message naming the file and every expected problem, each on one line."""
    output = result.output
    assert isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    assert str(path) in output, output
    assert len(output) < max_len, f"{len(output)} characters of error"
    lines = [line.strip() for line in output.splitlines()]
    for e in expect:
        if "at" in e:
            assert any(line.startswith(f"{path}:{e['at']}: ") and e["message"] in line for line in lines), (
                f"expected `{path}:{e['at']}: ...{e['message']}...` in:\n{output}"
            )
        elif e["path"]:
            assert any(line.startswith(f"{e['path']}: ") and e["message"] in line for line in lines), (
                f"expected `{e['path']}: ...{e['message']}...` in:\n{output}"
            )
        else:
            assert e["message"] in output, f"expected {e['message']!r} in:\n{output}"


def test_the_cases_are_well_formed():
    assert len(CASES) >= 40
    on_disk = {p.name for p in BAD.iterdir() if p.is_file() and p.name != "expect.json"}
    assert on_disk == set(CASES), on_disk ^ set(CASES)
    for case in CASES:
        assert EXPECT[case] and all(_well_formed(e) for e in EXPECT[case]), case
    assert sum(len(EXPECT[c]) > 1 for c in CASES) >= 3
    on_disk = {p.name for p in (BAD / "plans").iterdir() if p.name != "expect.json"}
    assert on_disk == set(PLAN_CASES)
    assert all(_well_formed(PLAN_EXPECT[c]) for c in PLAN_CASES)
    positioned = [c for c in CASES if "at" in EXPECT[c][0]] + [c for c in PLAN_CASES if "at" in PLAN_EXPECT[c]]
    assert len(positioned) == 9, positioned


def _well_formed(e: dict) -> bool:
    return set(e) - {"at"} == {"path", "message"} and bool(e["message"]) and (not e.get("at") or not e["path"])


def test_the_control_snapshot_loads_and_plans():
    """The same invocations on the good snapshot the cases are made from work."""
    assert load_snapshot(GOOD).cluster == "prod-eu"
    assert reconcile("plan", MANIFESTS, "--snapshot", GOOD).exit_code == 2
    assert reconcile("drift", MANIFESTS, "--snapshot", GOOD).exit_code == 3
    assert reconcile("drift", MANIFESTS, "--snapshot", GOOD, "--since", GOOD).exit_code == 3


@pytest.mark.parametrize("case", CASES)
def test_plan_refuses_the_snapshot_naming_file_and_place(case: str):
    path = BAD / case
    assert_refused(reconcile("plan", MANIFESTS, "--snapshot", path), path, EXPECT[case])


@pytest.mark.parametrize("case", CASES)
def test_drift_refuses_the_snapshot_naming_file_and_place(case: str):
    path = BAD / case
    assert_refused(reconcile("drift", MANIFESTS, "--snapshot", path), path, EXPECT[case])


@pytest.mark.parametrize("case", [c for c in CASES if c != "cluster-not-declared.json"])
def test_the_loader_raises_a_snapshot_error(case: str):
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(BAD / case)
    assert str(BAD / case) in str(raised.value)


@pytest.mark.parametrize(
    "case", ["high-watermark-negative.json", "nested-10000-deep.json", "not-utf8.json", "offline-marker-with-a-leader.json"]
)
def test_drift_since_and_import_refuse_it_too(case: str, tmp_path):
    path = BAD / case
    assert_refused(reconcile("drift", MANIFESTS, "--snapshot", GOOD, "--since", path), path, EXPECT[case])
    assert_refused(reconcile("import", tmp_path / "m", "--snapshot", path), path, EXPECT[case])
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").rglob("*.yaml"))


def test_every_problem_is_counted_and_the_list_is_bounded():
    result = reconcile("plan", MANIFESTS, "--snapshot", BAD / "many-problems.json")
    problem_lines = [line for line in result.output.splitlines() if line.startswith("  topics.")]
    assert len(problem_lines) == MAX_PROBLEMS, result.output
    assert "(28 problems)" in result.output and "and 8 more" in result.output


def test_a_snapshot_of_a_cluster_the_manifests_do_not_declare(tmp_path):
    path = BAD / "cluster-not-declared.json"
    message = f"{path} is a snapshot of cluster 'eu-nowhere', which the manifests do not declare (known: prod-eu, staging-eu)"
    commands: list[list[str | Path]] = [["plan", MANIFESTS, "--snapshot", path], ["drift", MANIFESTS, "--snapshot", path]]
    for args in commands:
        result = reconcile(*args)
        assert result.exit_code == 1 and message in result.output, result.output
    # import is how a cluster gets declared: it writes the Cluster document.
    result = reconcile("import", tmp_path / "m", "--snapshot", path, "--dry-run")
    assert result.exit_code == 0 and "==> clusters/eu-nowhere.yaml <==" in result.output, result.output


def test_the_deep_nesting_is_refused_within_a_second():
    for case in ("nested-10000-deep.json", "nested-10000-deep-in-a-field.json"):
        started = time.monotonic()
        result = reconcile("plan", MANIFESTS, "--snapshot", BAD / case)
        assert result.exit_code == 1 and time.monotonic() - started < 1.0


def test_the_deep_nesting_is_refused_in_a_fresh_process_too():
    """Not only under pytest's deep stack: the real command, as a user runs it."""
    path = BAD / "nested-10000-deep.json"
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", "plan", str(MANIFESTS), "--snapshot", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "nested too deeply" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_50_mb_string_is_not_echoed(tmp_path):
    data = json.loads(GOOD.read_text())
    long_name = "x" * 50_000_000
    cases = {"cluster.json": {**data, "cluster": long_name}}
    topics = dict(data["topics"])
    topics[long_name] = topics.pop("orders.v1")
    cases["topic-key.json"] = {**data, "topics": topics}
    brokers = [dict(data["brokers"][0], host=5), *data["brokers"][1:]]
    cases["config-value.json"] = {**data, "brokers": brokers, "cluster_id": ["y" * 50_000_000]}
    for name, snapshot in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(snapshot))
        for command in ("plan", "drift"):
            result = reconcile(command, MANIFESTS, "--snapshot", path)
            assert result.exit_code == 1 and str(path) in result.output, result.output[:2000]
            assert len(result.output) < 5_000, (name, command, len(result.output))
            assert "50,000,000 characters" in result.output or name == "config-value.json", result.output


def test_a_snapshot_with_an_offline_partition_as_the_live_reader_writes_it_loads():
    data = json.loads(GOOD.read_text())
    partition = data["topics"]["orders.v1"]["partitions"][2]
    partition.update(leader=-1, log_start_offset=-1, high_watermark=-1, isr=[], offline_replicas=[1, 2, 3])
    partition.pop("size_bytes")
    observed = ObservedState.model_validate(data)
    assert observed.topics["orders.v1"].partitions[2].high_watermark == -1
    # and a leader -1 with offsets known (the leader left between the reads), -1 epochs and lookups
    partition.update(log_start_offset=5, high_watermark=7, leader_epoch=-1, epoch_end_offset=-1)
    data["topics"]["payments.events"]["partitions"][0]["offsets_by_timestamp"] = {"1759276800000": -1}
    ObservedState.model_validate(data)


def test_a_json_snapshot_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.read_bytes())
    assert load_snapshot(path) == load_snapshot(GOOD)


def test_a_directory_or_a_missing_file_is_a_one_line_error(tmp_path):
    for path in (tmp_path, tmp_path / "missing.json"):
        result = reconcile("plan", MANIFESTS, "--snapshot", path)
        assert result.exit_code == 1 and str(path) in result.output and "internal error" not in result.output


# --- saved plans ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", PLAN_CASES)
def test_a_bad_saved_plan_is_refused_naming_the_file(case: str):
    path = BAD / "plans" / case
    expect = PLAN_EXPECT[case]
    with pytest.raises(SnapshotError) as raised:
        load_plan_file(str(path))
    message = str(raised.value)
    assert str(path) in message and expect["message"] in message, message
    if expect["path"]:
        assert f"{expect['path']}: " in message, message
    if "at" in expect:
        assert f"\n  {path}:{expect['at']}: " in message, message
    result = reconcile("apply", path, "--manifests", MANIFESTS)
    assert_refused(result, path, [expect])


def test_a_saved_plan_with_a_50_mb_string_is_not_echoed(tmp_path):
    for data in (
        {"format_version": "v" * 50_000_000, "actions": []},
        {"format_version": 1, "cluster": "c", "actions": [{"kind": "k" * 50_000_000}]},
        {"format_version": 1, "cluster": ["c" * 50_000_000], "actions": []},
    ):
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(data))
        with pytest.raises(SnapshotError) as raised:
            load_plan_json(path.read_text(), origin=str(path))
        assert str(path) in str(raised.value) and len(str(raised.value)) < 3_000, len(str(raised.value))
