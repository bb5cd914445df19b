"""Fleet drift on a real Spark standalone cluster (tests/drift/standalone.py): a master and a
worker in their own JVMs, executors on a virtualenv built from the project's wheel. The drift
command runs as its own process, as a user runs it: the same report and tables as the local
engine, read and written through a filesystem only Hadoop knows (viewfs://), nothing on stderr;
and each way a cluster can fail it, in one paragraph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.drift.tables import read_table_rows
from reconciler.files.fleet import write_fleet_snapshot
from tests.drift.standalone import ROOT, Standalone
from tests.drift.test_drift_command import _setup, _state

# The first test pays for the executors' virtualenv and the cluster's start (minutes on a loaded machine).
pytestmark = pytest.mark.timeout(1200)

TABLES = ("drift_items", "pending_truncations", "changes")


def _fleet(tmp_path: Path) -> tuple[Path, Path]:
    manifests = _setup(tmp_path)
    fleet = tmp_path / "fleet"
    write_fleet_snapshot(_state(140, "2026-11-20T09:00:00Z"), fleet)
    write_fleet_snapshot(_state(100, "2026-11-20T10:00:00Z"), fleet)
    return manifests, fleet


def drift(*args: str, env: dict[str, str] | None = None, timeout: float = 400) -> subprocess.CompletedProcess:
    """`reconcile drift` as its own process, with this checkout on the driver's path only."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_", "RECONCILER_"))}
    clean.update(PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "drift", *args],
        check=False,
        capture_output=True,
        text=True,
        env=clean,
        timeout=timeout,
    )


def _report(path: Path) -> dict:
    return {k: v for k, v in json.loads(path.read_text()).items() if k not in ("engine", "generated_at")}


def _one_paragraph(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr and "\tat " not in result.stderr and "Exception" not in result.stderr
    assert result.stdout == ""
    return lines[0]


def test_standalone_cluster_reports_as_the_local_engine_reading_and_writing_through_viewfs(standalone: Standalone, tmp_path):
    manifests, fleet = _fleet(tmp_path)
    local = CliRunner().invoke(
        main,
        ["drift", str(manifests), "--fleet", str(fleet), "--engine", "local", "--tables", str(tmp_path / "local")]
        + ["--format", "json", "-o", str(tmp_path / "local.json")],
        catch_exceptions=False,
    )
    assert local.exit_code == 3, local.output
    mounts = f"spark.hadoop.fs.viewfs.mounttable.fleet.link./{{}}=file://{tmp_path}/{{}}"
    remote = drift(
        str(manifests),
        *("--fleet", "viewfs://fleet/fleet", "--tables", "viewfs://fleet/spark"),
        *("--format", "json", "-o", str(tmp_path / "spark.json")),
        *standalone.conf(),
        *("--conf", mounts.format("fleet", "fleet"), "--conf", mounts.format("spark", "spark")),
    )
    assert remote.returncode == 3, remote.stderr
    assert remote.stderr == ""  # no JVM, log4j or Spark lines on success
    assert json.loads((tmp_path / "spark.json").read_text())["engine"] == "spark"
    assert _report(tmp_path / "spark.json") == _report(tmp_path / "local.json")
    for table in TABLES:
        drop = ("generated_at",)
        assert read_table_rows(tmp_path / "local", table, drop) == read_table_rows(tmp_path / "spark", table, drop), table
    # The Python work ran in the worker's executors (their logs are in the worker's directory).
    assert list((standalone.home / "work").glob("app-*/*/stderr"))


@pytest.mark.parametrize(
    "python, path, says",
    [
        ("bare", "arrow", "cannot import the reconciler (No module named 'reconciler'): in the executors' Python"),
        ("python", None, "the Spark executors cannot import pyarrow, which the Spark engine needs (No module named 'pyarrow')"),
    ],
)
def test_executors_without_the_package_or_pyarrow_are_named_with_what_to_install_where(
    standalone: Standalone, tmp_path, python, path, says
):
    manifests, fleet = _fleet(tmp_path)
    interpreter = getattr(standalone.executors, python)
    message = _one_paragraph(drift(str(manifests), "--fleet", str(fleet), *standalone.conf(interpreter, path)))
    assert says in message and interpreter in message, message
    assert "pip install 'kafka-reconciler[spark]'" in message and "spark.pyspark.python" in message


def test_a_cluster_that_cannot_grant_the_executors_asked_for_says_what_it_offers(standalone: Standalone, tmp_path):
    manifests, fleet = _fleet(tmp_path)
    started = time.monotonic()
    result = drift(
        str(manifests),
        *("--fleet", str(fleet), "--executor-wait", "8s"),
        *standalone.conf(**{"spark.executor.memory": "4g", "spark.executor.cores": "1"}),
    )
    message = _one_paragraph(result)
    assert f"the Spark master at {standalone.master} granted no executor in " in message
    assert "Asked for: spark.executor.memory=4g, spark.executor.cores=1;" in message
    assert f"127.0.0.1: 2 of 2 cores and 1024 of {standalone.worker_memory_mib} MiB free" in message
    assert time.monotonic() - started < 200  # not Spark's endless wait


def test_a_wrong_master_is_named_within_seconds(standalone: Standalone, tmp_path):
    manifests, fleet = _fleet(tmp_path)
    for master, says in (
        (f"spark://127.0.0.1:{standalone.ui_port}", "a web server answers there, not a master's RPC port"),
        ("spark://127.0.0.1:9", "Connection refused"),
        ("spark://no-such-host.invalid:7077", "no-such-host.invalid: no such host"),
    ):
        started = time.monotonic()
        message = _one_paragraph(drift(str(manifests), "--fleet", str(fleet), "--master", master))
        assert time.monotonic() - started < 30
        assert message.startswith(f"Error: no Spark master answers at {master} (") and says in message, message


def test_under_spark_submit_errors_go_to_stderr_not_into_its_stdout(tmp_path):
    """spark-submit merges the Python driver's stderr into its own stdout: the job writes its
    errors through the JVM's stderr, so a script reading the report from stdout does not get them."""
    import pyspark

    manifests, _ = _fleet(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_", "RECONCILER_"))}
    env.update(PYTHONPATH=str(ROOT), PYSPARK_DRIVER_PYTHON=sys.executable, PYSPARK_PYTHON=sys.executable)
    result = subprocess.run(
        [str(Path(pyspark.__file__).parent / "bin" / "spark-submit"), "--master", "local[1]"]
        + [str(ROOT / "reconciler" / "spark_submit.py"), str(manifests), "--fleet", str(tmp_path / "nowhere")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=400,
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Error: " not in result.stdout
    assert f"Error: {tmp_path / 'nowhere'} is not a directory of snapshots" in result.stderr


def test_spark_in_local_mode_prints_nothing_of_spark_s_on_success(tmp_path):
    """The JVM started here (local[1]) writes its warnings and log to a file of its own, removed on exit."""
    manifests, fleet = _fleet(tmp_path)
    result = drift(str(manifests), "--fleet", str(fleet), "--master", "local[1]", env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 3, result.stderr
    assert result.stderr == "" and result.stdout.startswith("Drift report: 1 cluster, 1 with drift")
    assert not list(tmp_path.glob("reconcile-drift-spark-*.log"))
