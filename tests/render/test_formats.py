"""The output formats are named once (`reconciler.models.formats`): every one of them renders, the
CLI offers exactly them, and action.yml documents exactly them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report
from reconciler.models.formats import DRIFT_FORMATS, PLAN_FORMATS
from reconciler.models.result import ApplyResult
from reconciler.plan.planner import plan
from reconciler.render import render_apply_result, render_plan
from tests.factories import desired, have, observed, want

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fmt", PLAN_FORMATS)
def test_every_plan_format_renders_plans_and_apply_results(fmt: str) -> None:
    assert render_plan(plan(desired(want("t")), observed()), fmt)
    assert render_apply_result(ApplyResult(cluster="c", outcomes=[]), fmt)


@pytest.mark.parametrize("fmt", DRIFT_FORMATS)
def test_every_drift_format_renders_a_report(fmt: str) -> None:
    state = observed(have("t"))
    assert render_report(report_of([drift_for_cluster(desired(want("t")), state)], "local"), fmt)


@pytest.mark.parametrize("render", [render_plan, render_apply_result, render_report])
def test_an_unregistered_format_is_refused_naming_the_registered_ones(render: Callable[..., str]) -> None:
    with pytest.raises(ValueError, match="one of text, json, markdown"):
        render("yaml", "yaml")


@pytest.mark.parametrize(("command", "formats"), [("plan", PLAN_FORMATS), ("apply", PLAN_FORMATS), ("drift", DRIFT_FORMATS)])
def test_the_cli_offers_exactly_the_registered_formats(command: str, formats: tuple[str, ...]) -> None:
    shown = CliRunner().invoke(main, [command, "--help"], terminal_width=500).output
    assert f"[{'|'.join(formats)}]" in shown


def test_action_yml_documents_exactly_the_registered_formats() -> None:
    described = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]["format"]["description"]
    found = re.fullmatch(r"Output format: (?P<plan>[a-z |]+) \(drift also (?P<drift>[a-z |]+)\)\.", described)
    assert found, f"action.yml's format description changed shape: {described!r}"
    assert tuple(found["plan"].split(" | ")) == PLAN_FORMATS
    assert tuple(found["drift"].split(" | ")) == DRIFT_FORMATS[len(PLAN_FORMATS) :]
