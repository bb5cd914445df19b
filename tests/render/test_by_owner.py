"""A plan grouped by owner (docs/teams.md), on the golden case `teams`: the text groups actions under
each owner's summary, the PR comment has the per-owner table and names the owners whose topics a
destructive action touches, the JSON carries each action's owner and the summaries and reads back
as the same plan; a plan without teams has none of it."""

from __future__ import annotations

from pathlib import Path

from reconciler.files.saved_plan import load_plan_json
from reconciler.files.snapshot import load_snapshot
from reconciler.manifests import load_manifests
from reconciler.plan.planner import plan
from reconciler.render import render_plan

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _plan(manifests: str):
    observed = load_snapshot(GOLDEN / "capacity" / "observed.json")
    return plan(load_manifests(GOLDEN / manifests / "manifests").desired_state("lab"), observed)


def test_actions_are_grouped_by_owner_with_a_summary_each():
    result = _plan("teams")
    assert {a.topic: a.owner for a in result.actions} == {
        "audit.v2": "storage",
        "orders": "storage",
        "clicks": "web",
        "metrics": "web",
        "forever": None,
    }
    text = render_plan(result, "text")
    headings = [line for line in text.splitlines() if line.startswith(("Owner ", "Topics with no owner"))]
    assert headings == [
        "Owner storage (@acme/storage): 1 to create, 1 to change, 0 to truncate, 0 to delete; 0 errors, 1 warning:",
        "Owner web (@acme/web): 0 to create, 2 to change, 0 to truncate, 0 to delete (1 destructive); 1 error, 0 warnings:",
        "Topics with no owner:",
    ]
    assert text.index("+ create topic audit.v2") < text.index("Owner web") < text.index("~ alter configs of clicks")


def test_the_pr_comment_names_the_owners_a_destructive_action_touches():
    comment = render_plan(_plan("teams"), "markdown")
    assert "> **Owners whose topics these touch:** @acme/web (`web`)" in comment
    assert "| `web` | @acme/web | 0 | 2 | 0 | 0 | 1 | 1 | 0 |" in comment
    assert "@acme/storage (`storage`)" not in comment  # no destructive action on its topics


def test_the_json_carries_the_owners_and_reads_back_the_same():
    result = _plan("teams")
    text = render_plan(result, "json")
    assert load_plan_json(text) == result
    [web] = [o for o in result.owners if o.owner == "web"]
    assert (web.review, web.change, web.destructive, web.errors) == ("@acme/web", 2, 1, 1)
    [budget] = [d for d in result.diagnostics if d.code == "team-max-disk"]
    assert budget.owner == "web"


def test_without_teams_nothing_is_grouped():
    result = _plan("capacity")
    assert result.owners == [] and all(a.owner is None for a in result.actions)
    assert '"owner' not in render_plan(result, "json") and "Owner " not in render_plan(result, "text")
