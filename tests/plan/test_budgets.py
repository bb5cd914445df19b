"""Team budgets in the pure planner (docs/teams.md): topics counted per team, each topic's
retention against the ceiling (declared or inherited) and its name against the prefix, warnings
from 90%, and teams without a budget or topics without an owner left alone."""

from __future__ import annotations

from reconciler.models.desired import SourceRef, Team, TeamBudget, TopicState
from reconciler.models.observed import Broker
from reconciler.models.plan import DiagnosticCode, Severity
from reconciler.plan.planner import plan
from tests.factories import desired, have, observed, want

DAY_MS = 86_400_000
AT = {
    name: SourceRef(file="teams.yaml", line=i + 5, column=3)
    for i, name in enumerate(("max_topics", "max_retention", "name_prefix"))
}


def _team(**budget) -> Team:
    given = {k: AT.get(k.removesuffix("_ms")) or AT["max_topics"] for k in budget}
    sources = {k.removesuffix("_ms"): v for k, v in given.items()}
    return Team(name="payments", review="@acme/payments", budget=TeamBudget(**budget, sources=sources))


def _plan(team: Team, *topics, live=()):
    state = desired(*topics).model_copy(update={"teams": {team.name: team}})
    brokers = [Broker(node_id=b, host=f"b{b}", port=9092) for b in (1, 2, 3)]  # where new topics' bytes go
    return plan(state, observed(*live).model_copy(update={"brokers": brokers}))


def _codes(result) -> list[tuple[str, str, str | None]]:
    return [(d.code, d.severity.value, d.topic) for d in result.diagnostics if d.code.startswith("team-")]


def test_max_topics_counts_the_team_s_present_topics_only():
    topics = [want(f"pay.t{i}", owner="payments") for i in range(4)]
    others = [want("other.x"), want("pay.gone", owner="payments", state=TopicState.ABSENT)]
    result = _plan(_team(max_topics=3), *topics, *others, live=[have("pay.gone")])
    [error] = [d for d in result.diagnostics if d.code == DiagnosticCode.TEAM_MAX_TOPICS]
    assert error.severity is Severity.ERROR and error.source == AT["max_topics"] and error.topic is None
    assert error.message.startswith(
        "team payments would have 4 topics on cluster test after this plan, above its budget max_topics 3 (133%); "
        "most from pay.t0 1, pay.t1 1, pay.t2 1;"
    )
    assert _codes(_plan(_team(max_topics=4), *topics)) == [("team-max-topics", "warning", None)]  # 100%: close
    assert _codes(_plan(_team(max_topics=5), *topics)) == []  # 80%


def test_each_topic_s_retention_is_held_to_the_ceiling_declared_or_inherited():
    team = _team(max_retention_ms=7 * DAY_MS)
    topics = (
        want("pay.ok", owner="payments", configs={"retention.ms": str(DAY_MS)}),
        want("pay.long", owner="payments", configs={"retention.ms": str(30 * DAY_MS)}),
        want("pay.forever", owner="payments", configs={"retention.ms": "-1"}),
        want("pay.compacted", owner="payments", configs={"cleanup.policy": "compact", "retention.ms": "-1"}),
        want("pay.inherits", owner="payments"),  # Kafka's default, 7d: at the ceiling, within it
        want("other.long", configs={"retention.ms": str(30 * DAY_MS)}),
    )
    result = _plan(team, *topics)
    assert _codes(result) == [
        ("team-max-retention", "error", "pay.forever"),
        ("team-max-retention", "error", "pay.long"),
    ]
    [long] = [d for d in result.diagnostics if d.topic == "pay.long"]
    assert long.message == (
        "topic pay.long of team payments on cluster test keeps records for 30d (retention.ms 2592000000, declared), "
        "above the team's max_retention 7d (at teams.yaml:6:3); set retention.ms to at most 604800000"
    )


def test_every_topic_of_the_team_starts_with_its_name_prefix():
    result = _plan(_team(name_prefix="pay."), want("pay.a", owner="payments"), want("billing.b", owner="payments"))
    [error] = [d for d in result.diagnostics if d.code == DiagnosticCode.TEAM_NAME_PREFIX]
    assert error.topic == "billing.b" and error.severity is Severity.ERROR
    assert "does not start with pay., the team's name_prefix (at teams.yaml:7:3)" in error.message


def test_a_team_without_a_budget_costs_nothing_and_says_nothing():
    team = Team(name="payments", review="@acme/payments")
    assert _codes(_plan(team, *[want(f"pay.t{i}", owner="payments") for i in range(50)])) == []


def test_max_disk_holds_only_a_plan_that_adds_to_the_team_s_disk():
    team = Team(
        name="payments",
        review="@acme/payments",
        budget=TeamBudget(max_disk_bytes=10_000, sources={"max_disk": AT["max_topics"]}),
    )
    held = have("pay.big", size_bytes=5_000)  # 3 partitions x 3 replicas x 5,000 bytes: 45,000, over already
    # Nothing added (a partition count raised adds no bytes): not blocked, so the team can still shrink.
    assert _codes(_plan(team, want("pay.big", partitions=4, owner="payments"), live=[held])) == []
    # A new topic of the team with declared traffic adds: the whole team is counted.
    fresh = want("pay.new", owner="payments", expected_bytes_per_day=3_000)
    result = _plan(team, want("pay.big", owner="payments"), fresh, live=[held])
    [error] = [d for d in result.diagnostics if d.code == DiagnosticCode.TEAM_MAX_DISK]
    assert error.owner == "payments" and error.message.startswith(
        "team payments would have 105.5 KiB (108,000 bytes) on disk (all replicas) on cluster test after this plan, "
        "above its budget max_disk 9.8 KiB (10,000 bytes) (1080%); most from pay.new 61.5 KiB, pay.big 43.9 KiB;"
    ), error.message
