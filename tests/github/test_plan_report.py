"""plan_report.py: the workflows' Markdown comes from the saved JSON plan (and the apply result),
rendered by the reconciler; anything else is one line and exit 1."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from reconciler.app.make_plan import plan_cluster
from reconciler.models.result import ActionOutcome, ApplyResult, Status
from reconciler.render import render_apply_result, render_plan
from reconciler.render.review import review_markdown

ROOT = Path(__file__).resolve().parents[2]


def _load_script():
    spec = importlib.util.spec_from_file_location("plan_report", ROOT / ".github/scripts/plan_report.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


report = _load_script()


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
    assert capsys.readouterr().out == review_markdown(plan, result)
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
