"""apply_plan on the adapter directly, for what the CLI-level tests (test_apply_live.py) cannot
arrange: a DeleteRecords answer lost on the wire, and a write that fails after its preflight passed.
(Convergence, diverged logs and clean leader changes are tested there, through saved plans.)"""

from __future__ import annotations

from reconciler.apply.executor import apply_plan
from reconciler.models.plan import ActionKind
from reconciler.models.result import Status
from reconciler.plan.planner import plan
from tests.kafka.helpers import kafka_of

DELETE_RECORDS = 21
CUT_TEN = """\
kind: Topic
name: cut
partitions: 1
replication_factor: 2
truncate: [{keep_last: 10}]
"""


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
    desired = desired_for(
        "kind: Topic\nname: conf\npartitions: 1\nconfigs: {retention.ms: 2d}\n"
        "truncate: [{keep_last: 5}]\n---\nkind: Topic\nname: other\npartitions: 1\n"
        "truncate: [{keep_last: 5}]\n"
    )
    made = plan(desired, kafka.observe_desired(desired))

    test_cluster.inject_error(ALTER, POLICY_VIOLATION, times=1, validate_only=False)
    result = apply_plan(made, kafka, desired)
    outcomes = {(o.kind, o.topic): o for o in result.outcomes}
    assert outcomes[(ActionKind.ALTER_CONFIGS, "conf")].status is Status.FAILED
    cut = outcomes[(ActionKind.TRUNCATE, "conf")]
    assert cut.status is Status.REFUSED and "not sent" in cut.message and "alter configs" in cut.message
    assert outcomes[(ActionKind.TRUNCATE, "other")].status is Status.APPLIED
    assert test_cluster.partition("conf", 0).log_start_offset == 0
    assert test_cluster.partition("other", 0).log_start_offset == 15


def test_truncations_of_many_topics_go_together_and_a_brokers_refusal_stays_on_its_partitions(test_cluster, desired_for):
    """One DeleteRecords per leader broker for every topic's truncation; broker 2 refuses its own
    (POLICY_VIOLATION), and just the partitions it leads, of every topic, fail."""
    POLICY_VIOLATION = 44
    names = ("a", "b", "c")
    for name in names:
        test_cluster.create_topic(name, partitions=3, replication_factor=1)
        test_cluster.produce_many({(name, p): 20 for p in range(3)})
    desired = desired_for("".join(f"---\nkind: Topic\nname: {n}\npartitions: 3\ntruncate: [{{keep_last: 5}}]\n" for n in names))
    led_by_2 = {(n, p) for n in names for p in range(3) if test_cluster.partition(n, p).leader == 2}
    assert led_by_2 and len(led_by_2) < 9
    with kafka_of(test_cluster) as kafka:
        made = plan(desired, kafka.observe_desired(desired))
        test_cluster.inject_error(DELETE_RECORDS, POLICY_VIOLATION, broker=2)
        test_cluster.clear_request_log()
        outcomes = apply_plan(made, kafka, desired).outcomes
    assert [r.broker_id for r in test_cluster.request_log if r.api_name == "DeleteRecords"].count(2) == 1
    assert len([r for r in test_cluster.request_log if r.api_name == "DeleteRecords"]) == 3
    for o in outcomes:
        for p in o.partitions:
            if (o.topic, p.partition) in led_by_2:
                assert p.status is Status.FAILED and p.message.startswith("the broker refused: POLICY_VIOLATION"), p
                assert test_cluster.partition(o.topic, p.partition).log_start_offset == 0
            else:
                assert p.status is Status.APPLIED and p.low_watermark == 15, p
