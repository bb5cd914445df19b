"""A saved plan applied again after an interrupted apply (what a user does when CI killed the job),
and what apply says when something is left to clean up: the facts, never a guess at who did what.
Over real sockets, on the test cluster."""

from __future__ import annotations

from reconciler.apply.reassignment import sweep
from reconciler.manifests import load_manifests
from reconciler.models.plan import AlterConfigs
from reconciler.models.result import Status
from reconciler.plan.planner import plan as make_plan
from reconciler.testing import TestCluster
from tests.apply.test_apply_live import Repo, outcome
from tests.apply.test_reassign_live import MiB, apply, move_plan, seeded, throttles, topics_yaml
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

CREATES = """\
kind: Topic
name: made.before
partitions: 3
configs: {retention.ms: 2d, cleanup.policy: delete}
---
kind: Topic
name: made.other
partitions: 3
---
kind: Topic
name: not.yet
partitions: 2
"""
INCREMENTAL_ALTER_CONFIGS, POLICY_VIOLATION = 44, 44


def test_a_topic_created_exactly_as_planned_is_already_satisfied_and_one_that_differs_says_how(tmp_path, test_cluster):
    c = test_cluster
    repo = Repo(tmp_path, c, CREATES)
    code, plan, output = repo.plan()
    assert code == 2 and plan["summary"]["create"] == 3, output
    # What an interrupted apply of this plan leaves, and a topic made differently since.
    c.create_topic(
        "made.before", partitions=3, replication_factor=3, configs={"retention.ms": "172800000", "cleanup.policy": "delete"}
    )
    c.create_topic("made.other", partitions=1, replication_factor=3)

    code, result = repo.apply()
    before = outcome(result, "create_topic", "made.before")
    assert before["status"] == "already_satisfied", before
    assert before["message"] == (
        "the topic exists exactly as the plan creates it (created since the plan was made; an interrupted apply of "
        "this plan may have made it so)"
    )
    other = outcome(result, "create_topic", "made.other")
    assert other["status"] == "refused" and "outside" not in other["message"], other
    assert other["message"].startswith("the cluster moved since the plan: made.other was created since the plan was made (id ")
    assert other["message"].endswith(
        "; an interrupted apply of this plan may have made it), and it differs from what the plan creates: it has 1 "
        "partitions, the plan creates 3"
    )
    assert outcome(result, "create_topic", "not.yet")["status"] == "applied"
    assert code == 1 and c.partition_count("made.other") == 1

    # The same saved plan once more, after it ran to the end: nothing refused but what differs.
    code, again = repo.apply()
    assert [(o["topic"], o["status"]) for o in again["outcomes"]] == [
        ("made.before", "already_satisfied"),
        ("made.other", "refused"),
        ("not.yet", "already_satisfied"),
    ]


EVERY_KIND = """\
kind: Topic
name: fresh
partitions: 2
configs: {retention.ms: 2d}
---
kind: Topic
name: grown
partitions: 4
configs: {retention.ms: 1d}
truncate: [{keep_last: 10}]
---
kind: Topic
name: gone
state: absent
"""


def test_a_saved_plan_applied_again_after_it_ran_finds_every_action_already_satisfied(tmp_path, test_cluster):
    c = test_cluster
    for name in ("grown", "gone"):
        c.create_topic(name, partitions=2, replication_factor=3, configs={"retention.ms": "604800000"})
        c.produce_many({(name, p): 50 for p in range(2)}, timestamp_ms=1_790_000_000_000, step_ms=1000)
    repo = Repo(tmp_path, c, EVERY_KIND)
    code, plan, output = repo.plan()
    assert code == 2, output
    kinds = [(a["kind"], a["topic"]) for a in plan["actions"]]
    assert kinds == [
        ("create_topic", "fresh"),
        ("add_partitions", "grown"),
        ("alter_configs", "grown"),
        ("truncate", "grown"),
        ("delete_topic", "gone"),
    ]
    code, first = repo.apply()
    assert code == 0 and {o["status"] for o in first["outcomes"]} == {"applied"}, first
    c.clear_request_log()
    code, again = repo.apply()  # CI ran the job twice, or re-ran one it killed after the last write
    assert [(o["kind"], o["topic"], o["status"]) for o in again["outcomes"]] == [(*k, "already_satisfied") for k in kinds]
    assert code == 0 and again["converged"] is True, again
    messages = [o["message"] for o in again["outcomes"]]
    assert messages[1] == (
        "the topic has 4 partitions already (since the plan was made; an interrupted apply of this plan may have made it so)"
    )
    assert messages[4].startswith("the topic no longer exists (deleted since the plan was made;")
    sent = [r.api_name for r in c.request_log if not getattr(r.request, "validate_only", False)]
    assert not {"CreateTopics", "CreatePartitions", "DeleteRecords", "DeleteTopics"} & set(sent)


def test_a_throttle_that_could_not_be_removed_is_left_to_the_next_apply_not_to_the_user(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "moved", [[1], [2]])
    desired = desired_for(topics_yaml("moved", rf=2))
    lines: list[str] = []

    def refuse_the_removal(line: str) -> None:
        lines.append(line)
        if "partition(s) done" in line and line.split(": ")[1].startswith("2 of 2"):
            c.inject_error(api_key=INCREMENTAL_ALTER_CONFIGS, error_code=POLICY_VIOLATION, times=None, validate_only=False)

    result = apply(c, desired, move_plan(c, "moved", {0: [1, 2], 1: [2, 3]}, throttle=MiB), progress=refuse_the_removal)
    [moved] = result.outcomes
    assert moved.status is Status.APPLIED, moved
    assert "by hand" not in moved.message, moved.message
    assert "the next apply removes the rates this tool set (it finds them by their markers)" in moved.message
    assert "the next plan removes them (a throttled-replica list the manifests do not declare is a change)" in moved.message
    left = throttles(c, "moved")
    assert left["topic"] and left["brokers"], left

    c.clear_faults()  # and both claims hold: the next plan removes the lists, the next apply's sweep the rates
    with kafka_of(c) as kafka:
        observed = kafka.observe_desired(desired, every_offset=False)
        [change] = [a for a in make_plan(desired, observed).actions if isinstance(a, AlterConfigs)]
        assert {k.key for k in change.changes} >= {"leader.replication.throttled.replicas"}
        assert sweep(observed, kafka, desired.cluster, lines.append) == []
    assert throttles(c, "moved")["brokers"] == {}


def test_a_finished_reassignment_a_lagging_broker_does_not_show_yet_says_so_without_a_guess(tmp_path):
    # Broker 3 shows changes 5 s late (as a broker restarting, or cut off for a while, would):
    # longer than apply is told to wait for every broker to show the result.
    with TestCluster(brokers=3, metadata_propagation_delay=(0, 0, 5)) as c:
        seeded(c, "moved", [[1], [2]])
        desired = load_manifests(write_manifests(tmp_path / "m", c.bootstrap_servers, topics_yaml("moved", rf=2))).desired_state(
            CLUSTER
        )
        result = apply(c, desired, move_plan(c, "moved", {0: [1, 2], 1: [2, 1]}), confirm_timeout_s=0.5)
        [moved] = result.outcomes
        assert moved.status is Status.FAILED and c.replicas("moved") == {0: [1, 2], 1: [2, 1]}
        for p in moved.partitions:
            assert p.message.startswith("the reassignment left the in-progress list, but the brokers do not all show replicas ")
            assert p.message.endswith("; the next plan shows where it ended") and "?" not in p.message, p.message


def test_a_reassignment_the_plan_saw_running_that_ended_elsewhere_is_refused_stating_where_it_is(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "moving", [[1], [2]])
    c.stall_reassignments(True)
    c.reassign("moving", {0: [1, 2]})  # an earlier apply's, still copying when the plan was made
    plan = move_plan(c, "moving", {0: [1, 2]}, in_progress={0: [1]})
    c.reassign("moving", {0: None})  # then cancelled: the partition is back on [1]
    result = apply(c, desired_for(topics_yaml("moving", rf=2)), plan)
    [refused] = result.outcomes
    assert refused.status is Status.REFUSED
    assert refused.message == (
        "the cluster moved since the plan: moving-0: the reassignment to [1, 2] that the plan saw running has ended, "
        "and the partition has replicas [1], not its target"
    )
