"""The planner and apply on the adapter, end to end: a plan made from a live read is applied, and
the safety checks hold when the cluster moves between plan and apply."""
from __future__ import annotations

from reconciler.apply import apply_plan
from reconciler.models.result import Status
from reconciler.planner import plan
from tests.kafka.helpers import kafka_of

DELETE_RECORDS = 21
CHANGES = """\
kind: Topic
name: new.topic
partitions: 2
configs: {retention.ms: 1d}
---
kind: Topic
name: grow
---
kind: Topic
name: conf
partitions: 1
configs: {retention.ms: 2d}
---
kind: Topic
name: cut
truncate: [{keep_last: 5}]
"""
CUT_TEN = """\
kind: Topic
name: cut
partitions: 1
replication_factor: 2
truncate: [{keep_last: 10}]
"""


def statuses(result) -> dict:
    return {o.topic: o.status for o in result.outcomes}


def test_a_live_plan_applies_and_the_cluster_converges(test_cluster, kafka, desired_for):
    test_cluster.create_topic("grow", partitions=1)
    test_cluster.create_topic("conf", partitions=1)
    test_cluster.create_topic("cut", partitions=3)
    test_cluster.produce_many({("cut", p): 20 for p in range(3)})
    desired = desired_for(CHANGES)
    made = plan(desired, kafka.observe_desired(desired))
    assert [a.kind for a in made.actions] == ["create_topic", "add_partitions", "alter_configs", "truncate"]

    result = apply_plan(made, kafka, desired)
    assert statuses(result) == {"new.topic": Status.APPLIED, "grow": Status.APPLIED, "conf": Status.APPLIED,
                                "cut": Status.APPLIED}
    assert [test_cluster.partition("cut", p).log_start_offset for p in range(3)] == [15, 15, 15]
    assert test_cluster.topic_configs("conf") == {"retention.ms": "172800000"}
    assert not plan(desired, kafka.observe_desired(desired)).has_changes


def test_a_truncation_is_refused_when_the_log_diverged_after_the_plan(test_cluster, kafka, desired_for):
    test_cluster.create_topic("cut", partitions=1, replication_factor=2)
    test_cluster.produce_many({("cut", 0): 50})
    desired = desired_for(CUT_TEN)
    made = plan(desired, kafka.observe_desired(desired))
    assert made.actions[0].partitions[0].target_offset == 40

    # An unclean election loses records 20..49; producers then bring the high watermark back.
    test_cluster.unclean_election("cut", 0, truncate_to=20)
    test_cluster.produce_many({("cut", 0): 30})
    [outcome] = apply_plan(made, kafka, desired).outcomes
    assert outcome.status is Status.REFUSED and "diverged" in outcome.partitions[0].message
    assert test_cluster.partition("cut", 0).log_start_offset == 0


def test_a_clean_leader_change_between_plan_and_apply_does_not_stop_a_truncation(test_cluster, kafka, desired_for):
    test_cluster.create_topic("cut", partitions=1, replication_factor=2)
    test_cluster.produce_many({("cut", 0): 50})
    desired = desired_for(CUT_TEN)
    made = plan(desired, kafka.observe_desired(desired))
    follower = test_cluster.partition("cut", 0).replicas[1]
    test_cluster.move_leader("cut", 0, to=follower, unknown_epoch_responses=1)

    [outcome] = apply_plan(made, kafka, desired).outcomes
    assert outcome.status is Status.APPLIED
    assert test_cluster.partition("cut", 0).log_start_offset == 40
    assert test_cluster.request_log[-1].broker_id == follower


def test_a_lost_delete_records_answer_is_confirmed_from_the_log_start(test_cluster, desired_for):
    test_cluster.create_topic("cut", partitions=1, replication_factor=2)
    test_cluster.produce_many({("cut", 0): 50})
    desired = desired_for(CUT_TEN)
    with kafka_of(test_cluster, request_timeout_s=1.0) as kafka:
        made = plan(desired, kafka.observe_desired(desired))
        test_cluster.drop(DELETE_RECORDS, times=1, apply=True)
        [outcome] = apply_plan(made, kafka, desired).outcomes
    assert outcome.status is Status.APPLIED and "confirmed" in outcome.partitions[0].message
    assert [r.api_name for r in test_cluster.request_log].count("DeleteRecords") == 1


def test_a_failed_write_stops_the_later_actions_on_its_topic_and_no_other(test_cluster, kafka, desired_for):
    """The brokers' preflight passed, then the real config change failed: that topic's truncation
    is not sent (it was reviewed together with the config change), the other topic's still is."""
    POLICY_VIOLATION, ALTER = 44, 44
    for name in ("conf", "other"):
        test_cluster.create_topic(name, partitions=1)
        test_cluster.produce_many({(name, 0): 20})
    desired = desired_for("kind: Topic\nname: conf\npartitions: 1\nconfigs: {retention.ms: 2d}\n"
                          "truncate: [{keep_last: 5}]\n---\nkind: Topic\nname: other\npartitions: 1\n"
                          "truncate: [{keep_last: 5}]\n")
    made = plan(desired, kafka.observe_desired(desired))

    test_cluster.inject_error(ALTER, POLICY_VIOLATION, times=1, validate_only=False)
    result = apply_plan(made, kafka, desired)
    outcomes = {(o.kind, o.topic): o for o in result.outcomes}
    assert outcomes[("alter_configs", "conf")].status is Status.FAILED
    cut = outcomes[("truncate", "conf")]
    assert cut.status is Status.REFUSED and "not sent" in cut.message and "alter configs" in cut.message
    assert outcomes[("truncate", "other")].status is Status.APPLIED
    assert test_cluster.partition("conf", 0).log_start_offset == 0
    assert test_cluster.partition("other", 0).log_start_offset == 15
