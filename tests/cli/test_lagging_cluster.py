"""Issue 27, case by case, against a test cluster whose brokers show writes late, as a real Kafka
4.0 cluster does (KAFKA_SEMANTICS.md, "how soon a write is visible"): results are read only once
every broker shows the write, new topics are created where the plan places them, and a
throttle rate this tool set is removed by whichever run finishes or cancels the reassignment."""

from __future__ import annotations

import time

import pytest

from reconciler.app.apply_plan import apply_changes
from reconciler.apply.executor import ApplyOptions
from reconciler.kafka.connection import connect
from reconciler.models.result import Status
from reconciler.ports import ConfigChangeOp, ConfigOp, ConfigResource
from reconciler.testing import TestCluster
from tests.cli.test_reassign_cli import RATES, Lab, throttles_left, topic
from tests.kafka.helpers import CLUSTER, kafka_of, spec_of

pytestmark = pytest.mark.live

# The delays measured on a real cluster: the in-progress list empties at once, Metadata and
# configs follow 100-500 ms later, on each broker after its own delay.
REAL_DELAYS = {1: 0.15, 2: 0.47, 3: 0.3}
# The marker apply writes next to a rate it sets (README, "Rates it set are marked").
MARKER_PREFIX = "reconciler.throttle."


def rates_and_markers(c: TestCluster) -> dict[int, list[str]]:
    return {
        b: sorted(k for k in c.dynamic_broker_configs(b) if k in RATES or k.startswith(MARKER_PREFIX))
        for b in c.broker_ids
        if any(k in RATES or k.startswith(MARKER_PREFIX) for k in c.dynamic_broker_configs(b))
    }


# -- 1. results read before the cluster has caught up with the write -----------------------------


def test_three_to_two_is_applied_and_converged_although_metadata_shows_it_late(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("shrink.v1", partitions=3, replication_factor=3)
        lab = Lab(tmp_path, c, topic("shrink.v1", 2))
        applied = lab.apply("--reassignment-wait", "30s")
        assert applied.exit_code == 0, applied.output
        assert "reassign replicas shrink.v1: replicas reassigned (3 reassigned)" in applied.stdout
        assert "Converged: planning again shows no changes." in applied.stdout
        assert all(len(r) == 2 for r in c.replicas("shrink.v1").values())


def test_cancel_reports_the_revert_the_brokers_show(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("undo.v1", partitions=2, replication_factor=1)
        before = c.replicas("undo.v1")
        lab = Lab(tmp_path, c, topic("undo.v1", 3, partitions=2))
        c.stall_reassignments(True)
        assert lab.apply("--reassignment-wait", "0s").exit_code == 0
        # Adding replicas only: while it runs, Metadata already lists the target replicas, so a
        # read made before the brokers show the revert would call it finished.
        cancelled = lab.apply("--cancel-reassignments")
        assert cancelled.exit_code == 0, cancelled.output
        assert "reassign replicas undo.v1: 2 reverted" in cancelled.stdout
        assert "before it could be cancelled" not in cancelled.stdout
        assert c.replicas("undo.v1") == before


def test_the_follow_up_plan_sees_a_config_change_every_broker_shows_late(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("cfg.v1", partitions=1, configs={"retention.ms": "86400000"})
        lab = Lab(tmp_path, c, topic("cfg.v1", 1, partitions=1) + "configs: {retention.ms: 172800000}\n")
        applied = lab.apply()
        assert applied.exit_code == 0, applied.output
        assert "Converged: planning again shows no changes." in applied.stdout


def test_a_write_the_brokers_do_not_show_in_time_is_reported_so(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay={1: 0.0, 2: 5.0, 3: 0.0}) as c:
        c.create_topic("slow.v1", partitions=1, configs={"retention.ms": "86400000"})
        lab = Lab(tmp_path, c, topic("slow.v1", 1, partitions=1) + "configs: {retention.ms: 172800000}\n")

        class Approve:
            def show(self, plan):
                pass

            def approve(self, plan, cluster):
                pass

        outcome = apply_changes(
            str(lab.root),
            None,
            CLUSTER,
            lambda spec: connect(spec_of(c), request_timeout_s=5.0),
            Approve(),
            ApplyOptions(confirm_timeout_s=0.5),
        )
        assert outcome.result is not None
        [action] = outcome.result.outcomes
        assert action.status is Status.FAILED
        assert action.message.startswith("written; not yet visible on broker 2 after 0.5 s")
        assert c.topic_configs("slow.v1")["retention.ms"] == "172800000"  # written all the same


# -- 2. new topics placed by the plan, not by Kafka ---------------------------------------------


def test_a_pinned_new_topic_is_created_where_pinned_and_converges_in_one_apply(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        pins = "replica_assignment: {0: [2, 3], 1: [2, 3], 2: [3, 2]}\n"
        lab = Lab(tmp_path, c, topic("pinned.v1", 2) + pins)
        planned = lab.plan()
        assert planned.exit_code == 2 and "replicas: 0: [2, 3], 1: [2, 3], 2: [3, 2]" in planned.stdout
        applied = lab.apply()
        assert applied.exit_code == 0, applied.output
        assert "Converged: planning again shows no changes." in applied.stdout
        assert c.replicas("pinned.v1") == {0: [2, 3], 1: [2, 3], 2: [3, 2]}


def test_a_new_topic_puts_nothing_on_a_drained_broker(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        lab = Lab(tmp_path, c, topic("drained.v1", 2), cluster_extra="drain_brokers: [3]\n")
        applied = lab.apply()
        assert applied.exit_code == 0, applied.output
        assert "Converged: planning again shows no changes." in applied.stdout
        assert all(sorted(r) == [1, 2] for r in c.replicas("drained.v1").values())


# -- 3. cancel (or the apply that finishes) removes the rates this tool set ----------------------


def test_cancel_removes_the_rates_this_tool_set_and_leaves_someone_elses(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("undo.v1", partitions=2, replication_factor=1)
        lab = Lab(tmp_path, c, topic("undo.v1", 3, partitions=2))
        c.stall_reassignments(True)
        assert lab.apply("--reassignment-wait", "0s", "--throttle", "10KiB").exit_code == 0
        assert rates_and_markers(c)  # set, with their markers
        cancelled = lab.apply("--cancel-reassignments")  # no --throttle: the markers say which rates
        assert cancelled.exit_code == 0, cancelled.output
        assert rates_and_markers(c) == {}
        assert throttles_left(c, "undo.v1") == []
        # Nothing is restored as "the earlier value" by a later apply.
        assert lab.apply("--reassignment-wait", "0s").exit_code == 0
        assert rates_and_markers(c) == {}


def test_the_apply_that_finishes_removes_an_earlier_applys_rates(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("grow.v1", partitions=2, replication_factor=1)
        lab = Lab(tmp_path, c, topic("grow.v1", 3, partitions=2))
        c.stall_reassignments(True)
        assert lab.apply("--reassignment-wait", "0s", "--throttle", "10KiB").exit_code == 0
        c.stall_reassignments(False)
        finished = lab.apply("--reassignment-wait", "30s")  # no --throttle this time
        assert finished.exit_code == 0, finished.output
        assert "Converged" in finished.stdout
        assert rates_and_markers(c) == {}
        assert throttles_left(c, "grow.v1") == []


def test_a_rate_someone_else_set_stays_through_apply_and_cancel(tmp_path):
    with TestCluster(brokers=3, metadata_propagation_delay=REAL_DELAYS) as c:
        c.create_topic("keep.v1", partitions=1, replication_factor=1)
        [leader] = c.replicas("keep.v1")[0]
        lab = Lab(tmp_path, c, topic("keep.v1", 3, partitions=1))
        with kafka_of(c) as kafka:  # an operator's rate, equal to the one apply sets
            resource = ConfigResource("broker", str(leader))
            assert kafka.alter_config_ops({resource: [ConfigChangeOp(RATES[0], ConfigOp.SET, "10240")]}) == {resource: None}
        time.sleep(max(REAL_DELAYS.values()) + 0.1)  # every broker shows it before apply reads
        c.stall_reassignments(True)
        assert lab.apply("--reassignment-wait", "0s", "--throttle", "10KiB").exit_code == 0
        cancelled = lab.apply("--cancel-reassignments")
        assert cancelled.exit_code == 0, cancelled.output
        assert c.dynamic_broker_configs(leader) == {RATES[0]: "10240"}
        assert rates_and_markers(c) == {leader: [RATES[0]]}
