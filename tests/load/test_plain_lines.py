"""Files of the plainest documents are read line by line (`reconciler.manifests.yaml_source._LineReader`),
without the parser; every other file goes through the parser's events. Both must give the same
documents (values, key and value positions, secrets) and the same problems for every text: the
example manifests, every bad manifest, lines of every shape the line reader takes, and texts that
leave it at each of its exits, alone and part-way through a file (`read_yaml_text_by_parser` is
the reader of every file; no module global selects a reader)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from reconciler.manifests import yaml_source
from reconciler.manifests.problems import is_secret
from tests.yaml_reads import read_everything

ROOT = Path(__file__).resolve().parents[2]

PLAIN = """\
# a comment
kind: Topic   # and another
name: orders.v1
clusters: [prod, dev]
partitions: 12
configs:
  retention.ms: 7d
  cleanup.policy: compact,delete
  min.cleanable.dirty.ratio: 0.5
  segment.bytes: -1

  max.message.bytes: +1024
overrides:
    prod:
        partitions: 24
        replica_assignment:
          0: [ 1,2 , 3 ]
          1: []
truncate:
- keep_last: 500
-   before_time: 2026-10-01
    note: a plain text  with spaces, and - dashes
- keep_last: 7
  why: "quoted # not a comment"
security:
  password: secret-1
  username: 'u s'
  sasl.jaas.config: [a, b]
labels:
  - one
  - "two"
  - .three
description: 'single # quoted'
"""
ANOTHER = """\
---
kind: Topic
name: payments.v1
---
# nothing but a comment: no document
---
  kind: Topic
  name: indented.v1
  list:
  - a
"""
# Each is not a plain document: the whole file is read by the parser.
NOT_PLAIN = [
    "a:\n",  # an empty value (null)
    "a:\nb: 1\n",
    "- a: 1\n  b:\n- c\n",
    "a: &x 1\nb: *x\n",  # an anchor, an alias
    "a: !!str 1\n",  # a tag
    "a: yes\n",  # read differently by YAML 1.1
    "a: 012\n",
    "a: 1_000\n",
    "a: [1_000]\n",
    "a: 1\na: 2\n",  # a repeated key
    "0x1: a\n1: b\n",  # equal keys written differently
    "null: 1\n",  # keys that are not text or whole numbers
    "true: 1\n",
    "1.5: 1\n",
    "a: 1:30\n",  # a colon in a value
    "a: b:c\n",
    "a: [b:c]\n",
    "a:b\n",
    "a: b\n  c\n",  # a value over two lines
    "a: b\n  c: 1\n",
    "a:\n  b\n",
    "- a\n  - b\n",
    "a: 'it''s'\n",  # an escaped quote
    'a: "\\u0041"\n',  # an escape
    'a: "open\n',  # not closed
    "a: {b: 1}\n",  # a flow mapping
    "a: [b, [c]]\n",  # a flow list in a flow list
    "a: [b,]\n",
    "a: [b\n  , c]\n",  # a flow list over two lines
    "a: |\n  text\n",  # block scalars
    "a: >\n  text\n",
    "a:\n- - b\n",  # a list in a list
    "a:\n-\n",
    "a:\n- # nothing\n",
    "a: b#c\n",
    "a: ~\n",
    "a: -\n",
    "a: --b\n",
    "? a\n: b\n",  # an explicit key
    "'a': b\n",  # a quoted key
    "a:\n  b: 1\n c: 2\n",  # indentation that matches no open mapping
    "a:\n    b: 1\n  c: 2\n",
    "a:\n  - 1\n  b: 2\n",
    "a:\n- 1\n  - 2\n",
    "  a: 1\nb: 2\n",
    "a: 1\n\tb: 2\n",  # a tab
    "a: 1\r\nb: 2\r\n",  # other line breaks
    "a: 1\rb: 2\n",
    "a: 1\u2028b: 2\n",
    "\ufeffa: 1\n",  # a byte order mark
    "%YAML 1.2\n---\na: 1\n",  # a directive
    "--- a: 1\n",  # content after the document's start
    "--- \na: 1\n",
    "a: 1\n...\n",  # a document's end
    "just text\n",  # a scalar document
    "- 1\n- 2\n",  # a list document
    "k" * 1001 + ": 1\n",  # a key longer than YAML looks for its colon
    "a: é\n",  # beyond ASCII
]


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "manifests").rglob("*.yaml"))]
    for p in sorted((ROOT / "tests" / "load" / "bad").rglob("*.yaml")):
        with contextlib.suppress(UnicodeDecodeError):  # some bad cases are not UTF-8 on purpose
            texts.append(p.read_text(encoding="utf-8"))
    texts += [PLAIN, ANOTHER, PLAIN + ANOTHER, "k" * 1000 + ": 1\n", "", "\n", "---\n", "# only\n"]
    for text in NOT_PLAIN:
        texts += [text, f"{PLAIN}---\n{text}---\n{PLAIN}"]
    return texts


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "pure-python"])
def test_plain_files_read_line_by_line_as_through_the_parser(monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(yaml_source, "_FAST_LOADER", None)
    for text in _texts():
        assert read_everything(text) == read_everything(text, by_parser=True), text


def test_the_line_reader_takes_plain_files_only():
    """Not a speed test: that the comparison above compares the line reader, not the parser twice."""

    def taken(text: str) -> bool:
        return yaml_source._LineReader("f.yaml", is_secret).read(text) is not None

    assert taken(PLAIN) and taken(ANOTHER) and taken(PLAIN + ANOTHER)
    assert not any(taken(f"{PLAIN}---\n{text}") for text in NOT_PLAIN)
    assert taken((ROOT / "manifests" / "topics" / "analytics.yaml").read_text(encoding="utf-8"))
