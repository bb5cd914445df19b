"""plan_report.py: the workflows' Markdown comes from the saved JSON plan (and the apply result),
rendered by the reconciler; anything else is one line and exit 1."""

from __future__ import annotations

from pathlib import Path

from reconciler.app.make_plan import plan_cluster
from reconciler.models.result import ActionOutcome, ApplyResult, Status
from reconciler.render import render_apply_result, render_plan
from reconciler.render.review import review_markdown
from tests.github.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


report = load_script("plan_report")


def _no_cluster(spec):
    raise AssertionError("a plan against a snapshot connects to nothing")


def _saved_plan(tmp_path: Path):
    made = plan_cluster(str(ROOT / "manifests"), "staging-eu", str(ROOT / "manifests/snapshots/staging-eu.json"), _no_cluster)
    path = tmp_path / "plan-staging-eu.json"
    path.write_text(render_plan(made.plan, "json"))
    return made.plan, path


def test_plan_markdown_is_the_saved_plans(tmp_path, capsys):
    plan, path = _saved_plan(tmp_path)
    assert report.main(["plan", str(path)]) == 0
    assert capsys.readouterr().out == render_plan(plan, "markdown")


def test_review_joins_the_plan_and_the_result(tmp_path, capsys):
    plan, path = _saved_plan(tmp_path)
    first = plan.actions[0]
    result = ApplyResult(
        cluster="staging-eu", outcomes=[ActionOutcome(kind=first.kind, topic=first.topic, status=Status.APPLIED, message="done")]
    )
    result_path = tmp_path / "result.json"
    result_path.write_text(render_apply_result(result, "json"))
    assert report.main(["review", str(path), str(result_path)]) == 0
    assert capsys.readouterr().out == review_markdown(plan, result) + "\n" + render_apply_result(result, "markdown")
    assert report.main(["review", str(path)]) == 0
    assert "not applied: nothing was written" in capsys.readouterr().out


def test_a_file_that_is_no_plan_or_result_is_one_line(tmp_path, capsys):
    _, path = _saved_plan(tmp_path)
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"cluster": 1}')
    assert report.main(["plan", str(bogus)]) == 1
    assert report.main(["review", str(path), str(bogus)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
    assert f"{bogus} is not an apply result" in err[1]
    assert report.main(["render", str(path)]) == 1


def _outcome(capsys, *args: str) -> str:
    assert report.main(["outcome", "--cluster", "staging-eu", "--run-id", "8123", *args]) == 0
    return capsys.readouterr().out


def test_outcome_applied_in_full(tmp_path, capsys):
    plan, path = _saved_plan(tmp_path)
    result = ApplyResult(
        cluster="staging-eu",
        outcomes=[ActionOutcome(kind=a.kind, topic=a.topic, status=Status.APPLIED) for a in plan.actions],
    )
    (tmp_path / "result.json").write_text(render_apply_result(result, "json"))
    text = _outcome(capsys, "--plan", str(path), "--applied", "0", "--result", str(tmp_path / "result.json"))
    assert text.startswith("## Applied the reviewed plan to `staging-eu`\n")
    assert "Fresh plan" not in text


def test_outcome_without_a_reviewed_plan_posts_the_fresh_one_and_what_to_do(tmp_path, capsys):
    _, fresh = _saved_plan(tmp_path)
    text = _outcome(capsys, "--problem", "commit abc reached main without a merged pull request", "--fresh", str(fresh))
    assert text.startswith("## Nothing was written to `staging-eu`: no reviewed plan\n\ncommit abc reached main")
    assert "### Fresh plan (nobody reviewed it yet)" in text and "### Plan for `staging-eu`" in text
    assert "with plan-run-id `8123` and cluster `staging-eu`" in text


def test_outcome_of_a_refused_plan_quotes_the_error_and_wrote_nothing(tmp_path, capsys):
    _, path = _saved_plan(tmp_path)
    errors = tmp_path / "stderr"
    errors.write_text(
        "reading staging-eu again\nError: the manifests now mean something else for staging-eu:\n  orders.v1 retention.ms\n"
    )
    text = _outcome(
        capsys, "--plan", str(path), "--applied", "1", "--result", str(tmp_path / "none.json"), "--errors", str(errors)
    )
    assert text.startswith(
        "## Nothing was written to `staging-eu`: apply refused the reviewed plan\n\n"
        "> Error: the manifests now mean something else for staging-eu:\n>   orders.v1 retention.ms\n"
    )
    assert "not applied: nothing was written" in text
    assert "The fresh plan failed as well" in text  # no --fresh: it could not be made


def test_outcome_of_a_partial_apply_says_which_applied(tmp_path, capsys):
    plan, path = _saved_plan(tmp_path)
    first = plan.actions[0]
    result = ApplyResult(
        cluster="staging-eu",
        outcomes=[ActionOutcome(kind=first.kind, topic=first.topic, status=Status.REFUSED, message="topic was recreated")],
    )
    (tmp_path / "result.json").write_text(render_apply_result(result, "json"))
    text = _outcome(
        capsys, "--plan", str(path), "--applied", "1", "--result", str(tmp_path / "result.json"), "--fresh", str(path)
    )
    assert text.startswith("## The reviewed plan was not applied in full to `staging-eu`\n")
    assert "REFUSED: topic was recreated" in text and "not sent" in text
