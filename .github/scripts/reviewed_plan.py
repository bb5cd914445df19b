"""Finds the plan artifact that `apply.yml` is to apply, through GitHub's REST API.

On a push to main: the pull request that push merged (commits/{sha}/pulls), the newest successful
run of the plan workflow for that pull request's head commit (actions/runs?head_sha=) and its
artifact for the cluster (actions/runs/{id}/artifacts). The artifact is only trusted when the pull
request changed nothing outside the manifest directory (pulls/{n}/files) and no other pull request
has the same head commit (commits/{head}/pulls): the plan job runs the pull request's code, so a
pull request that changes a workflow, the action or the tool could have uploaded a plan nobody
reviewed. On a workflow_dispatch: the artifact of the run a person named.

Standard library only (it runs before anything is installed). The core takes a function for GET
requests, so the tests replay recorded answers; `main` writes `key=value` lines for $GITHUB_OUTPUT
and, when there is no plan to apply, `problem=` with one line saying what to do (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

PLAN_WORKFLOW = ".github/workflows/plan.yml"
APPLY_WORKFLOW = ".github/workflows/apply.yml"
PER_PAGE = 100
MAX_PAGES = 30  # 3,000 items: GitHub's own cap on a pull request's file list

Get = Callable[[str], Any]  # an API path with its query -> the decoded JSON answer

# What to do whenever no reviewed plan can be applied; the apply job posts a fresh plan next to it.
RE_REVIEW = "re-review the fresh plan posted on the pull request and apply it with the workflow_dispatch of `reconcile apply`"


class NoReviewedPlan(Exception):
    """No plan can be applied; the message is one line saying why and what to do."""

    def __init__(self, message: str, pull_request: int | None = None):
        super().__init__(message)
        self.pull_request = pull_request


@dataclass(frozen=True)
class Found:
    run_id: int
    artifact_id: int
    artifact_name: str
    head_sha: str
    pull_request: int | None = None


def artifact_name(cluster: str, head_sha: str) -> str:
    """The name `plan.yml` uploads a cluster's plan under (apply.yml's fresh plans too)."""
    return f"reconcile-plan-{cluster}-{head_sha}"


def find_for_merge(get: Get, repo: str, sha: str, cluster: str, manifests: str = "manifests") -> Found:
    """The reviewed plan for `cluster` of the pull request whose merge pushed `sha` to main."""
    merged = [
        p for p in _list(get, f"/repos/{repo}/commits/{sha}/pulls") if p.get("merge_commit_sha") == sha and p.get("merged_at")
    ]
    if not merged:
        raise NoReviewedPlan(
            f"commit {sha[:12]} reached main without a merged pull request, so nobody reviewed a plan for it: {RE_REVIEW}."
        )
    number, head = merged[0]["number"], merged[0]["head"]["sha"]
    outside = _changed_outside(get, repo, number, manifests.rstrip("/") + "/")
    if outside:
        more = f" and {len(outside) - 1} more file(s)" if len(outside) > 1 else ""
        raise NoReviewedPlan(
            f"pull request #{number} also changed {outside[0]}{more} outside {manifests}/; its plan job ran that "
            f"change, so its plan artifact is not trusted: {RE_REVIEW}.",
            number,
        )
    # A plan run is known by its head commit only: another pull request with the same head (into a
    # branch whose plan.yml says anything) would make runs and artifacts that look the same.
    others = [
        p["number"]
        for p in _list(get, f"/repos/{repo}/commits/{head}/pulls")
        if p["head"]["sha"] == head and p["number"] != number
    ]
    if others:
        raise NoReviewedPlan(
            f"head commit {head[:12]} of pull request #{number} is also the head of pull request #{others[0]}, whose plan "
            f"runs cannot be told apart from #{number}'s: {RE_REVIEW}.",
            number,
        )
    runs = [r for r in _items(get, f"/repos/{repo}/actions/runs?head_sha={head}", "workflow_runs") if _is_plan_run(r)]
    if not runs:
        raise NoReviewedPlan(
            f"the plan workflow never ran for head commit {head[:12]} of pull request #{number}: {RE_REVIEW}.", number
        )
    succeeded = [r for r in runs if r.get("conclusion") == "success"]
    if not succeeded:
        newest = _newest(runs)
        state = newest.get("conclusion") or newest.get("status")
        raise NoReviewedPlan(
            f"no plan run for head commit {head[:12]} of pull request #{number} succeeded (the newest, run "
            f"{newest['id']}, is {state}): {RE_REVIEW}.",
            number,
        )
    run = _newest(succeeded)
    artifact = _plan_artifact(get, repo, run["id"], cluster, head, number)
    return Found(run["id"], artifact["id"], artifact["name"], head, number)


def find_for_run(get: Get, repo: str, run_id: int, cluster: str) -> Found:
    """The plan for `cluster` that run `run_id` (of the plan or the apply workflow) made, for a
    workflow_dispatch that applies it after a re-review."""
    run = get(f"/repos/{repo}/actions/runs/{run_id}")
    if _workflow_path(run) not in (PLAN_WORKFLOW, APPLY_WORKFLOW):
        raise NoReviewedPlan(
            f"run {run_id} is a run of {_workflow_path(run) or 'an unknown workflow'}, not of {PLAN_WORKFLOW} or "
            f"{APPLY_WORKFLOW}: give the id of the run whose plan you reviewed (its link is in the pull-request comment)."
        )
    artifact = _plan_artifact(get, repo, run_id, cluster, run["head_sha"], None)
    return Found(run_id, artifact["id"], artifact["name"], run["head_sha"])


def _plan_artifact(get: Get, repo: str, run_id: int, cluster: str, head: str, number: int | None) -> dict:
    wanted = artifact_name(cluster, head)
    artifacts = list(_items(get, f"/repos/{repo}/actions/runs/{run_id}/artifacts", "artifacts"))
    named = [a for a in artifacts if a.get("name") == wanted]
    if not named:
        made_for_other = re.compile(re.escape(artifact_name(cluster, "")) + "[0-9a-f]{40}")
        others = [a["name"] for a in artifacts if made_for_other.fullmatch(str(a.get("name", "")))]
        if others:
            raise NoReviewedPlan(
                f"run {run_id} holds {others[0]}, a plan for another commit than {head[:12]}: {RE_REVIEW}.", number
            )
        raise NoReviewedPlan(f"run {run_id} has no artifact {wanted} (no plan for cluster {cluster}): {RE_REVIEW}.", number)
    artifact = named[0]
    if artifact.get("expired"):
        raise NoReviewedPlan(f"artifact {wanted} of run {run_id} expired at {artifact.get('expires_at')}: {RE_REVIEW}.", number)
    made_for = (artifact.get("workflow_run") or {}).get("head_sha", head)
    if made_for != head:
        raise NoReviewedPlan(
            f"artifact {wanted} of run {run_id} was made for commit {made_for[:12]}, not {head[:12]}: {RE_REVIEW}.", number
        )
    return artifact


def _changed_outside(get: Get, repo: str, number: int, prefix: str) -> list[str]:
    outside = []
    for f in _list(get, f"/repos/{repo}/pulls/{number}/files"):
        for name in (f.get("filename"), f.get("previous_filename")):
            if name and not name.startswith(prefix):
                outside.append(name)
    return outside


def _is_plan_run(run: dict) -> bool:
    return _workflow_path(run) == PLAN_WORKFLOW and run.get("event") == "pull_request"


def _workflow_path(run: dict) -> str:
    """The run's workflow file; GitHub may append the ref it was read at (`...yml@main`)."""
    return str(run.get("path") or "").split("@", 1)[0]


def _newest(runs: list[dict]) -> dict:
    return max(runs, key=lambda r: (r.get("created_at") or "", r["id"]))


def _list(get: Get, path: str) -> Iterator[dict]:
    """Every item of a paginated endpoint that answers with a bare list."""
    for page in range(1, MAX_PAGES + 1):
        items = get(_page(path, page))
        yield from items
        if len(items) < PER_PAGE:
            return


def _items(get: Get, path: str, key: str) -> Iterator[dict]:
    """Every item of a paginated endpoint that answers with `total_count` and a list under `key`."""
    seen = 0
    for page in range(1, MAX_PAGES + 1):
        answer = get(_page(path, page))
        items = answer[key]
        yield from items
        seen += len(items)
        if not items or seen >= answer["total_count"]:
            return


def _page(path: str, page: int) -> str:
    return f"{path}{'&' if '?' in path else '?'}per_page={PER_PAGE}&page={page}"


def github_get(token: str, api_url: str = "https://api.github.com") -> Get:
    """GET requests to the REST API with the job's token; any failure is a NoReviewedPlan."""

    def get(path: str) -> Any:
        request = urllib.request.Request(
            api_url.rstrip("/") + path,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {token}",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as e:
            raise NoReviewedPlan(
                f"GitHub answered {e.code} to GET {path}: check the run id if you gave one, and the job's `permissions:` "
                f"(actions: read, contents: read, pull-requests: read); then {RE_REVIEW}."
            ) from e
        except (urllib.error.URLError, TimeoutError, ValueError) as e:
            raise NoReviewedPlan(f"GET {path} failed ({e}): run the job again, or {RE_REVIEW}.") from e

    return get


def main(argv: list[str] | None = None, get: Get | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cluster", required=True)
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--sha", help="the commit a push brought to main: apply the plan its pull request reviewed")
    how.add_argument("--run-id", type=int, help="the run whose plan a person re-reviewed (workflow_dispatch)")
    parser.add_argument("--manifests", default="manifests", help="the only directory a pull request may change")
    args = parser.parse_args(argv)
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    try:
        if "/" not in repo:
            raise NoReviewedPlan("GITHUB_REPOSITORY is not set to OWNER/REPO: run this in a GitHub Actions job, or set it.")
        if get is None:
            get = github_get(os.environ.get("GITHUB_TOKEN", ""), os.environ.get("GITHUB_API_URL", "https://api.github.com"))
        if args.sha:
            found = find_for_merge(get, repo, args.sha, args.cluster, args.manifests)
        else:
            found = find_for_run(get, repo, args.run_id, args.cluster)
    except NoReviewedPlan as e:
        print(f"pull-request={e.pull_request or ''}")
        print(f"problem={e}")
        print(f"No reviewed plan to apply to {args.cluster}: {e}", file=sys.stderr)
        return 1
    print(f"pull-request={found.pull_request or ''}")
    print(f"run-id={found.run_id}")
    print(f"artifact-id={found.artifact_id}")
    print(f"artifact-name={found.artifact_name}")
    print(f"head-sha={found.head_sha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
