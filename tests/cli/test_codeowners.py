"""`reconcile codeowners` (docs/teams.md): the CODEOWNERS section that makes each owner's review
required for the manifest files holding its topics, kept beside the hand-written lines, checked
in CI with --check, and a file holding two owners' topics reported with the suggestion to split it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main

CLUSTER = "kind: Cluster\nname: prod\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"
TEAMS = """\
kind: Team
name: payments
review: '@acme/payments'
topics: {prefixes: [payments.]}
---
kind: Team
name: analytics
review: '@carol'
topics: {prefixes: [analytics.]}
"""
HAND_WRITTEN = "# platform reviews everything else\n* @acme/platform\n/manifests/teams.yaml @acme/platform\n"


def _repo(tmp_path: Path) -> Path:
    m = tmp_path / "manifests"
    (m / "topics").mkdir(parents=True)
    (m / "cluster.yaml").write_text(CLUSTER)
    (m / "teams.yaml").write_text(TEAMS)
    (m / "topics" / "payments.yaml").write_text("kind: Topic\nname: payments.orders\n---\nkind: Topic\nname: payments.refunds\n")
    (m / "topics" / "analytics.yaml").write_text("kind: Topic\nname: analytics.clicks\n")
    (m / "topics" / "misc.yaml").write_text("kind: Topic\nname: misc.unowned\n")
    (m / "topics" / "shared events.yaml").write_text(
        "kind: Topic\nname: payments.events\n---\nkind: Topic\nname: analytics.events\n---\nkind: Topic\nname: analytics.views\n"
    )
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "CODEOWNERS").write_text(HAND_WRITTEN)
    return tmp_path


@pytest.fixture
def repo(tmp_path):
    root = _repo(tmp_path)
    cwd = os.getcwd()
    os.chdir(root)  # as in CI: run from the repository's top directory
    yield root
    os.chdir(cwd)


def _run(*args: str):
    result = CliRunner().invoke(main, ["codeowners", "manifests", *args])
    assert "Traceback" not in result.output, result.output
    return result


def test_the_section_requires_each_owner_s_review_of_its_files_and_keeps_the_rest(repo):
    result = _run()
    assert result.exit_code == 0, result.output
    assert result.stdout == ".github/CODEOWNERS: wrote 3 lines.\n"
    assert (repo / ".github" / "CODEOWNERS").read_text() == HAND_WRITTEN + (
        "\n# BEGIN reconcile codeowners: written from the manifests' owners by `reconcile codeowners`; do not edit\n"
        "/manifests/topics/analytics.yaml @carol\n"
        "/manifests/topics/payments.yaml @acme/payments\n"
        "/manifests/topics/shared\\ events.yaml @acme/payments @carol\n"
        "# END reconcile codeowners\n"
    )  # misc.yaml holds no owned topic: the hand-written `*` line decides
    assert result.stderr == (
        "warning: /manifests/topics/shared events.yaml holds topics of 2 owners (analytics 2, payments 1): CODEOWNERS "
        "lets any one owner listed approve, so no owner's review is required for the others' topics; split it into "
        "one file per owner\n"
    )
    again = _run("--check")
    assert again.exit_code == 0 and again.stdout == ".github/CODEOWNERS is up to date (3 lines).\n"
    assert _run().stdout == ".github/CODEOWNERS is up to date (3 lines).\n"


def test_check_fails_when_the_owners_changed_and_writes_nothing(repo):
    assert _run().exit_code == 0
    written = (repo / ".github" / "CODEOWNERS").read_text()
    (repo / "manifests" / "topics" / "misc.yaml").write_text("kind: Topic\nname: misc.unowned\nowner: payments\n")
    result = _run("--check")
    assert result.exit_code == 1
    assert "is out of date with the manifests' owners (4 lines expected); run `reconcile codeowners manifests`" in result.stderr
    assert (repo / ".github" / "CODEOWNERS").read_text() == written
    assert _run().exit_code == 0
    assert "/manifests/topics/misc.yaml @acme/payments\n" in (repo / ".github" / "CODEOWNERS").read_text()


def test_lines_added_after_the_section_move_above_it_so_the_section_stays_last(repo):
    assert _run().exit_code == 0
    path = repo / ".github" / "CODEOWNERS"
    path.write_text(path.read_text() + "/docs/ @acme/writers\n")
    assert _run("--check").exit_code == 1
    assert _run().exit_code == 0
    text = path.read_text()
    assert text.index("/docs/ @acme/writers") < text.index("# BEGIN reconcile codeowners")
    assert text.endswith("# END reconcile codeowners\n")


def test_bad_manifests_or_unpaired_markers_are_errors_and_nothing_is_written(repo):
    path = repo / ".github" / "CODEOWNERS"
    path.write_text(HAND_WRITTEN + "# END reconcile codeowners\n")
    result = _run()
    assert result.exit_code == 1 and "out of pairs" in result.output
    assert path.read_text() == HAND_WRITTEN + "# END reconcile codeowners\n"
    path.write_text(HAND_WRITTEN)
    (repo / "manifests" / "topics" / "misc.yaml").write_text("kind: Topic\nname: misc.unowned\nowner: nobody\n")
    result = _run()
    assert result.exit_code == 1 and "topics/misc.yaml:3:8: unknown owner 'nobody'" in result.output
    assert path.read_text() == HAND_WRITTEN
