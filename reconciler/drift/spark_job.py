"""The fleet drift pipeline on Apache Spark: the only module that imports pyspark.

Spark spreads the fleet's clusters over its executors, one cluster a task (small ones share a task:
`_tasks`), and each task runs the local engine's work for each of its clusters
(`per_cluster.cluster_of_fleet`): its latest snapshot and the one before read as columns, the quiet
topics planned once per shape, the others with their cluster.
So an executor core does a local core's work, the two engines' reports come from one code,
and what the JVM does is small: it lists the fleet, reads each task's files as bytes
(`binaryFiles`, through Hadoop's FileSystem: HDFS, s3a://, viewfs://, whatever the session reads),
and writes the flat tables. No snapshot reaches the driver, which holds the manifests and the
findings; no shuffle moves the rows. A cluster is the unit of work because a topic's findings
depend on its cluster (inherited values, replica placement across topics, the destructive-action
limit): the largest clusters start first, and a fleet of fewer clusters than cores leaves cores idle.

Run it on a Spark cluster with `reconcile drift --fleet PATH --engine spark --master spark://...`
or by handing `reconciler/spark_submit.py` to spark-submit; the reconciler package and its
dependencies must be importable on the executors (pip install it there, or ship a packed
virtualenv with `--archives`), and PYSPARK_PYTHON (`spark.pyspark.python`) must name that
interpreter.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import sys

if __name__ == "__main__":  # pragma: no cover - this file was once the one handed to spark-submit
    sys.exit("reconciler/drift/spark_job.py is not a job file; hand reconciler/spark_submit.py to spark-submit.")

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.broadcast import Broadcast
from pyspark.errors import PySparkException, PythonException
from pyspark.rdd import RDD
from pyspark.sql import DataFrame, SparkSession

from reconciler.drift import spark_failures, spark_session
from reconciler.drift.model import ClusterDrift, DriftReport
from reconciler.drift.per_cluster import cluster_of_fleet, desired_of, report_of
from reconciler.drift.spark_options import EXECUTOR_WAIT_S
from reconciler.drift.tables import TABLES, report_columns, spark_ddl
from reconciler.errors import ReconcilerError, SnapshotError
from reconciler.files.fleet import parse_run
from reconciler.files.snapshot_bytes import SnapshotBytes
from reconciler.models.desired import DesiredState
from reconciler.plan.planner import PlanOptions

# Where small clusters share a task, their latest snapshots' bytes in it at most: ~75,000 partitions'
# worth, ~0.3 CPU-s of work, so Spark's own cost of a task is a tenth of it or less; a 100,000-
# partition cluster (~330 KiB) keeps a task to itself.
TASK_BYTES = 1 << 18


def run(
    fleet: str | Path,
    desired_for: Callable[[str], DesiredState],
    options: PlanOptions = PlanOptions(),
    master: str | None = None,
    generated_at: datetime | None = None,
    conf: Mapping[str, str] | None = None,
    log_level: str | None = None,
    executor_wait_s: float = EXECUTOR_WAIT_S,
) -> DriftReport:
    generated_at = generated_at or datetime.now(timezone.utc)
    watch = None
    try:
        spark = spark_session.session(master, conf, log_level)
        with spark_session.ExecutorWatch(spark, executor_wait_s) as watch:
            runs = fleet_runs(spark, fleet)
            desired = {c: desired_of(desired_for, c, _shown_path(r.latest)) for c, r in runs.items()}  # fails early
            shared = spark.sparkContext.broadcast(_Shared.of(desired, options, runs))
            try:
                found = _cluster_files(spark, runs).mapPartitions(_cluster_task(shared)).collect()
            finally:
                shared.unpersist()
    except (PySparkException, Py4JError) as e:
        if watch is not None and watch.starved is not None:
            raise ReconcilerError(watch.starved) from e
        if os.environ.get("RECONCILER_DEBUG"):
            raise
        raise _spark_failure(fleet, e, _executors_python()) from None
    return report_of([_reported(r) for r in sorted(found, key=lambda r: r["cluster"])], "spark", generated_at)


@dataclass(frozen=True)
class ClusterRuns:
    """A cluster's snapshot files as Spark names them: the latest, reported on, and the one before
    it (data-loss signals, the change log); `size`: the latest's bytes, to start the largest first."""

    latest: str
    earlier: str | None
    size: int


@dataclass(frozen=True)
class _Shared:
    """What every task reads (broadcast once): each cluster's desired state pickled apart, so
    that a task unpickles only its own cluster's (the fleet's whole manifests cost a worker
    about as much as a cluster's work)."""

    desired: Mapping[str, bytes]
    options: PlanOptions
    runs: Mapping[str, ClusterRuns]

    @classmethod
    def of(cls, desired: Mapping[str, DesiredState], options: PlanOptions, runs: Mapping[str, ClusterRuns]) -> _Shared:
        return cls({c: pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL) for c, d in desired.items()}, options, runs)

    def desired_state(self, cluster: str) -> DesiredState:
        state: DesiredState = pickle.loads(self.desired[cluster])  # pickled by this job's driver
        return state


def fleet_runs(spark: SparkSession, fleet: str | Path) -> dict[str, ClusterRuns]:
    """Each cluster's files, listed by Spark (contents not read) and named by the fleet's layout
    `<cluster>/<run>.parquet`, as the local engine names a local fleet's (`files.fleet`)."""
    found: dict[str, list[tuple[datetime, str, int]]] = {}
    for r in _fleet_files(spark, fleet).collect():
        path, file = r["path"], _posix_path(r["path"])
        found.setdefault(file.parent.name, []).append((parse_run(file.stem, _shown_path(path)), path, r["length"]))
    if not found:
        raise SnapshotError(
            f"{fleet} holds no Parquet snapshots; the Spark engine reads "
            "<cluster>/<run>.parquet files written by `reconcile snapshot --format parquet`."
        )
    runs = {}
    for cluster, files in sorted(found.items()):
        files.sort()
        runs[cluster] = ClusterRuns(files[-1][1], files[-2][1] if len(files) > 1 else None, files[-1][2])
    return runs


def _fleet_files(spark: SparkSession, fleet: str | Path) -> DataFrame:
    """The fleet's Parquet files (columns `path`, `length`), listed by Spark under the directory
    named (not a glob pattern): their contents are not read."""
    return (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.parquet")
        .load(_literal(str(fleet)))
        .select("path", "length")
    )


def _cluster_files(spark: SparkSession, runs: Mapping[str, ClusterRuns]) -> RDD[tuple[str, bytes]]:
    """One partition per task holding its clusters' files as (path, bytes), the largest first
    (`_tasks`). A task's files are read by one Hadoop input format (`binaryFiles` of all their
    paths: the bytes reach Python as they are, where a DataFrame's rows are converted and pickled in
    the JVM; one read, not one a file, as each read ships the job's Hadoop settings to the task),
    coalesced into one partition, and the tasks' partitions kept apart by an RDD union, so no
    shuffle moves them."""
    sc = spark.sparkContext
    reads = [
        sc.binaryFiles(",".join(_literal(f) for r in task for f in (r.latest, r.earlier) if f is not None), 1).coalesce(1)
        for task in _tasks(list(runs.values()), sc.defaultParallelism)
    ]
    return sc.union(reads)


def _tasks(runs: list[ClusterRuns], cores: int) -> list[list[ClusterRuns]]:
    """The clusters, the largest first, a task each but for small ones, which share a task up to
    TASK_BYTES of latest snapshots (fewer where the fleet is small, so that each core gets three
    tasks or more): Spark's own cost of a Python task, ~0.03-0.05 CPU-s, is more than a small
    cluster's work (docs/performance.md)."""
    ordered = sorted(runs, key=lambda r: -r.size)
    most = max(1, min(TASK_BYTES, sum(r.size for r in ordered) // (3 * max(cores, 1))))
    tasks: list[list[ClusterRuns]] = []
    filled = 0
    for r in ordered:
        if not tasks or filled + r.size > most:
            tasks.append([])
            filled = 0
        tasks[-1].append(r)
        filled += r.size
    return tasks


def _literal(path: str) -> str:
    """A listed file as a path Hadoop reads as it is: not a glob pattern (its special characters
    escaped), nor a list (an input format splits its paths at a comma outside braces)."""
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", path).replace(",", "{\\,}")


def _cluster_task(shared: Broadcast[_Shared]) -> Callable[[Iterator[tuple[str, bytes]]], Iterator[dict[str, Any]]]:
    """The function Spark runs on each partition (on the executors): its cluster's files."""

    def run_task(pairs: Iterator[tuple[str, bytes]]) -> Iterator[dict[str, Any]]:
        # The snapshots' reader needs pyarrow (without it, a message about the file) and numpy
        # (without it, the slow reader): imported first, so that Spark's failure names what the
        # executors lack.
        import pyarrow.parquet  # noqa: F401, I001
        import numpy  # noqa: F401

        by_cluster: dict[str, dict[str, bytes]] = {}
        for path, content in pairs:
            by_cluster.setdefault(_posix_path(path).parent.name, {})[path] = content
        for cluster, files in by_cluster.items():
            # Without the cyclic collector, as `reconcile` runs each command (reconciler.cli): a
            # cluster's work builds one large graph of objects and drops it at the end, and the
            # collector walking it while it grows cost as much as the work (docs/performance.md).
            gc.disable()
            try:
                result = _task_result(shared.value, cluster, files)
            finally:
                gc.enable()
            yield result
        _keep_out_of_collections()

    return run_task


def _keep_out_of_collections() -> None:
    """Leave what outlives the worker's first task (the modules, their caches, the broadcast) out
    of the cyclic collector's later walks: Spark's Python daemon runs a full collection after
    every task of a reused worker, and with the planner's modules loaded (pydantic's validators)
    that walk cost ~45 ms a task, a tenth of a 100,000-partition cluster's work and more than a
    small cluster's (docs/performance.md). Once, and collected first: a frozen object is never
    collected as part of a cycle, and a task's own objects (Spark's streams of it) are still alive
    here, so freezing at every task could keep some of each task's for good."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()


def _task_result(shared: _Shared, cluster: str, files: Mapping[str, bytes]) -> dict[str, Any]:
    """A task's result for `cluster` (`files`: its snapshots' bytes by path): the local engine's
    work on them, or the error it gives."""
    by_name = {_posix_path(path).name: (path, content) for path, content in files.items()}
    runs = shared.runs[cluster]

    def snapshot(file: str) -> SnapshotBytes:
        path, content = by_name[_posix_path(file).name]
        return SnapshotBytes(content, _shown_path(path))

    try:
        drift = cluster_of_fleet(
            shared.desired_state(cluster),
            cluster,
            snapshot(runs.latest),
            snapshot(runs.earlier) if runs.earlier is not None else None,
            shared.options,
        )
    except ReconcilerError as e:
        return {"cluster": cluster, "drift": None, "error": str(e), "snapshot_error": isinstance(e, SnapshotError)}
    return {"cluster": cluster, "drift": drift, "error": None}


def _reported(row: Mapping[str, Any]) -> ClusterDrift:
    """A task's row on the driver: its findings, or the error the local engine gives for the
    cluster (the first cluster by name that has one, as the local engine meets it)."""
    if row["error"] is not None:
        raise (SnapshotError if row["snapshot_error"] else ReconcilerError)(row["error"])
    drift: ClusterDrift = row["drift"]
    return drift


def write_tables(report: DriftReport, directory: str | Path, fleet: str | Path) -> None:
    """The flat tables (`reconciler.drift.tables`), written by Spark: to any filesystem it writes
    to. Their rows are the report's findings, on the driver already."""
    try:
        spark = spark_session.session()
        # Standard Parquet timestamps (UTC-adjusted micros), not Spark's legacy INT96.
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        columns = report_columns(report)
        for name, fields in TABLES:
            rows = list(zip(*(columns[name][f] for f, _ in fields), strict=True))
            frame = spark.createDataFrame(rows, spark_ddl(fields))
            frame.coalesce(1).write.mode("overwrite").parquet(f"{str(directory).rstrip('/')}/{name}")
    except (PySparkException, Py4JError) as e:
        if os.environ.get("RECONCILER_DEBUG"):
            raise
        raise _spark_failure(fleet, e, _executors_python()) from None


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
        return ReconcilerError(cause)
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
        f"the Spark engine failed on the fleet under {fleet}: {said}. A file Spark cannot read (a missing path, "
        "a file that vanished or that this user may not read) is the usual cause; `reconcile drift --fleet ... "
        f"--engine local` checks a local fleet's files and names the bad one. Nothing was reported.{log}"
    )


def _whole(error: Py4JJavaError) -> str:
    try:
        return str(error)
    except Py4JError:
        return ""


def _posix_path(file: str) -> PurePosixPath:
    """A file as Spark names it, as a path: its name is the run's, its directory's the cluster's."""
    return PurePosixPath(_scheme_and_path(file)[1])


def _shown_path(file: str) -> str:
    """A file as Spark names it, as the local engine would for a local file."""
    scheme, path = _scheme_and_path(file)
    return path if scheme == "file" else file


def _scheme_and_path(file: str) -> tuple[str, str]:
    """A file as Hadoop names it (`Path.toString`: `scheme://authority/path`, nothing in it
    percent-encoded, so a `?`, `#` or `%` is the file's own): its scheme and its path."""
    scheme, colon, rest = file.partition(":")
    if not colon or "/" in scheme:
        return "", file
    if rest.startswith("//"):
        rest = "/" + rest[2:].partition("/")[2]
    return scheme, rest
