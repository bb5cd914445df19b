"""The fleet drift pipeline on Apache Spark: the only module that imports pyspark.

Data flow: the fleet's Parquet snapshots (one row per topic: docs/snapshot-format.md) -> the latest run of
each cluster, joined (outer) with the previous run's topics (for data-loss signals and the change
log, which lists topics deleted since) and with the manifests' topics -> a Spark SQL expression
(`spark_clean`) marks the topics proven clean -> `mapInArrow`: each Arrow batch is one Python call,
which tallies the clean topics per cluster with Arrow's own aggregation and runs the pure planner
only on the others, each on the cluster restricted to that topic, classified by
`compute.topic_drift` -> per-topic findings and per-batch tallies. The driver collects only topics
with findings (or changes) plus per-cluster totals and assembles the same `DriftReport` the local
engine builds; the flat tables are written by Spark from the executors.

No Python runs per clean topic, and nothing is kept per topic but findings: memory and Python time
grow with what differs from Git, not with the fleet.

Run it on a Spark cluster with `reconcile drift --fleet PATH --engine spark --master spark://...`
or by handing `reconciler/spark_submit.py` to spark-submit; the reconciler package and its
dependencies must be importable on the executors (pip install it there, or ship a packed
virtualenv with `--archives`), and PYSPARK_PYTHON (`spark.pyspark.python`) must name that
interpreter.
"""

from __future__ import annotations

import functools
import json
import os
import sys

if __name__ == "__main__":  # pragma: no cover - this file was once the one handed to spark-submit
    sys.exit("reconciler/drift/spark_job.py is not a job file; hand reconciler/spark_submit.py to spark-submit.")

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
from py4j.protocol import Py4JError, Py4JJavaError
from pydantic import ValidationError
from pyspark.broadcast import Broadcast
from pyspark.errors import PySparkException, PythonException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from reconciler.drift import spark_clean, spark_failures, spark_session
from reconciler.drift.by_owner import topic_owners
from reconciler.drift.compute import _items, assemble, disk_items, drift_one_topic
from reconciler.drift.disk import MAYBE_UNBOUNDED_SQL, disk_findings
from reconciler.drift.idle_topics import row_idle
from reconciler.drift.model import DiskFinding, DriftItem, DriftReport, TopicDrift
from reconciler.drift.spark_options import EXECUTOR_WAIT_S
from reconciler.drift.tables import ITEM_FIELDS
from reconciler.errors import MAX_PROBLEMS, ReconcilerError, SnapshotError, problem_line, shown_text
from reconciler.files.snapshot_parquet import ABSENT, HIDDEN, METADATA_KEY, header_of, topic_from_row, utc
from reconciler.files.snapshot_problems import SNAPSHOT_KEYS, explain, invalid_snapshot
from reconciler.models.desired import DesiredState, DesiredTopic
from reconciler.models.observed import LogDirCapacity, ObservedState, ObservedTopic
from reconciler.plan.planner import PlanOptions

# A topic with findings, or (topic null) a batch's tally of a cluster's other topics: how many
# were read, how many declared, their partitions; or a topic whose row the models refuse (`refused`);
# or (`disk`) a topic that may have no retention limit, as the disk findings read it.
_OUT_FIELDS = (
    "cluster string, topic string, observed int, managed int, partitions bigint, empty boolean, "
    "drift string, items array<struct<kind:string,topic:string,partition:int,key:string,detail:string,"
    "records:bigint,bytes:bigint>>, truncations array<struct<topic:string,partition:int,leader:int,"
    "leader_epoch:int,log_start_offset:bigint,high_watermark:bigint,target_offset:bigint,records:bigint,"
    "estimated_bytes:bigint>>, retention array<struct<topic:string,partition:int,against:string,"
    "log_start_offset:bigint,high_watermark:bigint,keep_from_offset:bigint,records:bigint,bytes:bigint,"
    "unknown:string>>, changes array<struct<kind:string,topic:string,partition:int,key:string,old:string,"
    "new:string,source:string,count:int,sensitive:boolean>>, "
    "refused struct<file:string,count:int,problems:array<string>>, disk string"
)

TOPICS_PER_TASK = 20_000  # ~200k partitions: one task's rows and findings stay in the tens of MiB


def run(
    fleet: str | Path,
    desired_for: Callable[[str], DesiredState],
    options: PlanOptions = PlanOptions(),
    master: str | None = None,
    tables: str | Path | None = None,
    generated_at: datetime | None = None,
    conf: Mapping[str, str] | None = None,
    log_level: str | None = None,
    executor_wait_s: float = EXECUTOR_WAIT_S,
    partitions: int | None = None,
) -> DriftReport:
    """`partitions`: the fleet's latest runs' when known (a local fleet), for the session's settings."""
    generated_at = generated_at or datetime.now(timezone.utc)
    watch = None
    try:
        spark = spark_session.session(master, conf, log_level, partitions)
        with spark_session.ExecutorWatch(spark, executor_wait_s) as watch:
            found = fleet_inputs(spark, fleet, desired_for, options)
            shared = spark.sparkContext.broadcast(for_the_executors(found, options))
            results = for_the_planner(found).mapInArrow(_drift_batches(shared), _OUT_FIELDS)
            if tables:
                results = results.persist()  # read twice: for the report, then for the tables
            try:
                return _collect(results, found, tables, generated_at)
            finally:
                results.unpersist()
                shared.unpersist()
    except (PySparkException, Py4JError) as e:
        if watch is not None and watch.starved is not None:
            raise ReconcilerError(watch.starved) from e
        if os.environ.get("RECONCILER_DEBUG"):
            raise
        raise _spark_failure(fleet, e, _executors_python()) from None


def for_the_executors(found: FleetInputs, options: PlanOptions) -> dict[str, Any]:
    """What every task reads (broadcast once): each cluster's desired state without its topics (a
    row brings its own topic, column `want`), the options' ignore patterns, each cluster's `whole`."""
    return {
        "desired": {c: d.model_dump_json(exclude={"topics"}) for c, d in found.desired.items()},
        "ignore": list(options.ignore_topics),
        "meta": found.whole,
    }


def _executors_python() -> str:
    return os.environ.get("PYSPARK_PYTHON", "python3")


def _spark_failure(fleet: str | Path, error: PySparkException | Py4JError, executors_python: str = "python3") -> ReconcilerError:
    """What Spark (the JVM, or a Python worker) failed on, in one paragraph instead of its stack."""
    java = getattr(error, "java_exception", None)
    text = spark_session.message_of(error)
    if java is not None and isinstance(error, Py4JJavaError):
        text = f"{text}\n{_whole(error)}"  # its stack's causes hold a Python worker's traceback
    cause = spark_failures.cause_of(text, executors_python)
    if cause is not None:
        if cause.about_files:
            return SnapshotError(cause.message.replace("some file", _unmerged_file(fleet) or "some file", 1))
        return ReconcilerError(cause.message)
    said = spark_failures.last_words(text, isinstance(error, PythonException)) or type(error).__name__
    kept = spark_session.keep_log()
    log = f" Spark's log: {kept}." if kept else ""
    if isinstance(error, PythonException):  # the planner's side, on the executors: not a file Spark read
        return ReconcilerError(
            f"the Spark engine's Python workers failed on the fleet under {fleet}: {said}. Run the same command "
            f"with --engine local, which reads and checks each snapshot itself, to see which file or topic it is. "
            f"Nothing was reported.{log}"
        )
    if not isinstance(error, PySparkException) and java is None:  # the gateway itself: the JVM died or was stopped
        return ReconcilerError(
            f"the Spark engine stopped before it finished the fleet under {fleet}: {said}. Run again with "
            f"RECONCILER_DEBUG=1 to see Spark's log. Nothing was reported.{log}"
        )
    return SnapshotError(
        f"the Spark engine failed on the fleet under {fleet}: {said}. A file Spark cannot read (not Parquet, cut "
        "short, or with columns of other types than a snapshot's) is the usual cause: write snapshots with "
        "`reconcile snapshot --format parquet`; `reconcile drift --fleet ... --engine local` checks each file and "
        f"names the bad one and its bad values. Nothing was reported.{log}"
    )


def _whole(error: Py4JJavaError) -> str:
    try:
        return str(error)
    except Py4JError:
        return ""


def _unmerged_file(fleet: str | Path) -> str | None:
    """The snapshot whose column types differ from most of the fleet's (read through Spark, one
    footer at a time: only once the fleet failed to merge)."""
    try:
        spark = spark_session.session()
        files = [r["path"] for r in _fleet_files(spark, fleet).collect()]
        types: dict[str, dict[str, list[str]]] = {}
        for file in files:
            for field in spark.read.parquet(file).schema.fields:
                types.setdefault(field.name, {}).setdefault(field.dataType.simpleString(), []).append(file)
    except (PySparkException, Py4JError):
        return None
    odd = [min(files_of) for kinds in types.values() if len(kinds) > 1 for files_of in sorted(kinds.values(), key=len)[:-1]]
    return _shown_path(min(odd)) if odd else None


def fleet_inputs(
    spark: SparkSession, fleet: str | Path, desired_for: Callable[[str], DesiredState], options: PlanOptions = PlanOptions()
) -> FleetInputs:
    """The fleet's rows, each with `clean` (no Python has seen them yet), and what the job needs
    of each cluster, read on the driver: its runs, its snapshot's header, its desired state."""
    # mergeSchema: files written before the rights columns existed read them as null.
    snapshots = _with_rights_columns(
        spark.read.option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.parquet")
        .option("mergeSchema", "true")
        .parquet(str(fleet))
    )
    counted = (
        snapshots.groupBy("cluster", "run", "cluster_id", "sizes_refused", F.input_file_name().alias("file")).count().collect()
    )
    if not counted:
        raise SnapshotError(
            f"{fleet} holds no Parquet snapshots; the Spark engine reads "
            "<cluster>/<run>.parquet files written by `reconcile snapshot --format parquet`."
        )
    misplaced = sorted((r["file"], r["cluster"]) for r in counted if r["cluster"] != _cluster_directory(r["file"]))
    if misplaced:
        file, cluster = misplaced[0]
        more = f" ({len(misplaced) - 1} more such file(s))" if len(misplaced) > 1 else ""
        raise SnapshotError(
            f"{_shown_path(file)} holds rows of cluster {shown_text(repr(cluster), 60)} in the "
            f"directory of cluster {shown_text(repr(_cluster_directory(file)), 60)}, so it is refused "
            f"whole and nothing ran{more}. A fleet's snapshots are <cluster>/<run>.parquet as "
            "`reconcile snapshot --format parquet` writes them; do not edit or move snapshots by hand."
        )
    undated = sorted({r["cluster"] for r in counted if r["run"] is None})
    if undated:
        raise SnapshotError(
            f"{fleet} holds Parquet snapshots without a run time (column `run`) for "
            f"{shown_text(', '.join(map(str, undated)), 200)}; write snapshots with "
            "`reconcile snapshot --format parquet`."
        )
    by_cluster: dict[str, list[tuple[datetime, str | None, str | None, str]]] = {}
    for r in sorted(counted, key=lambda r: (r["cluster"], utc(r["run"]), r["cluster_id"] or "")):
        by_cluster.setdefault(r["cluster"], []).append((utc(r["run"]), r["cluster_id"], r["sizes_refused"], r["file"]))
    desired = {cluster: desired_for(cluster) for cluster in by_cluster}  # fails early on unknown clusters
    meta = {
        c: _ClusterRun(
            run=r[-1][0],
            cluster_id=r[-1][1],
            since=r[-2][0] if len(r) > 1 else None,
            sizes_refused=r[-1][2],
            file=r[-1][3],
            earlier_file=r[-2][3] if len(r) > 1 else None,
        )
        for c, r in by_cluster.items()
    }
    whole = {
        c: {
            "cluster_id": m.cluster_id,
            "run": m.run.isoformat(),
            "compare": m.since is not None,
            "file": m.file,
            "earlier_file": m.earlier_file,
            **_brokers_and_reassignments(spark, m.file),
        }
        for c, m in meta.items()
    }
    facts = [
        spark_clean.cluster_row(
            c, desired[c], _cluster_checks(c, whole[c]), whole[c]["compare"], whole[c]["reassignments"], options.ignore_topics
        )
        for c in meta
    ]
    topics = sum(r["count"] for r in counted if utc(r["run"]) == meta[r["cluster"]].run)
    return FleetInputs(
        rows=_inputs(spark, snapshots, desired, meta, facts, _parallelism(spark, topics)),
        meta=meta,
        whole=whole,
        desired=desired,
        topics=topics,
    )


_RIGHTS_COLUMNS = {
    "authorized_operations": "array<string>",
    "status": "string",
    "cluster_authorized_operations": "array<string>",
    "sizes_refused": "string",
    "activity": "struct<read_at_ms: bigint, partitions: array<struct<partition: int, newest_timestamp: bigint, "
    "newest_offset: bigint, log_start_offset: bigint, high_watermark: bigint>>, groups: array<struct<group: string, "
    "state: string, committed: array<struct<partition: int, offset: bigint>>>>, size_bytes: bigint, unknown: array<string>>",
}


def _with_rights_columns(snapshots: DataFrame) -> DataFrame:
    """A fleet of snapshots all from before the rights columns: the columns, null."""
    for name, kind in _RIGHTS_COLUMNS.items():
        if name not in snapshots.columns:
            snapshots = snapshots.withColumn(name, F.lit(None).cast(kind))
    return snapshots


@dataclass(frozen=True)
class _ClusterRun:
    """The run a cluster is reported on, and the run before it (data-loss signals, the change log)."""

    run: datetime
    cluster_id: str | None
    since: datetime | None
    sizes_refused: str | None = None  # the latest run's
    file: str = ""  # the latest run's snapshot
    earlier_file: str | None = None  # the run before's


@dataclass(frozen=True)
class FleetInputs:
    """What the job plans on: `rows`, one per (cluster, topic) with its earlier run's columns and
    `clean` (`spark_clean`); each cluster's runs (`meta`) and what every row of it shares (`whole`:
    its id, run, brokers, reassignments in progress, whether it has an earlier run)."""

    rows: DataFrame
    meta: Mapping[str, _ClusterRun]
    whole: Mapping[str, Mapping[str, Any]]
    desired: Mapping[str, DesiredState]
    topics: int  # in the latest runs


def _brokers_and_reassignments(spark: SparkSession, snapshot_file: str) -> dict[str, Any]:
    """What the planner needs of the whole cluster and the rows do not carry (its brokers, to place
    replicas on; reassignments in progress), from the latest snapshot's header: read once per
    cluster on the driver and broadcast."""
    header = header_of(_footer_metadata(spark, snapshot_file), _shown_path(snapshot_file))
    return {
        "brokers": header.get("brokers") or [],
        "reassignments": header.get("reassignments") or {},
        "log_dirs": header.get("log_dirs") or {},
    }


def _footer_metadata(spark: SparkSession, file: str) -> str | None:
    """A Parquet file's snapshot header (key-value metadata), read by Spark's own Parquet reader
    through Hadoop's FileSystem with the session's settings: any filesystem Spark reads the fleet
    from (HDFS, s3a://, viewfs://, ...), not only those pyarrow knows."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its JVM
    hadoop = jvm.org.apache.parquet.hadoop
    source = hadoop.util.HadoopInputFile.fromPath(jvm.org.apache.hadoop.fs.Path(file), spark._jsc.hadoopConfiguration())
    reader = hadoop.ParquetFileReader.open(source)
    try:
        value = reader.getFooter().getFileMetaData().getKeyValueMetaData().get(METADATA_KEY.decode())
    finally:
        reader.close()
    return None if value is None else str(value)


def _fleet_files(spark: SparkSession, fleet: str | Path) -> DataFrame:
    """The fleet's Parquet files (column `path`), listed by Spark: their contents are not read."""
    return (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.parquet")
        .load(str(fleet))
        .select("path")
        .orderBy("path")
    )


def _cluster_checks(cluster: str, whole: Mapping[str, Any]) -> bool:
    """Whether the models accept the cluster's part of every row's state (its name, id, run and
    brokers): if not, every row is refused by the planner's input as before, so none is clean."""
    from pydantic import ValidationError

    try:
        ObservedState(
            cluster=cluster,
            cluster_id=whole["cluster_id"],
            taken_at=datetime.fromisoformat(whole["run"]),
            brokers=whole["brokers"],
        )
    except ValidationError:
        return False
    return True


def _disk(found: FleetInputs, rows: Mapping[str, list[str]]) -> dict[str, list[DiskFinding]]:
    """Each cluster's disk findings (`reconciler.drift.disk`), on the driver: the header's log
    directories, and the topics that may have no limit (few; `rows`: each as the executors gave it,
    the topic now and in the earlier run, as JSON)."""
    out = {}
    for cluster, m in found.meta.items():
        now, before = [], {}
        for text in rows.get(cluster, []):
            topic, earlier = json.loads(text)
            now.append(ObservedTopic.model_validate(topic))
            if earlier is not None:
                before[topic["name"]] = ObservedTopic.model_validate(earlier)
        log_dirs = {
            int(b): [LogDirCapacity.model_validate(d) for d in dirs] for b, dirs in found.whole[cluster]["log_dirs"].items()
        }
        limit = found.desired[cluster].policy.max_disk_usage
        out[cluster] = disk_findings(log_dirs, limit, m.run, now, before, m.since)
    return out


def _collect(results: DataFrame, found: FleetInputs, tables: str | Path | None, generated_at: datetime) -> DriftReport:
    """The driver's part, one pass over the executors' rows (findings, tallies, refusals, the
    disk's few topics: never a row per clean topic): totals and the topics with findings,
    assembled per cluster; or, when the models refused a row, the error the local engine gives
    for that snapshot."""
    meta = found.meta
    totals: dict[str, list[int]] = {c: [0, 0, 0] for c in meta}
    drifted: dict[str, list[TopicDrift]] = {c: [] for c in meta}
    disk_rows: dict[str, list[str]] = {}
    refused: dict[str, list[tuple[list[str], int]]] = {}
    columns = ("cluster", "observed", "managed", "partitions", "empty", "drift", "refused", "disk")
    for r in results.select(*columns).toLocalIterator():
        cluster = r["cluster"]
        if r["refused"] is not None:
            refused.setdefault(r["refused"]["file"], []).append((list(r["refused"]["problems"]), r["refused"]["count"]))
            continue
        if r["disk"] is not None:
            disk_rows.setdefault(cluster, []).append(r["disk"])
            continue
        counts = totals[cluster]
        counts[0] += r["observed"]
        counts[1] += r["managed"]
        counts[2] += r["partitions"]
        if not r["empty"]:
            drifted[cluster].append(TopicDrift.model_validate_json(r["drift"]))
    if refused:
        # One file's problems (the first by name), as the local engine reports the first bad snapshot it reads.
        file = min(refused)
        rows = sorted(refused[file])[:MAX_PROBLEMS]
        problems = sorted(p for problems, _ in rows for p in problems)[:MAX_PROBLEMS]
        raise invalid_snapshot(_shown_path(file), sum(count for _, count in refused[file]), problems)
    disk = _disk(found, disk_rows)
    clusters = []
    for cluster, m in sorted(meta.items()):
        idle_after = found.desired[cluster].policy.idle_after_ms
        report = assemble(
            cluster, m.cluster_id, m.run, m.since, drifted[cluster], m.sizes_refused, disk.get(cluster, []), idle_after
        )
        observed, managed, partitions = totals[cluster]
        clusters.append(
            report.model_copy(update={"topics_observed": observed, "topics_managed": managed, "partitions_observed": partitions})
        )
    if tables:
        owners = [(c, topic, owner) for c in meta for topic, owner in topic_owners(found.desired[c]).items()]
        _write_tables(
            results, str(tables), generated_at, meta, [i for c in clusters for i in disk_items(c.cluster, c.disk)], owners
        )
    return DriftReport(generated_at=generated_at, engine="spark", clusters=clusters)  # sorted by cluster


def _inputs(
    spark: SparkSession,
    snapshots: DataFrame,
    desired: Mapping[str, DesiredState],
    meta: Mapping[str, _ClusterRun],
    facts: list[tuple],
    parallelism: int,
) -> DataFrame:
    """One row per (cluster, topic), in `parallelism` partitions by it: the latest run's topic row,
    the previous run's (a topic only that run has gets a row of its own: deleted since), and a row
    for every declared topic the cluster has in neither; `clean` when Spark SQL proves it has no
    finding (`spark_clean`)."""
    latest = spark.createDataFrame([(c, m.run) for c, m in meta.items()], "cluster string, run timestamp")
    earlier_runs = [(c, m.since) for c, m in meta.items() if m.since is not None]
    parts = [snapshots.join(F.broadcast(latest), ["cluster", "run"]).drop("run")]
    if earlier_runs:
        parts.append(
            snapshots.join(
                F.broadcast(spark.createDataFrame(earlier_runs, "cluster string, run timestamp")), ["cluster", "run"]
            ).select(
                "cluster",
                "topic",
                F.col("topic_id").alias("earlier_topic_id"),
                F.col("configs").alias("earlier_configs"),
                F.transform("partitions", _earlier_partition).alias("earlier_partitions"),
                F.col("activity").alias("earlier_activity"),
            )
        )
    # The declared topics the cluster has in neither run get rows of their own (nulls but for the names).
    # Handed to the JVM a cluster at a time: the driver holds one cluster's rows, not the fleet's.
    parts += [spark.createDataFrame(spark_clean.desired_rows(c, d), spark_clean.DESIRED_SCHEMA) for c, d in desired.items()]
    # The runs' and the manifests' rows of a topic meet in one shuffle, into the partitions the
    # planner's tasks read (a full outer join per source shuffled the wide rows once per join);
    # each column comes from one source, the others hold null there.
    rows = functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)
    keys = ("cluster", "topic")
    current = (
        rows.repartition(parallelism, *keys)
        .groupBy(*keys)
        .agg(*[F.first(c, ignorenulls=True).alias(c) for c in rows.columns if c not in keys])
    )
    if not earlier_runs:
        current = (
            current.withColumn("earlier_topic_id", F.lit(None).cast("string"))
            .withColumn("earlier_configs", F.lit(None).cast(snapshots.schema["configs"].dataType))
            .withColumn("earlier_partitions", F.lit(None).cast(snapshots.schema["partitions"].dataType))
            .withColumn("earlier_activity", F.lit(None).cast(snapshots.schema["activity"].dataType))
        )
    current = current.join(F.broadcast(spark.createDataFrame(facts, spark_clean.CLUSTER_SCHEMA)), "cluster", "left")
    return current.withColumn("clean", spark_clean.clean())


def _earlier_partition(p: Column) -> Column:
    """What the data-loss signals, out-of-band retention changes and the change log read of a
    partition in the earlier run; the other fields empty, all of them in the snapshot's order (so
    the files' fast path builds the model: a field missing costs pydantic's default lookup)."""
    return F.struct(
        p["partition"].alias("partition"),
        p["leader"].alias("leader"),
        p["leader_epoch"].alias("leader_epoch"),
        p["replicas"].alias("replicas"),
        F.array().cast("array<int>").alias("isr"),
        F.array().cast("array<int>").alias("offline_replicas"),
        p["log_start_offset"].alias("log_start_offset"),
        p["high_watermark"].alias("high_watermark"),
        F.lit(None).cast("bigint").alias("size_bytes"),
        F.lit(None).cast("bigint").alias("epoch_end_offset"),
        F.array().cast("array<struct<timestamp:bigint,offset:bigint>>").alias("offsets_by_timestamp"),
    )


def for_the_planner(found: FleetInputs) -> DataFrame:
    """The rows as the Python side reads them: of a clean topic only what the totals count (its
    other columns stay out of the Arrow batches, but for a topic the disk findings read)."""
    clean = F.col("clean")
    read = F.col("partitions").isNotNull() & F.col("status").isNull()  # as the planner's input is built
    unbounded = read & F.expr(MAYBE_UNBOUNDED_SQL)
    return found.rows.select(
        "cluster",
        "topic",
        "clean",
        F.coalesce(unbounded, F.lit(False)).alias("unbounded"),
        F.when(~clean, F.expr(spark_clean.QUIET_SQL)).alias("quiet"),
        F.coalesce("declared", F.lit(False)).alias("declared"),
        F.when(read, F.size("partitions")).otherwise(0).alias("partition_count"),
        *[F.when(~clean | unbounded, F.col(c)).alias(c) for c in _PLANNED_COLUMNS],
    )


def _parallelism(spark: SparkSession, topics: int) -> int:
    """The planner's tasks: each task's findings reach the driver as one result (toLocalIterator),
    and with a few huge tasks a fleet of millions of partitions loses results in the block
    manager, so tasks stay bounded."""
    return max(spark.sparkContext.defaultParallelism, -(-topics // TOPICS_PER_TASK))


_PLANNED_COLUMNS = (
    "topic_id",
    "internal",
    "configs",
    "partitions",
    "group_offsets",
    *_RIGHTS_COLUMNS,
    "earlier_topic_id",
    "earlier_configs",
    "earlier_partitions",
    "earlier_activity",
    "want",
    "want_shape",
)


def _cluster_directory(file: str) -> str:
    """The cluster a fleet's file belongs to by its place: the directory it is in."""
    return PurePosixPath(unquote(urlparse(file).path)).parent.name


def _shown_path(file: str) -> str:
    """A file as Spark names it (a URI), as the local engine would for a local file."""
    parsed = urlparse(file)
    return unquote(parsed.path) if parsed.scheme == "file" else file


def _drift_batches(shared: Broadcast[dict[str, Any]]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function Spark runs on each partition's Arrow batches (on the executors)."""

    def run_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task = TaskDrift(shared.value)
        schema = _arrow_out_schema()
        for batch in batches:
            yield pa.RecordBatch.from_pylist(task.batch(batch), schema=schema)

    return run_batches


# What a quiet topic's findings follow from, besides its cluster (spark_clean.QUIET_SQL): these
# columns of its row and whether the manifests protect it (by its name).
_SHAPE_COLUMNS = (
    "want_shape",
    "internal",
    "configs",
    "authorized_operations",
    "earlier_configs",
    "cluster_authorized_operations",
    "sizes_refused",
)


@dataclass
class _Shape:
    """A quiet shape's findings, planned on its first topic (`topic`, as a model), which hold for
    every topic of the shape renamed when `name_free` (`reconciler.drift.quiet`)."""

    drift: TopicDrift | None
    topic: ObservedTopic | None
    name_free: bool


class TaskDrift:
    """One task's work on its Arrow batches: the clean topics tallied, the others' findings (a quiet
    shape planned once per task, the rest each on its own), the disk's topics as models."""

    def __init__(self, value: Mapping[str, Any]):
        self.value = value
        self.options = PlanOptions(ignore_topics=tuple(value["ignore"]))
        self.desired: dict[str, DesiredState] = {}
        self.shapes: dict[tuple, _Shape] = {}

    def cluster(self, cluster: str) -> DesiredState:
        desired = self.desired.get(cluster)
        if desired is None:
            desired = self.desired[cluster] = DesiredState.model_validate_json(self.value["desired"][cluster])
        return desired

    def batch(self, batch: pa.RecordBatch) -> list[dict[str, Any]]:
        import pyarrow.compute as pc

        # cluster -> [topics read, topics declared, partitions] of the topics without findings
        tally: dict[str, list[int]] = {}
        proven = pa.Table.from_batches([batch.filter(batch.column("clean"))])
        for r in (
            proven.group_by("cluster")
            .aggregate([("topic", "count"), ("declared", "sum"), ("partition_count", "sum")])
            .to_pylist()
        ):
            tally[r["cluster"]] = [r["topic_count"], r["declared_sum"] or 0, r["partition_count_sum"] or 0]
        meta = self.value["meta"]
        disk = (_disk_row(row, meta[row["cluster"]]) for row in batch.filter(batch.column("unbounded")).to_pylist())
        out = [row for row in disk if row is not None]
        rest = batch.filter(pc.invert(batch.column("clean")))
        found = [self.row(row) for row in rest.filter(pc.invert(rest.column("quiet"))).to_pylist()]
        found += self.quiet(rest.filter(rest.column("quiet")))
        for cluster, drift in found:
            if isinstance(drift, RowRefused):
                out.append(_refused_row(cluster, drift))
            elif drift.empty:
                counts = tally.setdefault(cluster, [0, 0, 0])
                counts[0] += drift.observed
                counts[1] += drift.managed
                counts[2] += drift.partitions
            else:
                out.append(_finding_row(cluster, drift))
        out += [_row(c, None, observed=n[0], managed=n[1], partitions=n[2], empty=True) for c, n in tally.items()]
        return out

    def row(self, row: Mapping[str, Any]) -> tuple[str, TopicDrift | RowRefused]:
        """One topic through the planner on its own."""
        cluster = row["cluster"]
        try:
            return cluster, row_drift(row, self.cluster(cluster), self.value["meta"][cluster], self.options)
        except RowRefused as e:
            return cluster, e

    def quiet(self, rows: pa.RecordBatch) -> list[tuple[str, TopicDrift | RowRefused]]:
        """The quiet topics' findings: each shape's first topic planned (once per task), its findings
        renamed for the others of the shape when they are name-free, else each planned on its own."""
        from reconciler.drift.quiet import renamer
        from reconciler.plan.planner import unmanaged_topics
        from reconciler.plan.policy import is_protected

        light = rows.select(["cluster", "topic", "partition_count", *_SHAPE_COLUMNS]).to_pylist()
        keys = [_shape_key(r, is_protected(self.cluster(r["cluster"]), r["topic"])) for r in light]
        first: dict[tuple, int] = {}
        for i, key in enumerate(keys):
            if key not in self.shapes:
                first.setdefault(key, i)
        if first:
            for key, row in zip(first, rows.take(list(first.values())).to_pylist()):
                self.shapes[key] = self.shape(row)
        out: list[tuple[str, TopicDrift | RowRefused]] = []
        alone = []
        members: dict[tuple, list[dict[str, Any]]] = {}
        for i, (r, key) in enumerate(zip(light, keys)):
            if self.shapes[key].name_free:
                members.setdefault(key, []).append(r)
            else:
                alone.append(i)
        for key, rs in members.items():
            shape, cluster = self.shapes[key], rs[0]["cluster"]
            assert shape.drift is not None and shape.topic is not None  # name-free: planned
            # Whether a topic is unmanaged is the planner's rule on its name and `internal` (in the shape).
            view = ObservedState.view_of(cluster, dict.fromkeys((r["topic"] for r in rs), shape.topic))
            bare = self.cluster(cluster).model_copy(update={"topics": {}})
            unmanaged = set(unmanaged_topics(bare, view, self.options)) if not shape.drift.managed else set()
            make = renamer(shape.drift)
            out += [(cluster, make(r["topic"], r["partition_count"], r["topic"] in unmanaged)) for r in rs]
        if alone:
            out += [self.row(row) for row in rows.take(alone).to_pylist()]
        return out

    def shape(self, row: Mapping[str, Any]) -> _Shape:
        """A quiet shape's findings, planned on `row`'s topic."""
        from reconciler.drift.compute import planned_one_topic
        from reconciler.drift.quiet import name_free

        cluster = row["cluster"]
        try:
            desired, observed, earlier = row_models(row, self.cluster(cluster), self.value["meta"][cluster])
        except RowRefused:
            return _Shape(None, None, False)
        name = row["topic"]
        compare = self.value["meta"][cluster]["compare"]
        drift, first_plan = planned_one_topic(desired, observed, name, earlier, None, self.options, compare=compare)
        free = name_free(drift, first_plan, name)
        return _Shape(drift, observed.topics.get(name), free)


def _shape_key(row: Mapping[str, Any], protected: bool) -> tuple:
    """A quiet topic's shape (`_SHAPE_COLUMNS`) as a hashable value."""
    return (
        row["cluster"],
        protected,
        *(
            tuple(tuple(v.values()) if type(v) is dict else v for v in value) if type(value) is list else value
            for value in (row[c] for c in _SHAPE_COLUMNS)
        ),
    )


def _row(cluster: str, topic: str | None, **values: Any) -> dict[str, Any]:
    """An output row (`_OUT_FIELDS`): `values`, the rest empty."""
    return {
        "cluster": cluster,
        "topic": topic,
        "observed": 0,
        "managed": 0,
        "partitions": 0,
        "empty": False,
        "drift": "",
        "items": [],
        "truncations": [],
        "retention": [],
        "changes": [],
        "refused": None,
        "disk": None,
        **values,
    }


def _refused_row(cluster: str, e: RowRefused) -> dict[str, Any]:
    return _row(cluster, e.topic, refused={"file": e.file, "count": e.count, "problems": e.problems})


def _finding_row(cluster: str, drift: TopicDrift) -> dict[str, Any]:
    from reconciler.drift.tables import change_dict, item_dict, retention_dicts, truncation_dict

    items = _items(
        cluster,
        drift.changes,
        [drift.topic] if drift.unmanaged else [],
        drift.config,
        [drift.truncation] if drift.truncation else [],
        drift.replicas,
        drift.data_loss,
        drift.diagnostics,
        [drift.retention] if drift.retention else [],
        [drift.topic] if drift.hidden else [],
        [drift.health] if drift.health else [],
        [drift.idle] if drift.idle else [],
    )
    return _row(
        cluster,
        drift.topic,
        observed=int(drift.observed),
        managed=int(drift.managed),
        partitions=drift.partitions,
        drift=drift.model_dump_json(),
        items=[item_dict(i) for i in items],
        truncations=[truncation_dict(r) for r in drift.truncation_rows],
        retention=retention_dicts(drift.retention) if drift.retention else [],
        changes=[change_dict(e) for e in drift.change_log],
    )


def _disk_row(row: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """A topic that may have no retention limit, now and in the earlier run, as the driver's disk
    findings read it; None for a row the models refuse (the planner's side reports it)."""
    try:
        now = topic_from_row(dict(row))
        earlier = None
        if row["earlier_partitions"]:
            earlier = topic_from_row(
                {"topic": row["topic"], "topic_id": row["earlier_topic_id"], "partitions": row["earlier_partitions"]}
            )
    except ValidationError:
        return None
    text = f"[{now.model_dump_json()}, {earlier.model_dump_json() if earlier is not None else 'null'}]"
    return _row(row["cluster"], row["topic"], empty=True, disk=text)


class RowRefused(Exception):
    """A topic's row (of the latest run's `file`, or the earlier run's) that the models refuse, with
    its problems in the words the local engine uses for the same values."""

    def __init__(self, file: str, topic: str, error: ValidationError):
        super().__init__(file)
        self.file, self.topic, self.count = file, topic, error.error_count()
        quoted = shown_text(repr(topic), 60)
        self.problems = [
            f"topic {quoted}: {problem_line(e, SNAPSHOT_KEYS, 2 if tuple(e['loc'][:2]) == ('topics', topic) else 0, explain)}"
            for e in error.errors(include_url=False)[:MAX_PROBLEMS]
        ]


def row_drift(
    row: Mapping[str, Any], desired: DesiredState, meta: Mapping[str, Any], options: PlanOptions = PlanOptions()
) -> TopicDrift:
    """One input row (a topic of a cluster, its earlier run's columns and its declaration, `want`,
    alongside) through the pure planner, on the cluster restricted to that topic. `desired`: the
    cluster's (its topics are not read); `meta`: the cluster's part of the broadcast. A row the
    models refuse raises RowRefused."""
    restricted, observed, earlier = row_models(row, desired, meta)
    drift = drift_one_topic(restricted, observed, row["topic"], earlier, None, options, compare=meta["compare"])
    try:
        idle = row_idle(row, restricted, meta["compare"])
    except ValidationError as e:
        raise RowRefused(meta["file"], row["topic"], e) from None
    return drift if idle is None else drift.model_copy(update={"idle": idle})


def row_models(
    row: Mapping[str, Any], desired: DesiredState, meta: Mapping[str, Any]
) -> tuple[DesiredState, ObservedState, ObservedTopic | None]:
    """A row's cluster restricted to its topic, as the planner reads it (`row_drift`): the desired
    and the observed state, and the topic in the earlier run (None: not there or no earlier run)."""
    cluster, name, status = row["cluster"], row["topic"], row["status"]
    want = DesiredTopic.model_validate_json(row["want"]) if row["want"] is not None else None
    desired = desired.model_copy(update={"topics": {name: want} if want is not None else {}})
    groups: dict[str, dict[str, dict[int, int]]] = {}
    for g in row["group_offsets"] or []:
        groups.setdefault(g["group"], {}).setdefault(name, {})[g["partition"]] = g["offset"]
    try:
        topic = topic_from_row(dict(row)) if row["partitions"] is not None and status is None else None
        observed = ObservedState(
            cluster=cluster,
            cluster_id=meta["cluster_id"],
            taken_at=datetime.fromisoformat(meta["run"]),
            topics={name: topic} if topic else {},
            group_offsets=groups,
            hidden_topics=[name] if status == HIDDEN else [],
            absent_topic_operations={name: row["authorized_operations"] or []} if status == ABSENT else {},
            cluster_authorized_operations=row["cluster_authorized_operations"],
            sizes_refused=row["sizes_refused"],
            brokers=meta["brokers"],
            reassignments={name: meta["reassignments"][name]} if topic and name in meta["reassignments"] else {},
        )
    except ValidationError as e:
        raise RowRefused(meta["file"], name, e) from None
    earlier = None
    if row["earlier_partitions"] is not None:
        # What data-loss signals, out-of-band retention changes and the change log read of the
        # earlier run's topic.
        try:
            earlier = topic_from_row(
                {
                    "topic": name,
                    "topic_id": row["earlier_topic_id"],
                    "configs": row["earlier_configs"],
                    "partitions": row["earlier_partitions"],
                }
            )
        except ValidationError as e:
            raise RowRefused(meta["earlier_file"], name, e) from None
    return desired, observed, earlier


def _arrow_out_schema() -> pa.Schema:
    item = pa.struct(
        [
            ("kind", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("key", pa.string()),
            ("detail", pa.string()),
            ("records", pa.int64()),
            ("bytes", pa.int64()),
        ]
    )
    trunc = pa.struct(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("leader", pa.int32()),
            ("leader_epoch", pa.int32()),
            ("log_start_offset", pa.int64()),
            ("high_watermark", pa.int64()),
            ("target_offset", pa.int64()),
            ("records", pa.int64()),
            ("estimated_bytes", pa.int64()),
        ]
    )
    retention = pa.struct(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("against", pa.string()),
            ("log_start_offset", pa.int64()),
            ("high_watermark", pa.int64()),
            ("keep_from_offset", pa.int64()),
            ("records", pa.int64()),
            ("bytes", pa.int64()),
            ("unknown", pa.string()),
        ]
    )
    change = pa.struct(
        [
            ("kind", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("key", pa.string()),
            ("old", pa.string()),
            ("new", pa.string()),
            ("source", pa.string()),
            ("count", pa.int32()),
            ("sensitive", pa.bool_()),
        ]
    )
    return pa.schema(
        [
            ("cluster", pa.string()),
            ("topic", pa.string()),
            ("observed", pa.int32()),
            ("managed", pa.int32()),
            ("partitions", pa.int64()),
            ("empty", pa.bool_()),
            ("drift", pa.string()),
            ("items", pa.list_(item)),
            ("truncations", pa.list_(trunc)),
            ("retention", pa.list_(retention)),
            ("changes", pa.list_(change)),
            ("refused", pa.struct([("file", pa.string()), ("count", pa.int32()), ("problems", pa.list_(pa.string()))])),
            ("disk", pa.string()),
        ]
    )


def _write_tables(
    results: DataFrame,
    directory: str,
    generated_at: datetime,
    meta: Mapping[str, _ClusterRun],
    cluster_items: list[DriftItem],
    owners: list[tuple[str, str, str]],
) -> None:
    """The flat tables from the executors' rows; `cluster_items`: the findings of whole clusters
    (disk), made on the driver, join `drift_items`, and `owners` (cluster, topic, Team) give its
    owner column."""
    spark = results.sparkSession
    # Standard Parquet timestamps (UTC-adjusted micros), not Spark's legacy INT96.
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    runs = spark.createDataFrame(
        [(c, m.run, m.since) for c, m in meta.items()], "cluster string, observed_at timestamp, since timestamp"
    )
    base = results.join(F.broadcast(runs), "cluster").withColumn("generated_at", F.lit(generated_at).cast("timestamp"))
    common = ["generated_at", "cluster", "observed_at"]
    for name, column, times in (
        ("drift_items", "items", common),
        ("pending_truncations", "truncations", common),
        ("retention_lowered", "retention", common),
        ("changes", "changes", [*common, "since"]),
    ):
        exploded = base.select(*times, F.explode(column).alias("row")).select(*times, "row.*")
        if name == "drift_items" and cluster_items:
            extra = spark.createDataFrame(
                [(i.cluster, *(getattr(i, f) for f, _ in ITEM_FIELDS)) for i in cluster_items],
                "cluster string, " + ", ".join(f"{f} {t}" for f, t in ITEM_FIELDS),
            )
            found = extra.join(F.broadcast(runs.select("cluster", "observed_at")), "cluster").withColumn(
                "generated_at", F.lit(generated_at).cast("timestamp")
            )
            exploded = exploded.unionByName(found.select(*exploded.columns))
        if name == "drift_items":
            by_topic = spark.createDataFrame(owners, "cluster string, topic string, owner string")
            exploded = exploded.join(F.broadcast(by_topic), ["cluster", "topic"], "left").select(*exploded.columns, "owner")
        (exploded.coalesce(max(1, min(8, len(meta)))).write.mode("overwrite").parquet(f"{directory.rstrip('/')}/{name}"))
