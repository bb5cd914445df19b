"""The lookup `apply.yml` runs to find the reviewed plan, replayed against recorded GitHub REST
answers (tests/github/replies, in the shape of GitHub's REST API reference): no network. Each case
states every request the lookup may make; any other request fails the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.github.scripts import load_script

REPLIES = Path(__file__).parent / "replies"
REPO = "acme/kafka-topics"
MERGE = "8d1f7c3e5a9b2d4f6e8a0c1b3d5f7a9c2e4b6d8f"
HEAD = "3c9e1a7b5d2f4e6a8c0b1d3f5a7c9e2b4d6f8a0c"
DIRECT = "f0e1d2c3b4a5968778695a4b3c2d1e0f1a2b3c4d"


rp = load_script("reviewed_plan")


class Replay:
    """GET answers from recorded files, keyed by path and query; records what was asked."""

    def __init__(self, answers: dict[str, str]):
        self.answers, self.asked = answers, list[str]()

    def __call__(self, path: str) -> Any:
        self.asked.append(path)
        assert path in self.answers, f"unexpected request {path}"
        return json.loads((REPLIES / f"{self.answers[path]}.json").read_text())


def merge_answers(
    files: str = "pull_files_manifests",
    head_pulls: str = "commit_pulls_merged",
    runs: str = "runs_several",
    artifacts: str = "artifacts_found",
) -> dict[str, str]:
    """A merge of pull request #42 (head HEAD) whose newest successful plan run is 7005."""
    return {
        f"/repos/{REPO}/commits/{MERGE}/pulls?per_page=100&page=1": "commit_pulls_merged",
        f"/repos/{REPO}/pulls/42/files?per_page=100&page=1": files,
        f"/repos/{REPO}/commits/{HEAD}/pulls?per_page=100&page=1": head_pulls,
        f"/repos/{REPO}/actions/runs?head_sha={HEAD}&per_page=100&page=1": runs,
        f"/repos/{REPO}/actions/runs/7005/artifacts?per_page=100&page=1": artifacts,
    }


def test_found_takes_the_newest_successful_plan_run_and_the_clusters_artifact():
    get = Replay(merge_answers())
    found = rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    # run 7007 is newer but failed, 7001 succeeded earlier, 7004 is another workflow
    assert found == rp.Found(
        run_id=7005, artifact_id=4102, artifact_name=f"reconcile-plan-staging-eu-{HEAD}", head_sha=HEAD, pull_request=42
    )
    assert get.asked == list(get.answers)


def test_a_push_that_merged_no_pull_request_is_refused():
    get = Replay({f"/repos/{REPO}/commits/{DIRECT}/pulls?per_page=100&page=1": "commit_pulls_direct"})
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_merge(get, REPO, DIRECT, "staging-eu")
    assert str(e.value) == (
        f"commit {DIRECT[:12]} reached main without a merged pull request, so nobody reviewed a plan for it: {rp.RE_REVIEW}."
    )
    assert e.value.pull_request is None


def test_a_pull_request_that_changed_code_outside_the_manifests_is_not_trusted():
    get = Replay(merge_answers(files="pull_files_workflow"))
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    assert str(e.value).startswith(
        "pull request #42 also changed .github/workflows/plan.yml and 1 more file(s) outside manifests/; its plan job ran "
        "that change, so its plan artifact is not trusted: re-review"
    )
    assert e.value.pull_request == 42
    assert not any("actions" in p for p in get.asked)  # never looked for the artifact


def test_a_head_commit_shared_with_another_pull_request_is_not_trusted():
    # #44 has the same head but merges into another branch: its plan runs, made by that branch's
    # plan.yml, would carry the same head_sha and artifact names
    get = Replay(merge_answers(head_pulls="commit_pulls_shared_head"))
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    assert str(e.value).startswith(
        f"head commit {HEAD[:12]} of pull request #42 is also the head of pull request #44, whose plan runs cannot be told "
        "apart from #42's: re-review"
    )
    assert not any("actions" in p for p in get.asked)


def test_a_head_commit_without_a_plan_run_is_refused():
    get = Replay(merge_answers(runs="runs_no_plan"))
    with pytest.raises(rp.NoReviewedPlan, match=rf"the plan workflow never ran for head commit {HEAD[:12]} of pull request #42"):
        rp.find_for_merge(get, REPO, MERGE, "staging-eu")


def test_a_head_commit_whose_plan_runs_all_failed_is_refused():
    get = Replay(merge_answers(runs="runs_failed"))
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    assert f"no plan run for head commit {HEAD[:12]} of pull request #42 succeeded (the newest, run 7005, is failure)" in str(
        e.value
    )


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("artifacts_none", f"run 7005 has no artifact reconcile-plan-staging-eu-{HEAD} (no plan for cluster staging-eu)"),
        ("artifacts_expired", f"artifact reconcile-plan-staging-eu-{HEAD} of run 7005 expired at 2026-11-27T02:00:00Z"),
        (
            "artifacts_other_commit",
            "run 7005 holds reconcile-plan-staging-eu-b7e2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7, a plan for "
            f"another commit than {HEAD[:12]}",
        ),
        (
            "artifacts_renamed",
            f"artifact reconcile-plan-staging-eu-{HEAD} of run 7005 was made for commit b7e2d4f6a8c0, not {HEAD[:12]}",
        ),
    ],
)
def test_a_missing_expired_or_foreign_artifact_is_refused(reply, message):
    get = Replay(merge_answers(artifacts=reply))
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    assert str(e.value) == f"{message}: {rp.RE_REVIEW}."
    assert e.value.pull_request == 42


def test_another_clusters_artifact_is_not_taken():
    get = Replay(merge_answers())
    assert rp.find_for_merge(get, REPO, MERGE, "prod-eu").artifact_id == 4101
    # "staging" is a prefix of "staging-eu": its plan is missing, not made for another commit
    with pytest.raises(rp.NoReviewedPlan, match=f"has no artifact reconcile-plan-staging-{HEAD} "):
        rp.find_for_merge(Replay(merge_answers()), REPO, MERGE, "staging")


def test_runs_are_read_page_by_page_until_the_total_is_seen(monkeypatch):
    monkeypatch.setattr(rp, "PER_PAGE", 2)
    get = Replay(
        {
            f"/repos/{REPO}/commits/{MERGE}/pulls?per_page=2&page=1": "commit_pulls_merged",
            f"/repos/{REPO}/pulls/42/files?per_page=2&page=1": "pull_files_manifests",
            f"/repos/{REPO}/pulls/42/files?per_page=2&page=2": "empty_list",
            f"/repos/{REPO}/commits/{HEAD}/pulls?per_page=2&page=1": "commit_pulls_merged",
            f"/repos/{REPO}/actions/runs?head_sha={HEAD}&per_page=2&page=1": "runs_page_1",
            f"/repos/{REPO}/actions/runs?head_sha={HEAD}&per_page=2&page=2": "runs_page_2",
            f"/repos/{REPO}/actions/runs/7005/artifacts?per_page=2&page=1": "artifacts_found",
        }
    )
    found = rp.find_for_merge(get, REPO, MERGE, "staging-eu")
    assert (found.run_id, found.artifact_id) == (7005, 4102)
    # a short page ends a bare list; total_count ends a counted one (no third page asked for)
    assert get.asked == list(get.answers)


def test_dispatch_takes_the_named_runs_plan():
    get = Replay(
        {
            f"/repos/{REPO}/actions/runs/8123": "run_apply_fresh",
            f"/repos/{REPO}/actions/runs/8123/artifacts?per_page=100&page=1": "artifacts_apply_fresh",
        }
    )
    found = rp.find_for_run(get, REPO, 8123, "staging-eu")
    assert found == rp.Found(8123, 4200, f"reconcile-plan-staging-eu-{MERGE}", MERGE)


def test_dispatch_refuses_a_run_of_another_workflow():
    get = Replay({f"/repos/{REPO}/actions/runs/7004": "run_ci"})
    with pytest.raises(rp.NoReviewedPlan) as e:
        rp.find_for_run(get, REPO, 7004, "staging-eu")
    assert str(e.value).startswith("run 7004 is a run of .github/workflows/ci.yml, not of .github/workflows/plan.yml or")


def test_main_writes_step_outputs(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code = rp.main(["--cluster", "staging-eu", "--sha", MERGE], get=Replay(merge_answers()))
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        "pull-request=42",
        "run-id=7005",
        "artifact-id=4102",
        f"artifact-name=reconcile-plan-staging-eu-{HEAD}",
        f"head-sha={HEAD}",
    ]


def test_main_without_a_plan_writes_one_problem_line_and_exits_1(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code = rp.main(["--cluster", "staging-eu", "--sha", MERGE], get=Replay(merge_answers(artifacts="artifacts_expired")))
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "pull-request=42"
    assert lines[1].startswith(f"problem=artifact reconcile-plan-staging-eu-{HEAD} of run 7005 expired")
    assert len(lines) == 2
    assert err.count("\n") == 1 and "re-review the fresh plan" in err


def test_an_http_failure_is_one_line_naming_the_request(monkeypatch):
    import urllib.error
    import urllib.request

    def refuse(request, timeout):
        raise urllib.error.HTTPError(request.full_url, 403, "Forbidden", {}, None)  # type: ignore[arg-type]

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    get = rp.github_get("token")
    with pytest.raises(rp.NoReviewedPlan) as e:
        get("/repos/acme/kafka-topics/actions/runs/1")
    assert str(e.value).startswith("GitHub answered 403 to GET /repos/acme/kafka-topics/actions/runs/1: check the run id")
    assert "\n" not in str(e.value)
