"""Replication-factor changes through the real CLI against the test cluster: plan -> apply -> plan,
`--throttle`, `--reassignment-wait`, `--elect-leaders`, `--cancel-reassignments`, progress on
stderr, and the exit codes of a reassignment still in progress."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.testing import TestCluster
from tests.kafka.helpers import CLUSTER, write_manifests

RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def topic(name: str, rf: int, partitions: int = 3) -> str:
    return f"---\nkind: Topic\nname: {name}\npartitions: {partitions}\nreplication_factor: {rf}\n"


class Lab:
    """Manifests for the test cluster, run through the CLI."""

    def __init__(self, tmp_path, cluster, topics: str, cluster_extra: str = ""):
        self.cluster = cluster
        self.root = write_manifests(tmp_path / "m", "127.0.0.1:1", topics, cluster_extra)

    def write(self, topics: str) -> None:
        (self.root / "topics.yaml").write_text(topics)

    def run(self, *args: str):
        result = CliRunner().invoke(main, [*args, "--bootstrap-servers", self.cluster.bootstrap_servers])
        assert "Traceback" not in result.output, result.output
        return result

    def plan(self):
        return self.run("plan", str(self.root), "--cluster", CLUSTER, "--no-color")

    def apply(self, *extra: str):
        return self.run("apply", "--manifests", str(self.root), "--cluster", CLUSTER, "--auto-approve", "--no-color", *extra)


def throttles_left(c, topic_name: str) -> list:
    return [k for k in THROTTLED if k in c.topic_configs(topic_name)] + [
        (b, k) for b in c.broker_ids for k in RATES if k in c.dynamic_broker_configs(b)
    ]


def test_one_to_three_plan_apply_plan_converges_with_progress_on_stderr(tmp_path, test_cluster):
    c = test_cluster
    c.create_topic("orders.v1", partitions=3, replication_factor=1)
    c.produce_many({("orders.v1", p): 100 for p in range(3)}, timestamp_ms=1_790_000_000_000, step_ms=1000)
    lab = Lab(tmp_path, c, topic("orders.v1", 3))
    planned = lab.plan()
    assert planned.exit_code == 2 and "replication factor 1 -> 3" in planned.stdout

    applied = lab.apply("--throttle", "10MiB", "--reassignment-wait", "30s", "--elect-leaders")
    assert applied.exit_code == 0, applied.output
    assert "reassign replicas orders.v1: replicas reassigned (3 reassigned)" in applied.stdout
    assert "Converged: planning again shows no changes." in applied.stdout
    assert "reassigning replicas of 3 partition(s), throttled at 10.0 MiB/s" in applied.stderr
    assert "reassigning replicas: 3 of 3 partition(s) done" in applied.stderr
    assert all(len(r) == 3 for r in c.replicas("orders.v1").values())
    assert throttles_left(c, "orders.v1") == []
    assert lab.plan().exit_code == 0


def test_three_to_two_converges(tmp_path, test_cluster):
    c = test_cluster
    c.create_topic("shrink.v1", partitions=3, replication_factor=3)
    lab = Lab(tmp_path, c, topic("shrink.v1", 2))
    saved = tmp_path / "result.json"
    applied = lab.apply("--format", "json", "-o", str(saved))
    assert applied.exit_code == 0, applied.output
    result = json.loads(saved.read_text())
    [outcome] = result["outcomes"]
    assert outcome["status"] == "applied" and result["converged"] is True
    assert all(len(p["replicas"]) == 2 for p in outcome["partitions"])
    assert all(len(r) == 2 for r in c.replicas("shrink.v1").values())
    assert lab.plan().exit_code == 0


def test_in_progress_exits_0_not_converged_then_the_next_apply_resumes_and_removes_throttles(tmp_path, test_cluster):
    c = test_cluster
    c.create_topic("slow.v1", partitions=2, replication_factor=1)
    lab = Lab(
        tmp_path,
        c,
        topic("slow.v1", 2, partitions=2) + topic("other.v1", 1, partitions=1),
        cluster_extra="reassignment: {throttle: 1MiB, wait: 1s}\n",
    )
    c.stall_reassignments(True)
    first = lab.apply()
    assert first.exit_code == 0, first.output
    assert "in progress        reassign replicas slow.v1: 2 in progress; not finished within 1s" in first.stdout
    assert "Not converged: 2 partition(s) still being reassigned (slow.v1-0, slow.v1-1)" in first.stdout
    assert "--cancel-reassignments" in first.stdout
    assert "left to wait" in first.stderr
    involved = {b for r in c.replicas("slow.v1").values() for b in r}
    assert len(throttles_left(c, "slow.v1")) == 2 + 2 * len(involved)  # both topic lists; both rates per broker

    # The next plan shows the reassignment in progress; the next apply waits for it (the copy goes on
    # once that apply is polling: its third ListPartitionReassignments, after its plan and its re-read).
    assert "in progress" in lab.plan().stdout
    c.clear_request_log()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(lab.apply, "--reassignment-wait", "30s")
        while sum(r.api_name == "ListPartitionReassignments" for r in c.request_log) < 3 and not running.done():
            time.sleep(0.02)
        c.stall_reassignments(False)
        resumed = running.result()
    assert resumed.exit_code == 0, resumed.output
    assert "reassign replicas slow.v1: replicas reassigned (2 reassigned)" in resumed.stdout
    assert "Converged" in resumed.stdout
    assert "AlterPartitionReassignments" not in {r.api_name for r in c.request_log[-40:]}
    assert throttles_left(c, "slow.v1") == []
    assert lab.plan().exit_code == 0


def test_cancel_reverts_and_reports(tmp_path, test_cluster):
    c = test_cluster
    c.create_topic("undo.v1", partitions=2, replication_factor=1)
    before = c.replicas("undo.v1")
    lab = Lab(tmp_path, c, topic("undo.v1", 3, partitions=2))
    c.stall_reassignments(True)
    assert lab.apply("--reassignment-wait", "0s", "--throttle", "1MiB").exit_code == 0
    cancelled = lab.apply("--cancel-reassignments", "--throttle", "1MiB")
    assert cancelled.exit_code == 0, cancelled.output
    assert "reassign replicas undo.v1: 2 reverted" in cancelled.stdout
    assert f"partition 0: applied (replicas {before[0]}) - reverted to {before[0]}" in cancelled.stdout
    assert "Not converged" in cancelled.stdout  # the manifests still ask for it
    assert c.replicas("undo.v1") == before and c.reassignments() == {}
    assert throttles_left(c, "undo.v1") == []


def test_bad_options_are_one_error_each(tmp_path):
    root = write_manifests(tmp_path / "m", "127.0.0.1:1", topic("a.v1", 1))
    for args, expected in (
        (["--throttle", "0"], "0 would stop replication"),
        (["--throttle", "fast"], "is not a size"),
        (["--reassignment-wait", "soon"], "is not a duration"),
        # beyond a long (int64), as a number without a unit would be: refused before connecting
        (["--throttle", "99999999TiB"], "'99999999TiB' is above the largest value Kafka takes"),
        (["--reassignment-wait", "99999999999999w"], "'99999999999999w' is above the largest value Kafka takes"),
        (["plan.json", "--cancel-reassignments"], "--cancel-reassignments takes no plan file"),
    ):
        result = CliRunner().invoke(main, ["apply", "--manifests", str(root), "--cluster", CLUSTER, *args])
        assert result.exit_code == 1 and expected in result.output, result.output
        assert "Traceback" not in result.output


@pytest.mark.parametrize("racks", [None, ["a", "b", "c", "a", "b", "c"]])
def test_six_brokers_one_to_three_with_and_without_racks(tmp_path, racks):
    with TestCluster(brokers=6, racks=racks) as c:
        c.create_topic("spread.v1", partitions=6, replication_factor=1)
        lab = Lab(tmp_path, c, topic("spread.v1", 3, partitions=6))
        applied = lab.apply("--reassignment-wait", "30s")
        assert applied.exit_code == 0 and "Converged" in applied.stdout, applied.output
        replicas = c.replicas("spread.v1")
        assert all(len(set(r)) == 3 for r in replicas.values())
        if racks:
            rack = dict(zip(c.broker_ids, racks))
            assert all(len({rack[b] for b in r}) == 3 for r in replicas.values())
        assert lab.plan().exit_code == 0
