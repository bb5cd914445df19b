"""Random files near the line reader's edges (`reconciler.manifests.yaml_source._LineReader`): lines of
plain documents and lines that are almost plain, at random indents, in random orders. Whatever the
line reader takes must read exactly as through the parser (documents, positions, secrets,
problems); what it leaves goes to the parser. Seeded: the same files every run."""

from __future__ import annotations

import random

import pytest

from reconciler.manifests import yaml_source
from reconciler.manifests.problems import is_secret
from tests.yaml_reads import read_everything

KEYS = ["kind", "name", "partitions", "configs", "retention.ms", "password", "a", "b", "0", "1", "x-y", "yes"]
VALUES = [
    "Topic",
    "orders.v1",
    "12",
    "-1",
    "+3",
    "0.5",
    "7d",
    "1_000",
    "012",
    "0x1f",
    "yes",
    "no",
    "on",
    "null",
    "true",
    "1e3",
    ".inf",
    "2026-10-01",
    "2026-10-01T10:00:00Z",
    "a b",
    "a  b",
    "compact,delete",
    "'q'",
    '"d q"',
    "''",
    '""',
    "[a, b]",
    "[]",
    "[ 1 ,2 ]",
    "[a,]",
    "x # c",
    "x#c",
    "b:c",
    "-",
    "~",
    "é",
    "'it''s'",
    '"\\t"',
    "{a: 1}",
    "&x 1",
    "*x",
    "!!str 1",
    "|",
    ">",
]
PLAIN_VALUES = [
    "Topic",
    "orders.v1",
    "12",
    "-1",
    "+3",
    "0.5",
    "7d",
    "a b",
    "compact,delete",
    "'q'",
    '"d q"',
    "[a, b]",
    "[]",
    "2026-10-01",
    "x # c",
    "true",
    "s3cret",
]
RAW = ["---", "...", "# c", "", "   ", "- a", "- - a", "?", ": b", "--- a: 1", "%YAML 1.2", "  continued"]


def _value(rng: random.Random) -> str:
    return rng.choice(PLAIN_VALUES if rng.random() < 0.85 else VALUES)


def _block(rng: random.Random, indent: int, depth: int, out: list[str], dash: str = "") -> None:
    """A mapping at `indent` (its first key after `dash`, when it is a list entry), plain mostly."""
    keys = rng.sample(KEYS, rng.randint(1, 4))
    step = rng.choice([2, 2, 4, 1])
    for i, key in enumerate(keys):
        lead = " " * indent if i or not dash else " " * (indent - len(dash)) + dash
        roll = rng.random()
        if depth < 3 and roll < 0.25:
            out.append(f"{lead}{key}:")
            _block(rng, indent + step, depth + 1, out)
        elif depth < 3 and roll < 0.4:
            out.append(f"{lead}{key}:")
            at = indent + rng.choice([0, step])
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.5:
                    out.append(f"{' ' * at}- {_value(rng)}")
                else:
                    entry = "- " + " " * rng.randint(0, 2)
                    _block(rng, at + len(entry), depth + 1, out, entry)
        else:
            out.append(f"{lead}{key}: {_value(rng)}" + (" # note" if rng.random() < 0.1 else ""))
        if rng.random() < 0.05:
            out.append(rng.choice(["", "# c", "   "]))


def _text(rng: random.Random) -> str:
    lines: list[str] = []
    for d in range(rng.randint(1, 3)):
        if d or rng.random() < 0.2:
            lines.append("---")
        _block(rng, 0, 0, lines)
    if rng.random() < 0.3:  # one line spoiled: moved, or replaced
        at = rng.randrange(len(lines))
        lines[at] = rng.choice([" " + lines[at], lines[at].lstrip(), rng.choice(RAW)])
    return "\n".join(lines) + rng.choice(["\n", ""])


@pytest.mark.parametrize("seed", range(4))
def test_random_near_plain_files_read_as_through_the_parser(seed):
    rng = random.Random(seed)
    texts = [_text(rng) for _ in range(1500)]
    taken = sum(yaml_source._LineReader("f.yaml", is_secret).read(text) is not None for text in texts)
    for text in texts:
        assert read_everything(text) == read_everything(text, by_parser=True), text
    assert taken > 150  # the comparison compares the line reader on many files, not the parser twice
