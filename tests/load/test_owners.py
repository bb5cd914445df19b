"""Owners in the manifests (docs/teams.md): Team documents, the owner each topic resolves to, and
every mistake about them reported at once with its place, nothing loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.errors import ManifestError
from reconciler.manifests import load_manifests
from reconciler.plan.binding import canonical_desired, differences_between, digest_of

CLUSTER = "kind: Cluster\nname: prod\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"
TEAMS = """\
kind: Team
name: payments
review: '@acme/payments'
topics: {prefixes: [payments.], patterns: ['^billing\\.']}
budget: {max_topics: 20, max_partitions: 600, max_retention: 30d, max_disk: 2TiB, name_prefix: pay}
---
kind: Team
name: analytics
review: '@carol'
topics: {prefixes: [analytics.]}
"""


def _dir(tmp_path: Path, topics: str, teams: str = TEAMS) -> Path:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "teams.yaml").write_text(teams)
    (tmp_path / "topics.yaml").write_text(topics)
    return tmp_path


def _problems(root: Path) -> list[str]:
    with pytest.raises(ManifestError) as raised:
        load_manifests(root)
    return [f"{p.file}:{p.line}:{p.column}: {p.message}" for p in raised.value.problems]


def test_each_topic_resolves_to_its_topic_then_template_then_team_rule_owner(tmp_path):
    topics = """\
kind: TopicTemplate
name: shared
owner: analytics
---
kind: Topic
name: payments.orders
---
kind: Topic
name: billing.invoices
---
kind: Topic
name: payments.audit
owner: analytics
---
kind: Topic
name: payments.by-template
template: shared
---
kind: Topic
name: misc.unowned
"""
    state = load_manifests(_dir(tmp_path, topics)).desired_state("prod")
    owners = {name: topic.owner for name, topic in state.topics.items()}
    assert owners == {
        "payments.orders": "payments",  # prefix
        "billing.invoices": "payments",  # pattern
        "payments.audit": "analytics",  # its own owner wins over the rule
        "payments.by-template": "analytics",  # its template's owner too
        "misc.unowned": None,
    }
    payments = state.teams["payments"]
    assert payments.review == "@acme/payments"
    budget = payments.budget
    assert (budget.max_topics, budget.max_partitions, budget.name_prefix) == (20, 600, "pay")
    assert budget.max_retention_ms == 30 * 86_400_000 and budget.max_disk_bytes == 2 * 1024**4
    assert str(budget.sources["max_disk"]) == "teams.yaml:5:77"
    assert state.teams["analytics"].budget.sources == {}


def test_patterns_referring_to_their_own_groups_claim_what_each_alone_claims(tmp_path):
    # Joined into one search, the second pattern's \1 would name the first pattern's group.
    teams = """\
kind: Team
name: mirror
review: '@acme/mirror'
topics: {patterns: ['^(a+)x\\1$']}
---
kind: Team
name: twins
review: '@acme/twins'
topics: {patterns: ['^(\\w+)\\.\\1$']}
"""
    topics = "".join(f"---\nkind: Topic\nname: {name}\n" for name in ("aaxaa", "orders.orders", "orders.audit"))
    state = load_manifests(_dir(tmp_path, topics, teams)).desired_state("prod")
    assert {name: topic.owner for name, topic in state.topics.items()} == {
        "aaxaa": "mirror",
        "orders.orders": "twins",
        "orders.audit": None,
    }


def test_every_ownership_mistake_is_reported_at_once_with_its_place(tmp_path):
    teams = (
        TEAMS
        + "---\nkind: Team\nname: platform\nreview: '@acme/platform'\ntopics: {patterns: ['^payments\\.ledger$']}\n"
        + "---\nkind: Team\nname: analytics\nreview: '@dave'\n"
    )
    topics = """\
kind: Topic
name: payments.ledger
---
kind: Topic
name: orders.v1
owner: paymnets
---
kind: TopicTemplate
name: t
owner: nobody
"""
    problems = _problems(_dir(tmp_path, topics, teams))
    assert problems == [
        "teams.yaml:18:7: duplicate team 'analytics' (also defined at teams.yaml:8:7)",
        "topics.yaml:2:7: topic payments.ledger is claimed by team payments (at teams.yaml:4:21) and by team platform "
        "(at teams.yaml:15:21); a topic has one owner: narrow one of the rules, or set `owner:` on the topic",
        "topics.yaml:6:8: unknown owner 'paymnets': no `kind: Team` document defines it (did you mean 'payments'?)",
    ]


def test_an_unused_template_s_unknown_owner_is_not_reported_but_a_used_one_is(tmp_path):
    topics = "kind: TopicTemplate\nname: t\nowner: nobody\n---\nkind: Topic\nname: a.b\ntemplate: t\n"
    assert _problems(_dir(tmp_path, topics)) == [
        "topics.yaml:3:8: unknown owner 'nobody': no `kind: Team` document defines it (teams: analytics, payments)"
    ]


def test_the_policy_can_require_an_owner_for_every_topic(tmp_path):
    topics = "kind: Policy\nrequire_owner: true\n---\nkind: Topic\nname: payments.a\n---\nkind: Topic\nname: misc.b\n"
    assert _problems(_dir(tmp_path, topics)) == [
        "topics.yaml:8:7: topic misc.b on cluster prod has no owner, and the policy's require_owner says every topic "
        "must: set `owner:` on it (or its template), or add it to a Team's topics (docs/teams.md) (policy)"
    ]
    # Without the setting, unowned topics are allowed.
    (tmp_path / "topics.yaml").write_text(topics.replace("require_owner: true", "require_owner: false"))
    assert load_manifests(tmp_path).desired_state("prod").topics["misc.b"].owner is None


def test_validate_reports_bad_handles_and_budgets_with_their_places_and_writes_nothing(tmp_path):
    teams = "kind: Team\nname: payments\nreview: acme/payments\nbudget: {max_disk: lots, max_topics: ten}\n"
    root = _dir(tmp_path, "kind: Topic\nname: payments.a\nowner: payments\n", teams)
    before = sorted(p.name for p in root.iterdir())
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = [line.strip() for line in result.output.splitlines()[1:]]
    assert lines == [
        "teams.yaml:3:9: review 'acme/payments' is not a GitHub user (@name) or team (@org/team) as CODEOWNERS takes "
        "them; write e.g. @acme/payments",
        "teams.yaml:4:20: budget.max_disk: 'lots' is not a size; write bytes or e.g. 512KiB, 100MiB, 50GiB, 1TiB (or "
        "KB/MB/GB/TB)",
        "teams.yaml:4:38: budget.max_topics: input should be a valid integer (got 'ten')",
    ]
    assert sorted(p.name for p in root.iterdir()) == before


def test_a_saved_plan_is_bound_to_owners_and_budgets(tmp_path):
    root = _dir(tmp_path, "kind: Topic\nname: payments.a\n")
    before = canonical_desired(load_manifests(root).desired_state("prod"))
    assert before["topics"]["payments.a"]["owner"] == "payments"
    assert before["teams"]["payments"]["budget"]["max_topics"] == 20
    (root / "teams.yaml").write_text(TEAMS.replace("max_topics: 20", "max_topics: 30"))
    after = canonical_desired(load_manifests(root).desired_state("prod"))
    assert digest_of(after) != digest_of(before)
    assert differences_between(before, after) == ["teams, payments.budget.max_topics: reviewed 20, now 30"]
