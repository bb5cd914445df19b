"""`reconcile drift` end to end from the command line: real manifest files, real snapshot files,
real Parquet; the exit code says whether there is drift."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.drift.tables import read_table_rows
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.models.observed import ObservedState
from tests.factories import have, observed

MANIFEST = """\
kind: Cluster
name: demo
bootstrap_servers: [localhost:9092]
ignore_topics: ['^connect-']
---
kind: Topic
name: orders.v1
partitions: 3
replication_factor: 3
configs: {retention.ms: 7d, cleanup.policy: delete}
truncate:
  - keep_last: 10
---
kind: Topic
name: payments.v1
partitions: 3
replication_factor: 3
configs: {retention.ms: 1d}
"""

ROOT = Path(__file__).resolve().parents[2]


def _state(hw: int, taken_at: str, **extra) -> ObservedState:
    s = observed(
        have("orders.v1", hw=hw, size_bytes=4096, set_on_topic={"retention.ms": "604800000", "cleanup.policy": "delete"}),
        have("payments.v1", set_on_topic={"retention.ms": "3600000"}, inherited={"segment.ms": "1"}),
        have("stray.topic"),
        have("connect-configs"),
        have("__consumer_offsets"),
        **extra,
    )
    return s.model_copy(update={"cluster": "demo", "taken_at": datetime.fromisoformat(taken_at.replace("Z", "+00:00"))})


def _in_sync() -> ObservedState:
    s = observed(
        have("orders.v1", hw=10, set_on_topic={"retention.ms": "604800000", "cleanup.policy": "delete"}),
        have("payments.v1", set_on_topic={"retention.ms": "86400000"}),
    )
    return s.model_copy(update={"cluster": "demo", "taken_at": datetime(2026, 11, 20, 9, tzinfo=timezone.utc)})


def _setup(tmp_path: Path) -> Path:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "demo.yaml").write_text(MANIFEST)
    (tmp_path / "now.json").write_text(_state(100, "2026-11-20T10:00:00Z").to_json())
    (tmp_path / "before.json").write_text(_state(140, "2026-11-20T09:00:00Z").to_json())
    (tmp_path / "sync.json").write_text(_in_sync().to_json())
    return tmp_path / "manifests"


def _run(*args: str):
    return CliRunner().invoke(main, ["drift", *args], catch_exceptions=False)


def test_drift_on_a_snapshot_in_every_format(tmp_path):
    manifests = _setup(tmp_path)
    result = _run(str(manifests), "--snapshot", str(tmp_path / "now.json"), "--since", str(tmp_path / "before.json"))
    assert result.exit_code == 3, result.output
    for expected in (
        "Managed topics with pending changes",
        "x  orders.v1",
        "Unmanaged topics (1)",
        "stray.topic",
        "Config drift (1)",
        "payments.v1  retention.ms",
        "Data-loss signals (3)",
        "Truncation points not yet applied (1)",
    ):
        assert expected in result.output
    assert "connect-configs" not in result.output and "__consumer_offsets" not in result.output
    for fmt, marker in (("json", '"format_version": 1'), ("markdown", "# Drift report"), ("html", "<svg")):
        out = tmp_path / f"report.{fmt}"
        r = _run(str(manifests), "--snapshot", str(tmp_path / "now.json"), "--format", fmt, "-o", str(out))
        assert r.exit_code == 3 and marker in out.read_text() and "Drift report" in r.output
    data = json.loads((tmp_path / "report.json").read_text())
    (cluster,) = data["clusters"]
    assert cluster["counts"]["pending_truncations"] == 1 and cluster["truncations"][0]["records"] == 270
    assert cluster["truncations"][0]["estimated_bytes"] == 3 * (4096 * 90 // 100)  # estimated per partition


def test_no_drift_exits_zero_and_errors_exit_one(tmp_path):
    manifests = _setup(tmp_path)
    ok = _run(str(manifests), "--snapshot", str(tmp_path / "sync.json"))
    assert ok.exit_code == 0 and "No drift" in ok.output
    missing = _run(str(manifests), "--snapshot", str(tmp_path / "nope.json"))
    assert missing.exit_code == 1 and "cannot read snapshot" in missing.output
    neither = _run(str(manifests))
    assert neither.exit_code == 1 and "--fleet" in neither.output


def test_fleet_drift_from_parquet_snapshots_local_and_spark(tmp_path, spark):
    manifests = _setup(tmp_path)
    fleet = tmp_path / "fleet"
    write_fleet_snapshot(_state(140, "2026-11-20T09:00:00Z"), fleet)
    write_fleet_snapshot(_state(100, "2026-11-20T10:00:00Z"), fleet)
    reports = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.json"
        r = _run(
            str(manifests),
            "--fleet",
            str(fleet),
            "--engine",
            engine,
            "--tables",
            str(tmp_path / engine),
            "--format",
            "json",
            "-o",
            str(out),
        )
        assert r.exit_code == 3, r.output
        data = json.loads(out.read_text())
        assert data["engine"] == engine
        reports[engine] = {k: v for k, v in data.items() if k not in ("engine", "generated_at")}
    assert reports["local"] == reports["spark"]
    assert reports["local"]["clusters"][0]["counts"]["data_loss"] == 3
    drop = ("generated_at",)
    assert read_table_rows(tmp_path / "local", "pending_truncations", drop) == read_table_rows(
        tmp_path / "spark", "pending_truncations", drop
    )


def test_cli_drift_module_runs_as_a_program(tmp_path):
    manifests = _setup(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reconciler",
            "drift",
            str(manifests),
            "--snapshot",
            str(tmp_path / "sync.json"),
            "--format",
            "markdown",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0 and "No drift." in out.stdout
