"""Running drift reports: one cluster in-process, or a fleet with the local or the Spark engine.

The local engine never imports pyspark (SparkSession start-up alone costs seconds); the Spark
engine lives in `reconciler.drift.spark_job`, imported only when it runs.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlparse

from reconciler.drift.by_owner import with_owners
from reconciler.drift.model import DriftReport
from reconciler.drift.per_cluster import cluster_of_fleet, desired_of, report_of
from reconciler.drift.spark_options import SparkOptions
from reconciler.errors import ReconcilerError
from reconciler.models.desired import DesiredState
from reconciler.plan.planner import PlanOptions

ENGINES = ("local", "spark", "auto")

# --engine auto, without a master: Spark in local[*] when it would finish first on this machine's
# cores. The local engine plans on one core; Spark spends a fixed time starting, then plans a
# cluster per core at once. The rates below are what benchmarks/drift_spark.py measured
# (docs/performance.md, "Fifth round"): each engine's marginal rate from its CPU at 400,000 and
# 4,000,000 partitions on a quiet machine (Spark's: its whole process tree in local[2], the JVM's
# and the driver's share of each cluster included; 237,000 on a standalone cluster's executors
# alone), Spark's start the wall time at 400,000 less that work on 2 cores, with the JVM's class
# archive in place (the first run on a machine starts ~3 s slower: spark_class_archive.py). On few
# cores Spark does not catch up; with more its rate grows, the local one's does not. Memory does
# not decide it: both drivers hold the manifests and the fleet's findings.
LOCAL_PARTITIONS_PER_S = 280_000
SPARK_PARTITIONS_PER_S_PER_CORE = 190_000
SPARK_START_S = 5.0


def spark_pays_off(partitions: int, cores: int) -> bool:
    """Whether Spark in local[*] on `cores` cores would report on `partitions` sooner than the local engine."""
    spark_rate = cores * SPARK_PARTITIONS_PER_S_PER_CORE
    return spark_rate > LOCAL_PARTITIONS_PER_S and partitions / LOCAL_PARTITIONS_PER_S > SPARK_START_S + partitions / spark_rate


@dataclass(frozen=True)
class FleetResult:
    report: DriftReport
    engine: str
    tables: str | None = None  # directory (a path or a URI) holding drift_items/ and pending_truncations/


def choose_engine(engine: str, fleet: str | Path, master: str | None = None, spark_settings: bool = False) -> str:
    """`auto`: Spark when a master or Spark settings are given, or the fleet is a URI, or when the
    fleet's latest snapshots hold so many partitions that Spark on this machine's cores would
    finish first (`spark_pays_off`; pyspark installed); local otherwise.
    Decided from Parquet footers, without importing pyspark."""
    if engine not in ENGINES:
        raise ReconcilerError(f"unknown engine {engine!r}; one of {', '.join(ENGINES)}")
    if engine == "local" and (master or spark_settings):
        given = " and ".join(x for x, on in (("--master", master), ("Spark settings (--conf, ...)", spark_settings)) if on)
        raise ReconcilerError(f"--engine local runs in this process without Spark: it takes no {given}; drop one or the other.")
    if engine != "auto":
        return engine
    if master or spark_settings or _is_uri(fleet):
        return "spark"  # the local engine reads local directories only
    if _json_snapshots(fleet):
        return "local"  # the Spark engine reads Parquet snapshots only
    from reconciler.files.fleet import count_partitions, discover_fleet

    clusters = discover_fleet(fleet)
    partitions = sum(count_partitions(runs[-1].path) for runs in clusters.values())
    # A Spark task plans one cluster: no more cores work at once than there are clusters.
    cores = min(os.cpu_count() or 1, len(clusters))
    if spark_pays_off(partitions, cores) and importlib.util.find_spec("pyspark") is not None:
        return "spark"
    return "local"


def run_fleet(
    fleet: str | Path,
    desired_for: Callable[[str], DesiredState],
    engine: str = "auto",
    master: str | None = None,
    tables: str | Path | None = None,
    options: PlanOptions = PlanOptions(),
    generated_at: datetime | None = None,
    spark: SparkOptions = SparkOptions(),
) -> FleetResult:
    """Every cluster's latest snapshot under `fleet` against its desired state; each cluster's
    previous snapshot, when there is one, is the earlier state for data-loss signals."""
    chosen = choose_engine(engine, fleet, master, spark.given)
    if chosen == "local" and _is_uri(fleet):
        raise ReconcilerError(f"the local engine reads local directories only, not {fleet}; use --engine spark.")
    if chosen == "local" and tables and _is_uri(tables):
        raise ReconcilerError(f"the local engine writes tables to local directories only, not {tables}; use --engine spark.")
    generated_at = generated_at or datetime.now(timezone.utc)
    if chosen == "spark":
        found = _json_snapshots(fleet)
        if found:
            raise ReconcilerError(
                f"the Spark engine reads Parquet snapshots only, and {fleet} holds JSON ones ({found[0]}"
                f"{f' and {len(found) - 1} more' if len(found) > 1 else ''}): write them with `reconcile snapshot "
                "--format parquet`, or use --engine local."
            )
        if not _is_uri(fleet):  # a plain path: the local engine's checks of the directory first
            from reconciler.files.fleet import discover_fleet
            from reconciler.files.snapshot_parquet import check_column_types

            for runs in discover_fleet(fleet).values():
                for snapshot in reversed(runs):  # named in seconds, before Spark starts
                    check_column_types(snapshot.path)
        try:
            from reconciler.drift import spark_job
        except ImportError as e:
            raise ReconcilerError(
                "the Spark engine needs pyspark: pip install 'kafka-reconciler[spark]', or use --engine local."
            ) from e
        report = spark_job.run(
            fleet,
            desired_for,
            options=options,
            master=master,
            generated_at=generated_at,
            conf=spark.conf,
            log_level=spark.log_level,
            executor_wait_s=spark.executor_wait_s,
        )
    else:
        report = run_local(fleet, desired_for, options, generated_at)
    report = with_owners(report, desired_for)
    if tables and _is_uri(tables):  # HDFS, s3a://, ...: only Spark writes there
        spark_job.write_tables(report, tables, fleet)
    elif tables:
        from reconciler.drift.tables import write_tables_local

        write_tables_local(report, tables)
    return FleetResult(report=report, engine=chosen, tables=str(tables) if tables else None)


def run_local(
    fleet: str | Path,
    desired_for: Callable[[str], DesiredState],
    options: PlanOptions = PlanOptions(),
    generated_at: datetime | None = None,
) -> DriftReport:
    """The local engine: one cluster at a time, so memory holds one cluster's snapshots. Parquet
    snapshots are read as columns, and most topics planned once per shape
    (`reconciler.drift.quiet`); a cluster whose snapshots that pass cannot prove good is read and
    planned whole."""
    from reconciler.files.fleet import discover_fleet

    fleet_files = discover_fleet(fleet)
    desired = {
        cluster: desired_of(desired_for, cluster, runs[-1].path)  # fail early on unknown clusters
        for cluster, runs in fleet_files.items()
    }
    clusters = [
        cluster_of_fleet(desired[cluster], cluster, runs[-1].path, runs[-2].path if len(runs) > 1 else None, options)
        for cluster, runs in fleet_files.items()
    ]
    return report_of(clusters, "local", generated_at)


def _is_uri(fleet: str | Path) -> bool:
    """A fleet named by a URI (hdfs://, s3a://, viewfs://, file:...): only Spark reads it."""
    return len(urlparse(str(fleet)).scheme) > 1  # not a Windows drive letter


def _json_snapshots(fleet: str | Path) -> list[Path]:
    """JSON snapshots in a local fleet directory (a Spark path like hdfs:// is not looked into)."""
    root = Path(fleet)
    return sorted(p for p in root.rglob("*.json") if p.is_file()) if root.is_dir() else []
