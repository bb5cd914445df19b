"""Plain YAML documents are converted straight from the parser's events
(`reconciler.manifests.yaml_source._Reader._simple_document`); every other one goes through nodes. Both
must give the same documents (values, key and value positions, refusals, secrets) and the same
problems, in the same order, for every text: the example manifests, every bad manifest, and texts
that leave the plain path at each of its exits, also part-way through a file."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from reconciler.manifests import yaml_source
from tests.yaml_reads import read_everything

ROOT = Path(__file__).resolve().parents[2]

PLAIN = """\
kind: Topic
name: orders.v1
clusters: [prod, dev]
partitions: 12
configs:
  retention.ms: 7d
  cleanup.policy: [compact, delete]
  min.cleanable.dirty.ratio: 0.5
overrides:
  prod: {partitions: 24, replica_assignment: {0: [1, 2, 3], 1: [2, 3, 1]}}
truncate:
- keep_last: 500
- before_time: 2026-10-01T00:00:00Z
security: {password: "${P}", username: u}
quoted: {"<<": 1, "": empty, 'x': "y"}
"""
# Each leaves the plain path at one of its exits; set between two plain documents, and alone.
NOT_PLAIN = [
    "a: &x 1\nb: *x\n",  # an anchor, an alias
    "base: &b {p: 1}\ntopic:\n  <<: *b\n  q: 2\n",  # a merge key
    "a: !!str 1\nb: !!int '2'\n",  # tags on scalars
    "a: !!map {b: 1}\n",  # a tag on a mapping
    "a: !local [1]\n",  # a tag that is not allowed
    "a: yes\n",  # read differently by YAML 1.1
    "a: 012\n",
    "a: 1\na: 2\n",  # a repeated key
    "1: a\n'1': b\n",  # equal texts, different keys
    "? [1]\n: 2\n",  # a list as a key
    "? {a: 1}\n: 2\n",  # a mapping as a key
    "null: 1\n",  # keys that are not text or whole numbers
    "true: 1\n",
    "1.5: 1\n",
    "security: {password: yes}\n",  # a refused secret
    "security: {password: &s p}\nname: *s\n",
    "",  # an empty document
    "~\n",
    "just text\n",  # a scalar document
    "- 1\n- [2, {a: 3}]\n",  # a list document
    "a: " + "[" * 99 + "]" * 99 + "\n",  # nesting at the limit, and beyond it
    "a: " + "[" * 100 + "]" * 100 + "\n",
    "a: " + "[" * 150 + "]" * 150 + "\n",
]


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "manifests").rglob("*.yaml"))]
    for p in sorted((ROOT / "tests" / "load" / "bad").rglob("*.yaml")):
        with contextlib.suppress(UnicodeDecodeError):  # some bad cases are not UTF-8 on purpose
            texts.append(p.read_text(encoding="utf-8"))
    texts.append(PLAIN)
    for text in NOT_PLAIN:
        texts += [text, f"{PLAIN}---\n{text}---\n{PLAIN}", f"---\n{text}...\n---\n{PLAIN}"]
    return texts


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "pure-python"])
def test_plain_documents_read_straight_from_events_as_through_nodes(monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(yaml_source, "_FAST_LOADER", None)
    texts = _texts()
    straight = [read_everything(text) for text in texts]
    monkeypatch.setattr(yaml_source, "SIMPLE_DOCUMENTS", False)
    monkeypatch.setattr(yaml_source, "PLAIN_LINES", False)
    through_nodes = [read_everything(text) for text in texts]
    for text, a, b in zip(texts, straight, through_nodes):
        assert a == b, text


def test_the_plain_path_is_taken_for_plain_documents(monkeypatch):
    """Not a speed test: that the comparison above compares the plain path, not the other twice."""
    taken = []
    original = yaml_source._Reader._simple_document

    def spy(self, events, read):
        result = original(self, events, read)
        taken.append(result)
        return result

    monkeypatch.setattr(yaml_source._Reader, "_simple_document", spy)
    read_everything(f"{PLAIN}---\na: &x 1\n---\n{PLAIN}")
    assert taken == [True, False, True]
