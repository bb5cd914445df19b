"""The output formats, named once: the CLI's `--format` choices, both renderers, the golden files
and the `format` input documented in action.yml are read from (or checked against) these. A leaf
module, so `reconcile --help` can read it without importing the renderers."""

from __future__ import annotations

PLAN_FORMATS = ("text", "json", "markdown")  # plans and apply results
DRIFT_FORMATS = (*PLAN_FORMATS, "html")  # a drift report is also a page
