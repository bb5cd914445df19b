"""Rendering plans and apply results as text, JSON and Markdown."""

from __future__ import annotations

from reconciler.models.formats import PLAN_FORMATS
from reconciler.models.plan import Plan
from reconciler.models.result import ApplyResult
from reconciler.render import apply_result as result_format
from reconciler.render import json as json_format
from reconciler.render import markdown, text

FORMATS = PLAN_FORMATS


def render_plan(plan: Plan, fmt: str, color: bool = False) -> str:
    if fmt == "json":
        return json_format.plan_json(plan)
    if fmt == "markdown":
        return markdown.plan_markdown(plan)
    if fmt == "text":
        return text.plan_text(plan, color=color)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def render_apply_result(outcome: ApplyResult, fmt: str, color: bool = False) -> str:
    if fmt == "json":
        return json_format.result_json(outcome)
    if fmt == "markdown":
        return result_format.result_markdown(outcome)
    if fmt == "text":
        return result_format.result_text(outcome, color=color)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "render_apply_result", "render_plan"]
