"""The capacity tests' repository: a manifest directory for cluster `lab` driven through the CLI,
and what each broker's log directory holds."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.testing import TestCluster
from reconciler.units import epoch_ms

GIB = 1 << 30


class Repo:
    def __init__(self, tmp_path: Path, cluster: TestCluster, topics_yaml: str, drain: list[int] | None = None, extra: str = ""):
        self.dir, self.cluster = tmp_path, cluster
        (tmp_path / "manifests").mkdir()
        drained = f"drain_brokers: {drain}\n" if drain else ""
        (tmp_path / "manifests" / "cluster.yaml").write_text(
            "kind: Cluster\nname: lab\nbootstrap_servers: [127.0.0.1:9]\n"
            f"defaults: {{partitions: 2, replication_factor: 3}}\n{drained}{extra}"
        )
        (tmp_path / "manifests" / "topics.yaml").write_text(topics_yaml)

    def run(self, *args: str):
        result = CliRunner().invoke(main, [*args, "--bootstrap-servers", self.cluster.bootstrap_servers])
        assert "Traceback" not in result.output, result.output
        return result

    def plan(self, *extra: str) -> tuple[int, dict, str]:
        saved = self.dir / "plan.json"
        result = self.run("plan", str(self.dir / "manifests"), "--cluster", "lab", "--format", "json", "-o", str(saved), *extra)
        return result.exit_code, json.loads(saved.read_text()) if saved.exists() else {}, result.output

    def apply(self) -> tuple[int, dict]:
        out = self.dir / "result.json"
        result = self.run(
            "apply", str(self.dir / "plan.json"), "--manifests", str(self.dir / "manifests"), "--format", "json", "-o", str(out)
        )
        assert out.exists(), result.output
        return result.exit_code, json.loads(out.read_text())


def observed_ms(plan: dict) -> int:
    return epoch_ms(datetime.fromisoformat(plan["observed_at"].replace("Z", "+00:00")))


def used(cluster: TestCluster) -> dict[int, int]:
    """Broker -> the bytes its replicas hold."""
    return {b: cluster.log_dir_used_bytes(b) for b in cluster.broker_ids}
