"""The drift report renderers (the Parquet snapshots drift reads are tested in tests/snapshots)."""
from __future__ import annotations

import json

from reconciler.drift.engine import drift_for_cluster, report_of
from reconciler.drift.render import render_report
from reconciler.models.desired import KeepLast
from tests.factories import desired, have, observed, want


def _report():
    d = desired(want("orders", configs={"retention.ms": "1000"}, truncate=[KeepLast(records=10)]),
                want("new", partitions=2))
    o = observed(have("orders", set_on_topic={"retention.ms": "5", "segment.ms": "7"}, size_bytes=1 << 20),
                 have("stray<script>"), have("__consumer_offsets"))
    return report_of([drift_for_cluster(d, o, observed(have("orders", hw=150)))], "local")


def test_every_format_shows_every_section():
    report = _report()
    text = render_report(report, "text")
    for title in ("Data-loss signals (3)", "Managed topics with pending changes (3)",
                  "Truncation points not yet applied (1)", "Config drift (2)", "Unmanaged topics (1)"):
        assert title in text
        assert title in render_report(report, "markdown")
    assert "inherited" not in text and "differs" in text and "undeclared" in text
    data = json.loads(render_report(report, "json"))
    assert data["clusters"][0]["counts"]["unmanaged_topics"] == 1
    assert data["clusters"][0]["truncation_rows"][0]["estimated_bytes"] == (1 << 20) * 90 // 100


def test_html_is_self_contained_with_charts_and_escaped():
    page = render_report(_report(), "html")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page and "stray&lt;script&gt;" in page
    assert "Drift findings by kind" in page and "Bytes pending truncations would free" in page


def test_long_sections_are_capped_in_text_but_complete_in_json():
    o = observed(*[have(f"t{i:03d}") for i in range(60)])
    report = report_of([drift_for_cluster(desired(), o)], "local")
    assert "... and 10 more" in render_report(report, "text")
    assert len(json.loads(render_report(report, "json"))["clusters"][0]["unmanaged_topics"]) == 60
