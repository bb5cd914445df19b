"""The documentation's references hold: every relative link in README.md and docs/ reaches a file (and
a heading, for a `#anchor`), and every module, file or folder of the repository they name in
backticks exists (a path is from the repository's root or from `reconciler/`), so a moved or renamed
module cannot leave a stale name behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"(?:reconciler|tests|benchmarks|docs|manifests)/[\w./-]*|\.(?:ci|github)/[\w./-]*")
_MODULE = re.compile(r"reconciler(?:\.\w+)+")
_PACKAGE_FILE = re.compile(r"\w+/[\w/]*\w+\.py")
NOT_MODULES = {"reconciler.snapshot", "reconciler.throttle"}  # the Parquet snapshot's metadata key, the throttle markers' prefix


def _prose(path: Path) -> str:
    """The document without its fenced code blocks (examples, not references)."""
    return re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file."""
    headings = re.findall(r"^#+ (.+)$", _prose(path), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_there_are_documents_to_check():
    assert len(DOCUMENTS) >= 10, DOCUMENTS


def test_every_relative_link_reaches_its_file_and_heading():
    broken = []
    for document in DOCUMENTS:
        for target in _LINK.findall(_prose(document)):
            if re.match(r"[a-z]+:", target):
                continue  # an absolute URL
            file, _, anchor = target.partition("#")
            reached = (document.parent / file).resolve() if file else document
            if not reached.exists():
                broken.append(f"{document.name}: {target} (no such file)")
            elif anchor and anchor not in _anchors(reached):
                broken.append(f"{document.name}: {target} (no such heading)")
    assert broken == []


def test_every_repository_path_and_module_named_exists():
    missing = []
    for document in DOCUMENTS:
        for code in _CODE.findall(_prose(document)):
            for path in _PATH.findall(code):
                if not any((base / path.rstrip(".")).exists() for base in (ROOT, ROOT / "reconciler")):
                    missing.append(f"{document.name}: {path}")
            if _PACKAGE_FILE.fullmatch(code) and not (ROOT / code).exists() and not (ROOT / "reconciler" / code).exists():
                missing.append(f"{document.name}: {code}")  # a module named by its path within the package
            for name in _MODULE.findall(code):
                if name not in NOT_MODULES and not _names_a_module(name):
                    missing.append(f"{document.name}: {name}")
    assert missing == []


def _names_a_module(dotted: str) -> bool:
    """`reconciler.a.b` is a module, or an attribute of one (`reconciler.files.snapshot.load_snapshot`)."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        path = ROOT.joinpath(*parts[:end])
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return end >= len(parts) - 1
    return False
