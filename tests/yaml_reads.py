"""What reading a YAML text gives, all of it, for comparing two ways of reading the same text."""

from __future__ import annotations

from reconciler.manifests import yaml_source
from reconciler.manifests.problems import is_secret


def read_everything(text: str, by_parser: bool = False) -> tuple[list, list]:
    """(each document's file, data, key and value positions, refusals and secrets; the problems),
    as `read_yaml_text` reads the text, or with `by_parser` the reader it is checked against."""
    found: list = []
    read = yaml_source.read_yaml_text_by_parser if by_parser else yaml_source.read_yaml_text
    docs = read(text, "f.yaml", lambda *p: found.append(p), is_secret)
    return [(d.file, d.data, d.key_marks, d.value_marks, d.refused, d.refused_at, d.secret_texts) for d in docs], found
