"""Bad manifests, stored as data: one directory per case under bad/, each a small manifest tree and
an expect.json naming every problem the loader must report for it (file, line, message substring;
a list when one case has several problems, reported together).

Each case goes through the real `reconcile validate` and through load_manifests. Both must report
exactly the expected problems at the expected places, and never a traceback or an internal error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.errors import ManifestError
from reconciler.manifests import load_manifests

HERE = Path(__file__).resolve().parent
CASES = sorted(p for p in (HERE / "bad").iterdir() if p.is_dir())
EXAMPLES = HERE.parents[1] / "manifests"


def expected(case: Path) -> list[dict]:
    data = json.loads((case / "expect.json").read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def test_the_cases_are_well_formed():
    assert len(CASES) >= 30
    multi_file = 0
    for case in CASES:
        expect = expected(case)
        assert expect, case.name
        for e in expect:
            assert set(e) == {"file", "line", "message"}, case.name
            assert isinstance(e["line"], int) and e["line"] >= 1 and e["message"], case.name
            assert e["file"] == "<manifests>" or (case / e["file"]).is_file(), (case.name, e["file"])
        assert any(case.rglob("*.yaml")), case.name
        if len(expect) > 1 and len({e["file"] for e in expect}) > 1:
            multi_file += 1
    assert multi_file >= 3


def test_the_example_manifests_validate():
    """The control: the same invocation on good manifests passes."""
    result = CliRunner().invoke(main, ["validate", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    assert "valid." in result.output


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_validate_reports_each_problem_at_its_line(case: Path):
    expect = expected(case)
    result = CliRunner().invoke(main, ["validate", str(case)])
    assert isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "internal error" not in result.output, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    for e in expect:
        place = f"{e['file']}:{e['line']}:"
        assert any(line.startswith(place) and e["message"] in line for line in lines), (
            f"expected {place} ... {e['message']!r} in:\n{result.output}"
        )
    count = len(expect)
    assert f"{count} problem{'s' if count != 1 else ''} in the manifests" in result.output, result.output


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_load_manifests_raises_with_each_problem(case: Path):
    expect = expected(case)
    with pytest.raises(ManifestError) as raised:
        load_manifests(case)
    problems = raised.value.problems
    shown = "\n".join(str(p) for p in problems)
    for e in expect:
        assert any(p.file == e["file"] and p.line == e["line"] and e["message"] in p.message for p in problems), (
            f"expected {e['file']}:{e['line']} ... {e['message']!r} in:\n{shown}"
        )
    assert len(problems) == len(expect), shown
