"""Local and Spark engines on the same fleet: identical reports and tables; the local path never
imports pyspark."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from reconciler.drift import engine, spark_job
from reconciler.drift.tables import read_table_rows
from reconciler.errors import ReconcilerError
from reconciler.files.snapshot import load_snapshot
from reconciler.models.desired import DesiredState
from reconciler.plan.planner import PlanOptions
from tests.drift.moving import replicas_moving

WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)


def _never_asked(cluster: str) -> DesiredState:
    raise AssertionError(f"the fleet is refused before {cluster}'s manifests are asked for")


def both_engines(fleet, desired_of, tables: Path, options: PlanOptions = PlanOptions()) -> engine.FleetResult:
    """The fleet's drift from the local engine (tables under `tables`/local) after checking that the
    Spark engine reports the same (tables under `tables`/spark)."""
    local = engine.run_fleet(fleet, desired_of, engine="local", tables=tables / "local", options=options, generated_at=WHEN)
    remote = engine.run_fleet(fleet, desired_of, engine="spark", tables=tables / "spark", options=options, generated_at=WHEN)
    assert (local.engine, remote.engine) == ("local", "spark")
    assert local.report.comparable() == remote.report.comparable()
    return local


def test_spark_and_local_engines_give_identical_reports_and_tables(spark, small_fleet, tmp_path):
    fleet, desired = small_fleet
    options = PlanOptions(ignore_topics=("^svc0[0-2]\\.",))
    a = both_engines(fleet, desired.__getitem__, tmp_path, options).report
    assert [c.cluster for c in a.clusters] == ["cluster-000", "cluster-001", "cluster-002"]
    # The fleet has every kind of finding, so the comparison covers them all.
    counts = [c.counts for c in a.clusters]
    assert all(c.pending_changes and c.unmanaged_topics and c.config_drift and c.pending_truncations for c in counts)
    assert sum(c.data_loss for c in counts) and sum(c.under_replicated + c.offline for c in counts)
    assert all(c.since is not None and c.observed_at is not None and c.since < c.observed_at for c in a.clusters)
    for table in ("drift_items", "pending_truncations"):
        rows = read_table_rows(tmp_path / "local", table)
        assert rows and rows == read_table_rows(tmp_path / "spark", table)
    assert len(read_table_rows(tmp_path / "local", "drift_items")) == sum(c.items for c in counts)


@pytest.mark.parametrize("drain", [[4], [3]])
def test_both_engines_report_moving_replicas_alike(spark, small_fleet, tmp_path, drain):
    """A drained broker (4: a few topics' replicas; 3: every topic's), replication factors changed
    and replicas pinned: the local engine's columnar pass and Spark's per-topic plans agree."""
    fleet, desired = small_fleet
    moving = {c: replicas_moving(d, drain) for c, d in desired.items()}
    local = both_engines(fleet, moving.__getitem__, tmp_path)
    counts = [c.counts for c in local.report.clusters]
    assert all(c.on_drained_brokers for c in counts)
    moves = [c for cluster in local.report.clusters for c in cluster.changes if c.kind.value == "reassign_replicas"]
    assert len(moves) > 5 and any("replication factor 3 -> 2" in c.summary for c in moves)
    assert any(d.code == "replication-factor-change" for c in local.report.clusters for d in c.diagnostics)
    for table in ("drift_items", "pending_truncations"):
        assert read_table_rows(tmp_path / "local", table) == read_table_rows(tmp_path / "spark", table)


def test_spark_engine_plans_one_topic_per_row_inside_arrow_batches(spark, small_fleet):
    fleet, desired = small_fleet
    calls = []

    def desired_for(cluster):
        calls.append(cluster)
        return desired[cluster]

    report = spark_job.run(fleet, desired_for, generated_at=WHEN)
    assert sorted(calls) == sorted(desired) and report.engine == "spark"
    assert sum(c.topics_observed for c in report.clusters) > 3 * 30


def test_local_engine_does_not_import_pyspark(small_fleet):
    fleet, _ = small_fleet
    code = (
        "import sys, json\n"
        "from benchmarks.drift_fleet import synthetic_desired\n"
        "from reconciler.drift.engine import run_fleet\n"
        f"r = run_fleet({str(fleet)!r}, lambda c: synthetic_desired(c, 400, 11), engine='auto')\n"
        "print(json.dumps([r.engine, 'pyspark' in sys.modules, len(r.report.clusters)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )
    assert out.stdout.strip().splitlines()[-1] == '["local", false, 3]'


def test_spark_pays_off_only_with_cores_enough_for_it_to_catch_up():
    # One core: Spark's rate is below the local engine's at any size; on two it catches up late (measured, engine.py).
    assert not any(engine.spark_pays_off(n, cores=1) for n in (10**6, 10**7, 10**9))
    assert not any(engine.spark_pays_off(n, cores=2) for n in (10**6, 3 * 10**6)) and engine.spark_pays_off(10**8, cores=2)
    # More cores: a crossover, lower the more cores there are.
    assert not engine.spark_pays_off(1_000_000, cores=8) and engine.spark_pays_off(3_000_000, cores=8)
    assert engine.spark_pays_off(2_000_000, cores=32) and not engine.spark_pays_off(1_000_000, cores=32)


def test_auto_engine_threshold(small_fleet):
    fleet, _ = small_fleet
    from reconciler.files.fleet import count_partitions, discover_fleet

    latest = [runs[-1].path for runs in discover_fleet(fleet).values()]
    assert [count_partitions(p) for p in latest] == [403, 403, 403]  # 400 + __consumer_offsets' 3
    assert not engine.spark_pays_off(3 * 403, cores=64)
    assert engine.choose_engine("auto", fleet) == "local"
    assert engine.choose_engine("auto", fleet, master="local[2]") == "spark"
    assert engine.choose_engine("local", fleet, master=None) == "local"


def test_the_local_engine_refuses_tables_on_a_filesystem_only_spark_writes_before_it_reads(small_fleet):
    fleet, _ = small_fleet
    with pytest.raises(ReconcilerError, match="writes tables to local directories only, not s3a://b/drift; use --engine spark"):
        engine.run_fleet(fleet, _never_asked, engine="local", tables="s3a://b/drift")


def test_json_snapshots_stay_with_the_local_engine(tmp_path):
    root = Path(__file__).resolve().parents[2]
    state = load_snapshot(root / "manifests" / "snapshots" / "staging-eu.json")
    (tmp_path / "staging-eu.json").write_text(state.to_json())
    assert engine.choose_engine("auto", tmp_path) == "local"
    with pytest.raises(ReconcilerError, match="Parquet snapshots only"):
        engine.run_fleet(tmp_path, _never_asked, engine="spark")


def test_both_engines_report_retention_lowered_out_of_band_alike(spark, tmp_path):
    """Against the manifests (time cut with a lookup the snapshot holds, one without, one offline
    partition) and against the earlier run (size cut, log start moved), in reports and tables."""
    from reconciler.drift.tables import read_table_rows
    from reconciler.files.fleet import write_fleet_snapshot
    from reconciler.plan.retention import time_lookup
    from reconciler.units import epoch_ms
    from tests.factories import desired, have, observed, partition, want

    day, month = 86_400_000, 2_592_000_000
    earlier_at, now_at = WHEN - timedelta(days=1), WHEN
    lookup = time_lookup(epoch_ms(now_at), day)
    cut = have(
        "cut",
        set_on_topic={"retention.ms": str(day)},
        inherited={"cleanup.policy": "delete"},
        size_bytes=1000,
        offsets_by_timestamp={lookup: 30},
    )
    cut = cut.model_copy(update={"partitions": [*cut.partitions[:2], partition(2, leader=-1, log_start=-1, hw=-1)]})
    unread = have("unread", set_on_topic={"retention.ms": str(day)}, size_bytes=1000)
    sized_before = have("sized", set_on_topic={"retention.bytes": "-1"}, size_bytes=1000)
    sized_now = have("sized", set_on_topic={"retention.bytes": "400"}, log_start=10, hw=110, size_bytes=1000)
    d = desired(
        want("cut", configs={"retention.ms": str(month)}), want("unread", configs={"retention.ms": str(month)}), want("sized")
    )
    for state, when in ((observed(cut, unread, sized_before), earlier_at), (observed(cut, unread, sized_now), now_at)):
        write_fleet_snapshot(state.model_copy(update={"taken_at": when}), tmp_path / "fleet")

    local = both_engines(tmp_path / "fleet", {"test": d}.__getitem__, tmp_path)
    [c] = local.report.clusters
    assert [(r.topic, r.against, r.records_since) for r in c.retention] == [
        ("cut", ["manifests"], None),
        ("sized", ["earlier"], 30),
        ("unread", ["manifests"], None),
    ]
    assert c.retention[0].cut.known_records == 60 and c.counts.retention_lowered == 3
    rows = read_table_rows(tmp_path / "local", "retention_lowered")
    assert len(rows) == 9 and rows == read_table_rows(tmp_path / "spark", "retention_lowered")
    assert read_table_rows(tmp_path / "local", "drift_items") == read_table_rows(tmp_path / "spark", "drift_items")


@pytest.mark.parametrize(
    "run, field, value, says",
    [
        (-1, "high_watermark", -5, "partitions[0].high_watermark: must be >= 0"),
        (0, "log_start_offset", 10**6, "partitions[0].log_start_offset: log start offset 1000000 is above the high watermark"),
    ],
)
def test_both_engines_refuse_a_snapshot_whose_row_the_models_refuse(spark, small_fleet, tmp_path, run, field, value, says):
    """A bad value in the latest run's row or in the earlier run's: one error naming the file, the
    topic and the value's path, from either engine, and no report (the Spark engine's error comes
    from its executors, which must not surface as a Python traceback from the worker)."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from reconciler.errors import SnapshotError

    source, desired = small_fleet
    fleet = tmp_path / "fleet"
    shutil.copytree(source, fleet)
    broken = sorted((fleet / "cluster-001").glob("*.parquet"))[run]
    table = pq.read_table(broken)
    rows = table.to_pylist()
    row = next(i for i, r in enumerate(rows) if r["partitions"] and r["topic"].startswith("svc"))
    rows[row]["partitions"][0][field] = value
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), broken)
    topic = rows[row]["topic"]

    for name in ("local", "spark"):
        with pytest.raises(SnapshotError) as refused:
            engine.run_fleet(fleet, desired.__getitem__, engine=name, generated_at=WHEN)
        message = str(refused.value)
        assert message.startswith(f"{broken} is not a valid snapshot (1 problem), so it is refused whole"), (name, message)
        assert f"(topic {topic!r}): {says}" in message or f"topic {topic!r}: {says}" in message, (name, message)
        assert "Traceback" not in message and "PythonException" not in message


def _rename(row: dict, name: str) -> None:
    row["topic"] = name


def _repeat_a_config(row: dict) -> None:
    row["configs"].append({**row["configs"][0], "value": "other"})


@pytest.mark.parametrize(
    "mutate, says",
    [
        (lambda r: _rename(r, "bad name"), "name: not a legal Kafka topic name"),
        (lambda r: _rename(r, ".."), "name: not a legal Kafka topic name"),
        (lambda r: _rename(r, r["topic"] + "\n"), "name: not a legal Kafka topic name"),
        (lambda r: r.update(partitions=[]), "partitions"),
        (lambda r: r["configs"][0].update(source=99), "source"),
        (lambda r: r["configs"][0].update(key=""), "configs"),
        (_repeat_a_config, "listed more than once"),
        (lambda r: r.update(authorized_operations=["BOGUS"]), "authorized_operations"),
    ],
)
def test_both_engines_refuse_a_row_whose_topic_fields_the_models_refuse(spark, small_fleet, tmp_path, mutate, says):
    """The rules of a topic's own fields (name, partitions present, configs, operations), in a row
    otherwise clean: the Spark engine's SQL filter must not pass it as quiet, the local engine's
    column check must not read it otherwise than the models."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from reconciler.errors import SnapshotError

    source, desired = small_fleet
    fleet = tmp_path / "fleet"
    shutil.copytree(source, fleet)
    broken = sorted((fleet / "cluster-001").glob("*.parquet"))[-1]
    table = pq.read_table(broken)
    rows = table.to_pylist()
    row = next(r for r in rows if r["partitions"] and r["configs"] and r["topic"].startswith("svc"))
    mutate(row)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), broken)

    for name in ("local", "spark"):
        with pytest.raises(SnapshotError) as refused:
            engine.run_fleet(fleet, desired.__getitem__, engine=name, generated_at=WHEN)
        message = str(refused.value)
        assert message.startswith(f"{broken} is not a valid snapshot"), (name, message)
        assert says in message and "Traceback" not in message, (name, message)


def test_both_engines_name_a_file_cut_short_in_one_paragraph(spark, small_fleet, tmp_path):
    import shutil

    from reconciler.errors import SnapshotError

    source, desired = small_fleet
    fleet = tmp_path / "fleet"
    shutil.copytree(source, fleet)
    broken = sorted((fleet / "cluster-002").glob("*.parquet"))[-1]
    broken.write_bytes(broken.read_bytes()[:-100])  # cut short: no footer
    for name in ("local", "spark"):
        with pytest.raises(SnapshotError) as refused:
            engine.run_fleet(fleet, desired.__getitem__, engine=name, generated_at=WHEN)
        message = str(refused.value)
        assert message.startswith(f"cannot read Parquet snapshot {broken}: "), (name, message)
        assert "magic bytes not found" in message, (name, message)
        assert "\n" not in message and "Py4J" not in message and "Traceback" not in message, (name, message)


@pytest.mark.parametrize(
    "layout, says",
    [
        ({}, "is not a directory of snapshots"),
        ({"notes.txt": b"x"}, "holds no snapshots"),
        ({"prod-eu/latest.parquet": b"x"}, "are named <cluster>/<YYYYMMDDTHHMMSSZ>.parquet"),
    ],
)
def test_spark_engine_checks_a_local_fleet_directory_as_the_local_engine_does(tmp_path, layout, says):
    """Before Spark starts: the same words for a missing, empty or misnamed fleet from both engines."""
    fleet = tmp_path / "fleet"
    for name, data in layout.items():
        (fleet / name).parent.mkdir(parents=True, exist_ok=True)
        (fleet / name).write_bytes(data)
    messages = []
    for name in ("local", "spark"):
        with pytest.raises(ReconcilerError, match=says) as refused:
            engine.run_fleet(fleet, _never_asked, engine=name)
        messages.append(str(refused.value))
    assert messages[0] == messages[1]


def test_a_python_worker_s_failure_is_its_last_line_not_a_file_problem():
    from pyspark.errors import PythonException

    from reconciler.errors import SnapshotError

    failed = PythonException(
        message="An exception was thrown from the Python worker:\nTraceback (most recent call "
        "last):\n  File \"job.py\", line 9, in run\n    row['x']\nKeyError: 'x'\n"
    )
    error = spark_job._spark_failure("/fleet", failed)
    assert isinstance(error, ReconcilerError) and not isinstance(error, SnapshotError)
    assert str(error).startswith("the Spark engine's Python workers failed on the fleet under /fleet: KeyError: 'x'. ")
    assert "Traceback" not in str(error) and "--engine local" in str(error)


def test_both_engines_refuse_a_file_whose_rows_name_another_cluster_than_its_directory(spark, small_fleet, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    source, desired = small_fleet
    fleet = tmp_path / "fleet"
    shutil.copytree(source, fleet)
    moved = sorted((fleet / "cluster-001").glob("*.parquet"))[-1]
    table = pq.read_table(moved)
    column = table.schema.get_field_index("cluster")
    pq.write_table(table.set_column(column, "cluster", pa.array(["cluster-000"] * table.num_rows)), moved)
    messages = []
    for name in ("local", "spark"):
        with pytest.raises(ReconcilerError) as refused:
            engine.run_fleet(fleet, desired.__getitem__, engine=name, generated_at=WHEN)
        messages.append(str(refused.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{moved} is not a valid snapshot (")
    assert "row 0 (topic '__consumer_offsets'): cluster 'cluster-000' differs from the snapshot's 'cluster-001'" in messages[0]


def test_spark_engine_reads_and_writes_through_a_filesystem_only_hadoop_knows(spark, small_fleet, tmp_path):
    """viewfs:// with a mount table: the driver must not open a snapshot itself (pyarrow has no
    viewfs), so headers and runs come through Spark, and the tables go out through it."""
    fleet, desired = small_fleet
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("fs.viewfs.mounttable.drifttest.link./fleet", fleet.resolve().as_uri())
    hadoop.set("fs.viewfs.mounttable.drifttest.link./out", (tmp_path / "spark").as_uri())
    (tmp_path / "spark").mkdir()
    local = engine.run_fleet(fleet, desired.__getitem__, engine="local", tables=tmp_path / "local", generated_at=WHEN)
    remote = engine.run_fleet("viewfs://drifttest/fleet", desired.__getitem__, tables="viewfs://drifttest/out", generated_at=WHEN)
    assert remote.engine == "spark"  # a URI: only Spark reads it
    assert local.report.comparable() == remote.report.comparable()
    for table in ("drift_items", "pending_truncations", "changes"):
        assert read_table_rows(tmp_path / "local", table) == read_table_rows(tmp_path / "spark", table), table
    with pytest.raises(ReconcilerError, match="the local engine reads local directories only, not viewfs://drifttest/fleet"):
        engine.run_fleet("viewfs://drifttest/fleet", desired.__getitem__, engine="local")


def test_spark_engine_names_a_file_of_other_column_types_on_a_filesystem_only_hadoop_knows(spark, small_fleet, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from reconciler.errors import SnapshotError

    source, desired = small_fleet
    fleet = tmp_path / "fleet"
    shutil.copytree(source, fleet)
    odd = sorted((fleet / "cluster-002").glob("*.parquet"))[-1]
    table = pq.read_table(odd)
    pq.write_table(table.set_column(table.schema.get_field_index("topic_id"), "topic_id", pa.array([1] * len(table))), odd)
    # Through viewfs, as on cluster storage: a local fleet's column types are checked before Spark starts.
    spark.sparkContext._jsc.hadoopConfiguration().set("fs.viewfs.mounttable.typetest.link./fleet", fleet.resolve().as_uri())
    with pytest.raises(SnapshotError) as refused:
        engine.run_fleet("viewfs://typetest/fleet", desired.__getitem__, engine="spark", generated_at=WHEN)
    message = str(refused.value)
    assert message.startswith(f"viewfs://typetest/fleet/cluster-002/{odd.name} is not a valid snapshot"), message
    assert "column topic_id is int64; a snapshot's is string" in message


def test_spark_reads_a_fleet_whose_path_holds_glob_characters_a_comma_and_what_a_uri_escapes(spark, small_fleet, tmp_path):
    """Hadoop takes a path given to it as a glob, and a comma in it as a list's separator; it names
    files without percent-encoding them (`?`, `#` and `%` are the file's own): the engine hands
    each listed file over as itself and reads its cluster and run off it as the local engine does."""
    import shutil

    fleet, desired = small_fleet
    odd = tmp_path / "fleets, [eu]{1} *? #2 100%41" / "snapshots"
    shutil.copytree(fleet, odd)
    both_engines(odd, desired.__getitem__, tmp_path / "tables")


def test_a_workers_first_task_leaves_what_outlives_it_out_of_later_collections_and_keeps_no_garbage():
    """After each task, Spark's Python daemon collects the worker's whole heap; the first task
    freezes what outlives it so that walk is short, and collects first, so that its cyclic garbage
    is not frozen for good (a frozen cycle is never collected). Later tasks freeze nothing: what
    of theirs is alive then (Spark's streams of the task) would be kept for good."""
    import gc
    import weakref

    class Node:
        pass

    cycle, kept = Node(), Node()
    cycle.self = cycle  # type: ignore[attr-defined]
    gone = weakref.ref(cycle)
    del cycle
    assert gc.get_freeze_count() == 0
    try:
        spark_job._keep_out_of_collections()
        assert gone() is None
        assert all(o is not kept for o in gc.get_objects())  # out of the collector's walks
        frozen, later = gc.get_freeze_count(), Node()
        spark_job._keep_out_of_collections()
        assert gc.get_freeze_count() <= frozen  # nothing more frozen (frozen objects may be freed meanwhile)
        assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_small_clusters_share_a_task_and_large_ones_have_their_own_the_largest_first():
    """Spark's own cost of a Python task is more than a small cluster's work: small clusters share
    a task up to TASK_BYTES of latest snapshots, fewer where the fleet is small (three tasks a
    core or more), and a large cluster keeps a task to itself."""
    most = spark_job.TASK_BYTES
    big = [spark_job.ClusterRuns(f"big-{i}", None, most * 2) for i in range(2)]
    small = [spark_job.ClusterRuns(f"small-{i}", f"earlier-{i}", most // 8) for i in range(40)]
    tasks = spark_job._tasks(small + big, cores=2)
    assert sorted(r.latest for t in tasks[:2] for r in t) == ["big-0", "big-1"] and len(tasks[0]) == len(tasks[1]) == 1
    assert [len(t) for t in tasks[2:]] == [8] * 5
    for cores, count in ((1, 4), (2, 8), (4, 8)):
        few = spark_job._tasks(small[:8], cores)  # one TASK_BYTES in all: three tasks a core, or a cluster each
        assert len(few) == count and [r for t in few for r in t] == small[:8]
