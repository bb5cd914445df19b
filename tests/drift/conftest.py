"""Fixtures for drift tests: one local SparkSession for the whole test session (Spark starts in
seconds, so it is shared), and small synthetic fleets written as real Parquet files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("drift-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def small_fleet(tmp_path_factory):
    """3 clusters x 400 partitions x 2 runs, as Parquet; returns (snapshots dir, desired by cluster)."""
    from benchmarks.drift_fleet import write_fleet

    root = tmp_path_factory.mktemp("fleet")
    desired = write_fleet(root / "snapshots", clusters=3, partitions=400, runs=2, seed=11)
    return root / "snapshots", desired


@pytest.fixture(scope="session")
def executor_python(tmp_path_factory):
    """The Python a Spark cluster's executors run: a virtualenv with the project's wheel."""
    from tests.drift.standalone import executor_python

    kept = os.environ.get("RECONCILER_TEST_EXECUTORS")  # a directory to keep it in between runs
    return executor_python(Path(kept) if kept else tmp_path_factory.mktemp("executors"))


@pytest.fixture(scope="session")
def standalone(tmp_path_factory, executor_python):
    """A Spark standalone master and one worker (2 cores, 1 GiB), separate JVMs on 127.0.0.1."""
    from tests.drift.standalone import standalone_cluster

    yield from standalone_cluster(tmp_path_factory.mktemp("standalone"), executor_python)
