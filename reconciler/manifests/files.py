"""The manifest files: every *.yaml / *.yml file under a directory, read into YAML documents."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from reconciler.errors import shown
from reconciler.manifests.problems import Problems, is_secret
from reconciler.manifests.yaml_source import YamlDocument, decode, read_yaml_text
from reconciler.models.desired import SourceRef


def read_manifests(root: Path, problems: Problems) -> tuple[list[Path], list[YamlDocument]]:
    """The manifest files under `root` (or `root` itself, a file) and their documents."""
    single = not root.is_dir()
    files = [root] if single else manifest_files(root, problems)
    docs = []
    for file in files:
        name = file.name if single else str(file.relative_to(root))
        docs.extend(_read_file(file, name, problems))
    for doc in docs:
        problems.refused_at.setdefault(doc.file, set()).update(doc.refused_at)
    return files, docs


def manifest_files(root: Path, problems: Problems) -> list[Path]:
    """Every *.yaml / *.yml file under `root`, symbolic links followed. What cannot be read as a
    manifest file (a dangling or looping link, a directory or a pipe named x.yaml) is reported:
    nothing may be planned from a part of the manifests. A directory link back to a directory it
    is in is reported too, instead of being walked for ever."""
    files = []
    stack: list[tuple[Path, frozenset[tuple[int, int]]]] = [(root, frozenset())]
    while stack:
        directory, above = stack.pop()
        try:
            info = directory.stat()
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as e:
            problems.add(
                SourceRef(file=_relative(directory, root), line=1),
                f"cannot read this directory: {e.strerror or e}; fix its permissions or remove it",
            )
            continue
        above = above | {(info.st_dev, info.st_ino)}
        for entry in entries:
            file = Path(entry.path)
            manifest = entry.name.endswith((".yaml", ".yml"))
            try:
                target = os.stat(entry.path)  # follows symbolic links
            except OSError as e:
                if manifest or entry.is_symlink():
                    where = SourceRef(file=_relative(file, root), line=1)
                    if e.errno == errno.ELOOP:
                        problems.add(
                            where, "this symbolic link loops (it leads back to itself); point it at a manifest file or remove it"
                        )
                    elif e.errno == errno.ENOENT and entry.is_symlink():
                        if manifest:
                            problems.add(
                                where,
                                f"this symbolic link points to {shown(os.readlink(entry.path))}, "
                                "which does not exist; fix the link or remove it",
                            )
                    else:
                        problems.add(where, f"cannot read this file: {e.strerror or e}; fix its permissions or remove it")
                continue
            if stat.S_ISDIR(target.st_mode):
                if (target.st_dev, target.st_ino) in above:
                    problems.add(
                        SourceRef(file=_relative(file, root), line=1),
                        "this symbolic link leads back to a directory it is in, which would be read for ever; remove it",
                    )
                    continue
                if manifest:
                    problems.add(
                        SourceRef(file=_relative(file, root), line=1),
                        "this is a directory, not a manifest file; rename it so that its name does not "
                        "end in .yaml or .yml (the files in it are read all the same)",
                    )
                stack.append((file, above))
            elif manifest and not stat.S_ISREG(target.st_mode):
                problems.add(
                    SourceRef(file=_relative(file, root), line=1),
                    "this is not a regular file (a pipe, socket or device); manifests must be files",
                )
            elif manifest:
                files.append(file)
    return sorted(files)


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path != root else str(root)


def _read_file(file: Path, name: str, problems: Problems) -> list[YamlDocument]:
    def report(line: int, column: int, message: str) -> None:
        problems.add(SourceRef(file=name, line=line, column=column), message)

    try:
        raw = file.read_bytes()
    except OSError as e:
        report(1, 1, f"cannot read the file: {e.strerror or e}; fix its permissions or remove it")
        return []
    text = decode(raw, report)
    return [] if text is None else read_yaml_text(text, name, report, is_secret)
