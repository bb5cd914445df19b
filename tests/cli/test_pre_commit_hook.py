"""The pre-commit hook a manifest repository adds (.pre-commit-hooks.yaml): each entry is a real
command of the installed CLI, and running it as pre-commit does (the hook's entry and args, no
file names) passes the example manifests and fails a bad manifest at its line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
SCRIPTS = {e.name: e.value for e in entry_points(group="console_scripts") if e.value.startswith("reconciler.")}
BAD = ROOT / "tests" / "load" / "bad" / "config-size-bad-unit"


def _run(hook: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The hook as pre-commit runs it in a repository at `cwd`: entry, then args; the console
    script installed beside this interpreter (pre-commit's language: python installs the package)."""
    program, *words = hook["entry"].split()
    script = Path(sys.executable).parent / program
    return subprocess.run(
        [str(script), *words, *hook.get("args", [])], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_hook_file_offers_validate():
    assert [hook["id"] for hook in HOOKS] == ["reconcile-validate"]


@pytest.mark.parametrize("hook", HOOKS, ids=lambda h: h["id"])
def test_each_hook_is_a_command_of_the_cli(hook):
    program, command, *_ = hook["entry"].split()
    assert program in SCRIPTS and SCRIPTS[program] == "reconciler.cli:main"
    assert command in main.commands
    assert hook["language"] == "python"  # installed from this repository with its dependencies
    # validate reads one directory: file names appended by pre-commit would each be taken for one
    assert hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    assert files.search("manifests/topics.yaml") and files.search("manifests/x.yml") and not files.search("README.md")


@pytest.mark.parametrize("hook", HOOKS, ids=lambda h: h["id"])
def test_the_hook_passes_good_manifests_and_fails_bad_ones(hook, tmp_path):
    good = tmp_path / "good"
    shutil.copytree(ROOT / "manifests", good / "manifests")
    passed = _run(hook, good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "valid." in passed.stdout

    bad = tmp_path / "bad"
    shutil.copytree(BAD, bad / "manifests")
    failed = _run(hook, bad)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "topics.yaml:4:" in failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr
