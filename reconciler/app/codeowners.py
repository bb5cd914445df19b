"""`reconcile codeowners`: the CODEOWNERS lines that make each owner's review required for the
manifest files holding its topics (docs/teams.md).

The lines live in a section of the CODEOWNERS file between two marker comments, rewritten whole
and placed last (CODEOWNERS takes the last matching line, so they win over broader patterns
above them); the rest of the file is kept as written. `--check` changes nothing and fails when the
section differs from what the manifests say. A file holding topics of two owners gets a line
naming both, but CODEOWNERS lets any one listed owner approve, so it is reported with the
suggestion to split it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reconciler.app.outcome import Outcome
from reconciler.errors import ReconcilerError
from reconciler.manifests import load_manifests

BEGIN = "# BEGIN reconcile codeowners: written from the manifests' owners by `reconcile codeowners`; do not edit"
END = "# END reconcile codeowners"


@dataclass(frozen=True)
class MixedFile:
    """A manifest file holding topics of more than one owner: team -> how many of its topics."""

    path: str
    owners: dict[str, int]


@dataclass(frozen=True)
class CodeownersOutcome:
    file: str  # the CODEOWNERS file
    lines: list[str]  # the section's lines, markers left out
    changed: bool  # the file was changed (with `check`: is out of date)
    mixed: list[MixedFile] = field(default_factory=list)
    kind: Outcome = Outcome.DONE


def codeowners(manifests_dir: str, codeowners_file: str, root: str, check: bool) -> CodeownersOutcome:
    """Write (or with `check`, compare) the section of `codeowners_file` for the manifests in
    `manifests_dir`; paths in it are relative to `root`, the repository's top directory."""
    manifests = load_manifests(manifests_dir)
    per_file: dict[str, dict[str, set[str]]] = {}  # file -> owner -> its topics there
    handles: dict[str, str] = {}
    for cluster in manifests.cluster_names():
        desired = manifests.desired_state(cluster)
        handles.update({name: team.review for name, team in desired.teams.items()})
        for topic in desired.topics.values():
            if topic.owner is not None and topic.source is not None:
                per_file.setdefault(topic.source.file, {}).setdefault(topic.owner, set()).add(topic.name)
    top = Path(root).resolve()
    lines, mixed = [], []
    for file, owners in sorted(per_file.items(), key=lambda item: _repository_path(manifests_dir, item[0], top)):
        path = _repository_path(manifests_dir, file, top)
        lines.append(f"{_escaped(path)} " + " ".join(sorted(handles[owner] for owner in owners)))
        if len(owners) > 1:
            mixed.append(MixedFile(path, {owner: len(topics) for owner, topics in sorted(owners.items())}))
    target = Path(codeowners_file)
    before = target.read_text(encoding="utf-8") if target.exists() else ""
    after = with_section(before, lines)
    changed = after != before
    if changed and not check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(after, encoding="utf-8")
    return CodeownersOutcome(str(target), lines, changed, mixed, Outcome.FAILED if check and changed else Outcome.DONE)


def with_section(text: str, lines: list[str]) -> str:
    """`text` with its generated section replaced by `lines` (added at the end when it has none)."""
    section = "\n".join([BEGIN, *lines, END]) + "\n"
    kept = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(kept) if line.rstrip("\n") == BEGIN]
    ends = [i for i, line in enumerate(kept) if line.rstrip("\n") == END]
    if len(starts) > 1 or len(ends) > 1 or len(starts) != len(ends) or (starts and ends[0] < starts[0]):
        raise ReconcilerError(
            f"the CODEOWNERS file has its `{BEGIN[:26]}...` and `{END}` lines out of pairs; keep one of each, "
            "BEGIN first (or remove both), and run `reconcile codeowners` again. Nothing was written."
        )
    if starts:
        before, after = "".join(kept[: starts[0]]), "".join(kept[ends[0] + 1 :])
        if after.strip():  # other lines after it: the section moves last, where it wins
            return before + after.rstrip("\n") + "\n\n" + section
        return before + section
    if not text:
        return section
    return text.rstrip("\n") + "\n\n" + section


def _repository_path(manifests_dir: str, file: str, top: Path) -> str:
    path = (Path(manifests_dir) / file).resolve()
    try:
        return "/" + path.relative_to(top).as_posix()
    except ValueError:
        raise ReconcilerError(
            f"the manifest file {path} is outside the repository root {top}; run `reconcile codeowners` from the "
            "repository's top directory or give it with --root."
        ) from None


def _escaped(path: str) -> str:
    """A CODEOWNERS pattern matching exactly `path`: blanks, `#` and glob characters escaped."""
    return "".join("\\" + c if c in " #*?[\\" else c for c in path)
