"""Markdown for the workflows, always rendered from the saved JSON plan (and apply result) by the
installed reconciler, never taken from a Markdown file an earlier job wrote.

    plan_report.py plan PLAN.json                   the plan (pull-request comment, reviewers' summary)
    plan_report.py review PLAN.json [RESULT.json]   per action: what was reviewed, what was applied;
                                                    then the apply result in full
    plan_report.py outcome --cluster NAME ...       what apply.yml's apply job did, and what to do next
                                                    (its job summary and its comment on the pull request)

A file that is not a plan or a result this version wrote is one line on stderr, exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.files.saved_plan import load_plan_file
from reconciler.models.result import ApplyResult
from reconciler.render import render_apply_result, render_plan
from reconciler.render.review import review_markdown


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("plan").add_argument("plan")
    review = commands.add_parser("review")
    review.add_argument("plan")
    review.add_argument("result", nargs="?")
    outcome = commands.add_parser("outcome")
    outcome.add_argument("--cluster", required=True)
    outcome.add_argument("--plan", default="", help="the reviewed plan apply was given (none: no reviewed plan was found)")
    outcome.add_argument("--problem", default="", help="why no reviewed plan was found")
    outcome.add_argument("--applied", default="", help="apply's exit code (empty: it did not run)")
    outcome.add_argument("--result", default="", help="apply's JSON result, when it wrote one")
    outcome.add_argument("--errors", default="", help="apply's stderr")
    outcome.add_argument("--fresh", default="", help="the fresh plan, when one was made")
    outcome.add_argument("--run-id", default="", help="this run, which keeps the fresh plan as an artifact")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 1 if e.code else 0
    try:
        if args.command == "plan":
            text = render_plan(load_plan_file(args.plan), "markdown")
        elif args.command == "review":
            text = _review(args.plan, args.result)
        else:
            text = _outcome(args)
    except ReconcilerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _review(plan_file: str, result_file: str | None) -> str:
    result = _result(result_file) if result_file else None
    text = review_markdown(load_plan_file(plan_file), result)
    return text + ("\n" + render_apply_result(result, "markdown") if result is not None else "")


def _outcome(args: argparse.Namespace) -> str:
    cluster = f"`{args.cluster}`"
    if args.applied == "0":
        return f"## Applied the reviewed plan to {cluster}\n\n" + _review(args.plan, args.result)
    if not args.plan:
        out = [f"## Nothing was written to {cluster}: no reviewed plan", "", args.problem or "No reviewed plan was found.", ""]
    elif args.result and Path(args.result).is_file():
        out = [
            f"## The reviewed plan was not applied in full to {cluster}",
            "",
            "> [!WARNING]",
            "> Some actions were refused or failed (below); the others were applied.",
            "",
            _review(args.plan, args.result),
        ]
    else:
        out = [f"## Nothing was written to {cluster}: apply refused the reviewed plan", ""]
        out += [f"> {line}" for line in _error(args.errors).splitlines()] + [""]
        with contextlib.suppress(ReconcilerError):  # apply's error above already says what is wrong with the file
            out.append(_review(args.plan, None))
    return "\n".join(out) + "\n" + _fresh(args)


def _fresh(args: argparse.Namespace) -> str:
    head = "### Fresh plan (nobody reviewed it yet)\n\n"
    if not args.fresh or not Path(args.fresh).is_file():
        return head + "The fresh plan failed as well; see the log of the apply job.\n"
    plan = load_plan_file(args.fresh)
    if not plan.has_changes:
        return head + f"No changes: `{args.cluster}` already matches main. Nothing to do.\n"
    return (
        head
        + render_plan(plan, "markdown")
        + "\n**What to do:** review this plan. To apply it, run the *reconcile apply* workflow (Actions → "
        + f"reconcile apply → Run workflow) with plan-run-id `{args.run_id}` and cluster `{args.cluster}`: the "
        + "`kafka-production` reviewers see it again in that run's summary before they approve, and it is refused "
        + "if main or the cluster moves again. Otherwise change the manifests in a new pull request.\n"
    )


def _error(errors_file: str) -> str:
    """The command's "Error:" paragraph, else a pointer to the log."""
    try:
        text = Path(errors_file).read_text(encoding="utf-8") if errors_file else ""
    except OSError:
        text = ""
    start = text.rfind("Error: ")
    return text[start:].strip() if start >= 0 else "Apply failed before it wrote anything; see the log of the apply job."


def _result(path: str) -> ApplyResult:
    """The result `apply --format json` wrote, without the figures it derives for readers."""
    try:
        data = json.loads(Path(path).read_bytes())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return ApplyResult.model_validate({k: v for k, v in data.items() if k in ApplyResult.model_fields})
    except (OSError, ValueError) as e:
        raise ReconcilerError(
            f"{path} is not an apply result (`reconcile apply --format json -o FILE`): {e}".splitlines()[0]
        ) from e


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
