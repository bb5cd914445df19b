"""A Cluster document's `cluster_id` pins the cluster it means: every live command refuses a
cluster that answers with another id, right after connecting and before it plans anything,
naming both ids and the bootstrap servers it used; nothing is read beyond the connection, nothing
is written. Two test clusters over real sockets: `lab`, the one pinned, and `stranger`, which the
bootstrap servers reach by mistake (staging DNS pointing at production, a copied Cluster document).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.testing.cluster import TestCluster
from tests.apply.test_apply_live import log_starts, seed

API_VERSIONS, METADATA = 18, 3
TOPICS = "kind: Topic\nname: cut.me\ntruncate: [{keep_last: 10}]\n---\nkind: Topic\nname: new.topic\n"


@pytest.fixture
def stranger():
    with TestCluster(brokers=3) as cluster:
        yield cluster


def _manifests(root: Path, lab: TestCluster) -> Path:
    root.mkdir()
    (root / "cluster.yaml").write_text(
        f"kind: Cluster\nname: lab\nbootstrap_servers: [{lab.bootstrap_servers}]\ncluster_id: {lab.cluster_id}\n"
        "defaults: {partitions: 2, replication_factor: 3}\n"
    )
    (root / "topics.yaml").write_text(TOPICS)
    return root


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def _refused_naming_both(result, lab: TestCluster, stranger: TestCluster) -> None:
    assert result.exit_code == 1, result.output
    message = result.output
    assert message.startswith(f"Error: cluster lab's bootstrap servers {stranger.bootstrap_servers.replace(',', ', ')} ")
    assert f"reached a cluster with id {stranger.cluster_id!r}" in message
    assert f"pins cluster_id {lab.cluster_id!r}" in message
    assert "Nothing was planned or written." in message
    # After the connection (ApiVersions, Metadata) nothing was asked of the stranger: no plan was made.
    assert {r.api_key for r in stranger.request_log} <= {API_VERSIONS, METADATA}


def test_the_pinned_cluster_is_read_and_written(tmp_path, test_cluster):
    lab = test_cluster
    seed(lab, "cut.me", records=100)
    root = _manifests(tmp_path / "manifests", lab)
    assert _run("plan", str(root), "--cluster", "lab").exit_code == 2
    result = _run("apply", "--manifests", str(root), "--cluster", "lab", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert log_starts(lab, "cut.me") == [90, 90] and "new.topic" in lab.topic_names()


def test_every_live_command_refuses_a_cluster_with_another_id(tmp_path, test_cluster, stranger):
    lab = test_cluster
    seed(lab, "cut.me", records=100)
    seed(stranger, "cut.me", records=100)
    root = _manifests(tmp_path / "manifests", lab)
    saved = tmp_path / "plan.json"
    made = _run("plan", str(root), "--cluster", "lab", "--format", "json", "-o", str(saved))
    assert made.exit_code == 2, made.output  # against lab itself: the saved plan is a good one
    assert json.loads(saved.read_text())["cluster_id"] == lab.cluster_id

    wrong = ("--bootstrap-servers", stranger.bootstrap_servers)
    commands = {
        "plan": ("plan", str(root), "--cluster", "lab", *wrong),
        "plan --offline": ("plan", str(root), "--cluster", "lab", "--offline", *wrong),
        "apply a saved plan": ("apply", str(saved), "--manifests", str(root), *wrong),
        "apply a fresh plan": ("apply", "--manifests", str(root), "--cluster", "lab", "--auto-approve", *wrong),
        "snapshot": ("snapshot", str(root), "--cluster", "lab", "-o", str(tmp_path / "snap.json"), *wrong),
        "drift": ("drift", str(root), "--cluster", "lab", *wrong),
        "import": ("import", str(root), "--cluster", "lab", *wrong),
    }
    before = {p.name: p.read_text() for p in root.iterdir()}
    for name, args in commands.items():
        stranger.clear_request_log()
        result = _run(*args)
        assert result.exit_code == 1, (name, result.output)
        _refused_naming_both(result, lab, stranger)
    # Nothing written: not on the stranger, not the snapshot file, not the manifests.
    assert log_starts(stranger, "cut.me") == [0, 0] and stranger.topic_names() == ["cut.me"]
    assert not (tmp_path / "snap.json").exists()
    assert {p.name: p.read_text() for p in root.iterdir()} == before
    # The same address set through the environment is named the same way.
    result = CliRunner().invoke(
        main, ["plan", str(root), "--cluster", "lab"], env={"RECONCILE_BOOTSTRAP_SERVERS": stranger.bootstrap_servers}
    )
    _refused_naming_both(result, lab, stranger)
