"""What fails after apply's first write (the read again, the throttle sweep, a cluster gone) never
hides what was written: the result (one outcome per action) is printed and saved in every format,
convergence is unknown with the reason, and the command exits 1. On the test cluster with Kafka's
authorizer, over real sockets."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from reconciler.app.apply_plan import cancel_reassignments
from reconciler.kafka.connection import connect
from reconciler.manifests import load_manifests
from reconciler.testing import Acl, TestCluster
from tests.apply import test_reassign_live as moves
from tests.apply.test_apply_live import Repo, outcome
from tests.kafka.helpers import CLUSTER, write_manifests

ME = "ANONYMOUS"
DELETE_RECORDS, ALTER_PARTITION_REASSIGNMENTS, DESCRIBE_CONFIGS, POLICY_VIOLATION = 21, 45, 32, 44
# Every kind of irreversible write, and a truncation by a consumer group's committed offsets.
EVERYTHING = """\
kind: Topic
name: fresh
partitions: 1
replication_factor: 1
---
kind: Topic
name: orders
partitions: 2
replication_factor: 1
configs: {retention.ms: 2d}
truncate: [{consumed_by: [billing]}]
---
kind: Topic
name: old
state: absent
"""
APPLIER = [
    *(Acl(ME, "topic", name, "ALL") for name in ("fresh", "orders", "old")),
    Acl(ME, "cluster", "kafka-cluster", "ALL"),
    Acl(ME, "group", "billing", "DESCRIBE"),
]


def seeded(cluster: TestCluster) -> TestCluster:
    cluster.create_topic("orders", partitions=1, replication_factor=1)
    cluster.create_topic("old", partitions=1, replication_factor=1)
    cluster.produce_many({("orders", 0): 20}, timestamp_ms=1_790_000_000_000, step_ms=1000)
    cluster.commit_offsets("billing", {("orders", 0): 12})
    return cluster


def applied_everything(result: dict) -> None:
    for kind, topic in [
        ("create_topic", "fresh"),
        ("add_partitions", "orders"),
        ("alter_configs", "orders"),
        ("truncate", "orders"),
        ("delete_topic", "old"),
    ]:
        assert outcome(result, kind, topic)["status"] == "applied", result


@pytest.mark.parametrize("fmt", ["json", "markdown", "text"])
def test_a_read_again_refused_after_every_write_still_reports_every_outcome(tmp_path, fmt):
    with seeded(TestCluster(brokers=1, acls=APPLIER)) as c:
        repo = Repo(tmp_path, c, EVERYTHING)
        code, _, output = repo.plan()
        assert code == 2, output
        # The applier lacks what the planner had: the read after the writes is refused
        # (FindCoordinator: GROUP_AUTHORIZATION_FAILED); the apply itself needs no group right.
        c.deny(ME, "group", "billing", "DESCRIBE")
        saved = tmp_path / f"result.{fmt}"
        run = repo.run(
            "apply", str(tmp_path / "plan.json"), "--manifests", str(tmp_path / "manifests"), "--format", fmt, "-o", str(saved)
        )
        assert run.exit_code == 1, run.output
        assert "Error:" not in run.output
        assert (
            c.topic_names()[-2:] == ["fresh", "orders"]
            and "old" not in c.topic_names()
            and c.partition("orders", 0).log_start_offset == 12
        )
        for report in (run.stdout, saved.read_text()):  # the text on stdout, and FILE in --format
            assert "Convergence unknown: reading the cluster again after the writes failed" in report or fmt == "json"
            assert "GROUP_AUTHORIZATION_FAILED" in report, report
            assert report.count("applied") >= 5
        if fmt == "json":
            result = json.loads(saved.read_text())
            applied_everything(result)
            assert result["succeeded"] is True and result["converged"] is None and result["follow_up"] is None
            assert "GROUP_AUTHORIZATION_FAILED" in result["convergence_unknown"]


def test_the_throttle_sweep_that_may_not_read_broker_configs_is_skipped_and_said_once(tmp_path):
    # Without ALTER (so without DESCRIBE) on the cluster the principal's cluster operations are
    # unknown: the sweep is tried, and DescribeConfigs of a broker is refused.
    acls = [a for a in APPLIER if a.resource_type != "cluster"]
    with seeded(TestCluster(brokers=1, acls=acls)) as c:
        repo = Repo(tmp_path, c, EVERYTHING)
        assert repo.plan()[0] == 2
        saved = tmp_path / "result.json"
        run = repo.run(
            "apply", str(tmp_path / "plan.json"), "--manifests", str(tmp_path / "manifests"), "--format", "json", "-o", str(saved)
        )
        result = json.loads(saved.read_text())
        applied_everything(result)
        assert run.exit_code == 0 and result["converged"] is True, run.output
        line = "the replication throttle rates an earlier apply may have left on the brokers were not checked: "
        assert run.stderr.count(line) == 1, run.stderr
        assert "DescribeConfigs of broker 1 failed with CLUSTER_AUTHORIZATION_FAILED" in run.stderr
        assert (
            "To let apply check and remove them, grant DESCRIBE_CONFIGS on the cluster (kafka-acls --add "
            "--allow-principal <principal> --operation DescribeConfigs --cluster)"
        ) in run.stderr
        assert "Error:" not in run.output


def test_a_cluster_gone_while_truncating_reports_what_was_written_and_what_was_not(tmp_path):
    with seeded(TestCluster(brokers=1, acls=APPLIER)) as c:
        repo = Repo(tmp_path, c, EVERYTHING)
        assert repo.plan()[0] == 2
        c.delay(api_key=DELETE_RECORDS, seconds=1.0)

        def stop_when_truncating() -> None:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if any(r.api_name == "DeleteRecords" for r in c.request_log):
                    c.stop_broker(1)
                    return
                time.sleep(0.01)

        stopper = threading.Thread(target=stop_when_truncating)
        stopper.start()
        code, result = repo.apply()
        stopper.join()
        assert code == 1
        for kind, topic in [("create_topic", "fresh"), ("add_partitions", "orders"), ("alter_configs", "orders")]:
            assert outcome(result, kind, topic)["status"] == "applied", result
        cut = outcome(result, "truncate", "orders")
        assert cut["status"] == "failed" and "whether the brokers took it is unknown" in json.dumps(cut), cut
        deleted = outcome(result, "delete_topic", "old")
        assert deleted["status"] == "refused" and deleted["message"].startswith("not sent: apply stopped before it ("), deleted
        assert result["converged"] is None and result["convergence_unknown"], result


def test_a_cancel_whose_throttle_clean_up_fails_still_reports_the_cancel(test_cluster, tmp_path):
    c = test_cluster
    moves.seeded(c, "managed", [[1], [2]])
    root = write_manifests(tmp_path / "m", c.bootstrap_servers, moves.topics_yaml("managed"))
    desired = load_manifests(root).desired_state(CLUSTER)
    c.stall_reassignments(True)
    plan = moves.move_plan(c, "managed", {0: [1, 2, 3], 1: [2, 3, 1]}, throttle=moves.MiB)
    moves.apply(c, desired, plan, reassignment_wait_s=0)
    # Once the cancel is sent, every DescribeConfigs fails: the clean-up cannot read what to remove.
    c.delay(api_key=ALTER_PARTITION_REASSIGNMENTS, seconds=0.5, times=1)

    def refuse_reads_once_cancelling() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any(r.api_name == "AlterPartitionReassignments" for r in c.request_log):
                c.inject_error(api_key=DESCRIBE_CONFIGS, error_code=POLICY_VIOLATION, times=None)
                return
            time.sleep(0.01)

    c.clear_request_log()
    injector = threading.Thread(target=refuse_reads_once_cancelling)
    injector.start()
    outcome = cancel_reassignments(str(root), CLUSTER, lambda spec: connect(spec, request_timeout_s=5.0))
    injector.join()
    [cancelled] = outcome.result.outcomes
    assert [p.message for p in cancelled.partitions] == [
        "reverted to [1] (it was moving to [1, 2, 3])",
        "reverted to [2] (it was moving to [2, 3, 1])",
    ]
    assert c.replicas("managed") == {0: [1], 1: [2]} and moves.throttles(c, "managed")["brokers"]
    assert "the replication throttles could not all be removed (" in cancelled.message, cancelled.message
    assert "the next apply removes the broker rates this tool set" in cancelled.message


def test_an_apply_terminated_while_truncating_reports_what_was_written_and_what_was_not(tmp_path):
    # A cancelled CI job: SIGTERM to the command in its own process, while DeleteRecords is in flight.
    with seeded(TestCluster(brokers=1, acls=APPLIER)) as c:
        repo = Repo(tmp_path, c, EVERYTHING)
        assert repo.plan()[0] == 2
        c.delay(api_key=DELETE_RECORDS, seconds=5.0)
        saved = tmp_path / "result.json"
        command = [sys.executable, "-m", "reconciler", "apply", str(tmp_path / "plan.json"), "--manifests"]
        command += [str(tmp_path / "manifests"), "--format", "json", "-o", str(saved), "--bootstrap-servers", c.bootstrap_servers]
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as apply:
            deadline = time.monotonic() + 60
            while not any(r.api_name == "DeleteRecords" for r in c.request_log) and time.monotonic() < deadline:
                time.sleep(0.01)
            apply.send_signal(signal.SIGTERM)
            stdout, stderr = apply.communicate(timeout=60)
        assert apply.returncode == 1, stderr
        assert "Traceback" not in stderr and "Error:" not in stderr, stderr
        assert "Convergence unknown: apply was interrupted (Ctrl-C or SIGTERM) while writing" in stdout, stdout
        result = json.loads(saved.read_text())
        for kind, topic in [("create_topic", "fresh"), ("add_partitions", "orders"), ("alter_configs", "orders")]:
            assert outcome(result, kind, topic)["status"] == "applied", result
        cut = outcome(result, "truncate", "orders")
        assert cut["status"] == "failed" and "whether the brokers took it is unknown" in json.dumps(cut), cut
        assert outcome(result, "delete_topic", "old")["message"].startswith("not sent: apply stopped before it (interrupted")
        assert "old" in c.topic_names()
        assert result["converged"] is None and result["follow_up"] is None, result
