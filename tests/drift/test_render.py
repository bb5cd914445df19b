"""The drift report renderers (the Parquet snapshots drift reads are tested in tests/files)."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser

from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report
from reconciler.models.desired import KeepLast
from tests.factories import desired, have, observed, want


def _report():
    d = desired(want("orders", configs={"retention.ms": "1000"}, truncate=[KeepLast(records=10)]), want("new", partitions=2))
    o = observed(
        have("orders", set_on_topic={"retention.ms": "5", "segment.ms": "7"}, size_bytes=1 << 20),
        have("stray<script>"),
        have("__consumer_offsets"),
    )
    return report_of([drift_for_cluster(d, o, observed(have("orders", hw=150)))], "local")


def test_every_format_shows_every_section():
    report = _report()
    text = render_report(report, "text")
    for title in (
        "Data-loss signals (3)",
        "Managed topics with pending changes (3)",
        "Truncation points not yet applied (1)",
        "Config drift (2)",
        "Unmanaged topics (1)",
    ):
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


class _Page(HTMLParser):
    """What a browser would show and which elements it would build."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.attributes: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [value or "" for _, value in attrs]

    def handle_data(self, data):
        self.text.append(data)


def test_html_escapes_every_string_from_the_cluster_and_the_manifests():
    value = "\"&<>' </td><script>alert(1)</script>"
    d = desired(want("orders", configs={"retention.ms": value}))
    o = observed(have("orders", set_on_topic={"retention.ms": "5", "segment.ms": value}), have("<script>"))
    cluster = drift_for_cluster(d, o)
    clusters = [cluster.model_copy(update={"cluster": name}) for name in ('<b>"one"</b>', "two&three")]
    page = render_report(report_of(clusters, "local"), "html")
    shown = _Page(page)
    assert "script" not in shown.tags and "b" not in shown.tags and "<script" not in page
    text = "".join(shown.text)
    # Each string reads back exactly as given: as a topic name, a config value (current and
    # manifest), inside a planner message, a cluster name, and an anchor attribute.
    assert "<script>" in text and f"set retention.ms={value}" in text and f"segment.ms={value} is set" in text
    assert '<b>"one"</b>' in text and "two&three" in text and '#c-<b>"one"</b>' in shown.attributes
    assert '"&<>' not in page and "&#34;&amp;&lt;&gt;" in page


def test_html_is_the_only_format_that_loads_jinja2():
    code = (
        "import sys; from reconciler.drift.render import render_report; from reconciler.drift.model import "
        "DriftReport; [render_report(DriftReport(), f) for f in ('text', 'markdown', 'json')]; "
        "assert 'jinja2' not in sys.modules; render_report(DriftReport(), 'html'); assert 'jinja2' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_long_sections_are_capped_in_text_but_complete_in_json():
    o = observed(*[have(f"t{i:03d}") for i in range(60)])
    report = report_of([drift_for_cluster(desired(), o)], "local")
    assert "... and 10 more" in render_report(report, "text")
    assert len(json.loads(render_report(report, "json"))["clusters"][0]["unmanaged_topics"]) == 60
