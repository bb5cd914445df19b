"""A saved plan applied again after an interrupted apply (what a user does when CI killed the job),
and what apply says when something is left to clean up: the facts, never a guess at who did what.
Over real sockets, on the test cluster."""

from __future__ import annotations

from reconciler.apply.reassignment import sweep
from reconciler.models.plan import AlterConfigs
from reconciler.models.result import Status
from reconciler.plan.planner import plan as make_plan
from tests.apply.test_apply_live import Repo, outcome
from tests.apply.test_reassign_live import MiB, apply, move_plan, seeded, throttles, topics_yaml
from tests.kafka.helpers import kafka_of

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
        "this plan may have made it)"
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
