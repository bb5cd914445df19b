"""Property-based: the example manifests, snapshots and saved plans, mutated the way a careless or
hostile user would (keys deleted or repeated, types swapped, huge and negative numbers, random
bytes, deep nesting), through the real CLI. Whatever the input:
- the exit code is the command's own (0, 1 or 2; drift 0, 1 or 3), never a crash,
- no traceback and no "internal error" reaches the user,
- an error names the file it is about,
- nothing is written when the command fails, but a plan with errors (written with them).
Bounded (examples and sizes), so the suite stays fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "manifests"
SNAPSHOT = EXAMPLES / "snapshots" / "prod-eu.json"
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=not os.environ.get("FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Values a mutation may put anywhere: wrong types, limits of the wire types, YAML's traps.
HOSTILE: st.SearchStrategy[object] = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            "",
            "yes",
            "on",
            "0o17",
            "012",
            "1:30",
            ".inf",
            "~",
            "${",
            "$HOME",
            -1,
            0,
            2**31,
            -(2**63),
            2**63,
            2**64,
            10**30,
            1e308,
            float("inf"),
            "x" * 5000,
            "\x1b[31m",
            "\u202e",
            [],
            {},
            [[[[[]]]]],
        ]
    ),
    st.integers(),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
)


DEEP = "__deep_nesting__"


def _deepen(text: str, draw, block: bool = False) -> str:
    depth = draw(st.sampled_from([50, 1000, 10_000]))
    nested = ("- " * depth + "1") if block else "[" * depth + "]" * depth
    for quoted in (f'"{DEEP}"', f"'{DEEP}'", DEEP):
        text = text.replace(quoted, nested)
    return text


def _paths(data, prefix=()):
    """Every path into nested dicts and lists."""
    yield prefix
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, prefix + (i,))


def _mutate(data, draw):
    """One structural mutation of parsed JSON/YAML data, in place where possible; returns the data."""
    paths = [p for p in _paths(data) if p]
    if not paths:
        return draw(HOSTILE)
    path = draw(st.sampled_from(paths))
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    how = draw(st.sampled_from(["replace", "delete", "duplicate", "nest", "rename"]))
    if how == "replace":
        parent[last] = draw(HOSTILE)
    elif how == "delete":
        del parent[last]
    elif how == "duplicate" and isinstance(parent, list):
        parent.insert(last, parent[last])
    elif how == "nest":
        parent[last] = DEEP  # replaced in the text once dumped: dumpers recurse, so deep data cannot be dumped
    elif how == "rename" and isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=12))] = parent.pop(last)
    return data


def _corrupt_bytes(raw: bytes, draw) -> bytes:
    """Random bytes spliced in, a slice cut out or doubled."""
    at = draw(st.integers(0, len(raw)))
    how = draw(st.sampled_from(["insert", "cut", "double"]))
    if how == "insert":
        return raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    end = min(len(raw), at + draw(st.integers(1, 200)))
    return raw[:at] + raw[end:] if how == "cut" else raw[:end] + raw[at:]


def _run(args: list[str]):
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    allowed = (0, 1, 3) if args[0] == "drift" else (0, 1, 2)  # drift: 3 is "drift found"
    assert result.exit_code in allowed, (args, result.exit_code, result.output)
    assert isinstance(result.exception, (SystemExit, type(None))), result.exc_info
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result


# The copied manifests' folder: a name no message contains by accident ("manifests" is in every
# manifest error), so finding it in a message proves the message names the tree's own files.
COPIED = "tree-q7zx"


def _copy_examples(tmp: Path) -> Path:
    target = tmp / COPIED
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EXAMPLES, target)
    return target


@FUZZ
@given(data=st.data())
def test_mutated_manifests(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("m")
    manifests = _copy_examples(tmp)
    victim = data.draw(st.sampled_from(sorted(p for p in manifests.rglob("*.yaml"))))
    shown = str(victim.relative_to(manifests))
    if data.draw(st.booleans()):
        docs = list(yaml.safe_load_all(victim.read_text()))
        i = data.draw(st.integers(0, len(docs) - 1))
        docs[i] = _mutate(docs[i], data.draw)
        text = yaml.safe_dump_all(docs, allow_unicode=True, sort_keys=False)
        victim.write_text(_deepen(text, data.draw, block=data.draw(st.booleans()) and DEEP + "\n" in text))
    else:
        victim.write_bytes(_corrupt_bytes(victim.read_bytes(), data.draw))
    out = tmp / "plan.json"
    result = _run(["plan", str(manifests), "--snapshot", str(SNAPSHOT), "--format", "json", "-o", str(out)])
    if result.exit_code == 1 and out.exists():  # a plan with errors is still written, with its errors
        assert json.loads(out.read_text())["summary"]["errors"] > 0
    elif result.exit_code == 1:
        # FILE:LINE:COL of the file mutated, or (a problem between documents) of another file of the
        # tree, by its path in it; or the tree itself, by its folder's name
        named = {shown, *(str(f.relative_to(manifests)) for f in manifests.rglob("*.yaml"))}
        at = re.compile(rf"(?m)(^|\s)({'|'.join(map(re.escape, sorted(named)))}):[0-9]+:[0-9]+: ")
        assert at.search(result.output) or COPIED in result.output, result.output
    validated = _run(["validate", str(manifests)])
    assert validated.exit_code in (0, 1)


@FUZZ
@given(data=st.data())
def test_mutated_snapshots(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("s")
    snapshot = tmp / "snap.json"
    if data.draw(st.booleans()):
        snapshot.write_text(_deepen(json.dumps(_mutate(json.loads(SNAPSHOT.read_text()), data.draw)), data.draw))
    else:
        snapshot.write_bytes(_corrupt_bytes(SNAPSHOT.read_bytes(), data.draw))
    out = tmp / "out.json"
    for command in (
        ["plan", str(EXAMPLES), "--snapshot", str(snapshot), "--format", "json", "-o", str(out)],
        ["drift", str(EXAMPLES), "--snapshot", str(snapshot), "--format", "json", "-o", str(out)],
    ):
        result = _run(command)
        if result.exit_code == 1:
            assert not out.exists() and str(snapshot) in result.output, result.output
        out.unlink(missing_ok=True)


@FUZZ
@given(data=st.data())
def test_mutated_saved_plans(tmp_path_factory, monkeypatch, data):
    tmp = tmp_path_factory.mktemp("p")
    saved = tmp / "plan.json"
    made = _run(["plan", str(EXAMPLES), "--snapshot", str(SNAPSHOT), "--format", "json", "-o", str(saved)])
    assert made.exit_code == 2
    if data.draw(st.booleans()):
        saved.write_text(_deepen(json.dumps(_mutate(json.loads(saved.read_text()), data.draw)), data.draw))
    else:
        saved.write_bytes(_corrupt_bytes(saved.read_bytes(), data.draw))
    out = tmp / "result.json"
    for name in ("KAFKA_PROD_EU_USER", "KAFKA_PROD_EU_PASSWORD"):  # prod-eu's ${...} credentials
        monkeypatch.setenv(name, "fuzz")
    # Port 1 on loopback refuses at once: a plan that loads gets as far as connecting, and no further.
    result = _run(
        [
            "apply",
            str(saved),
            "--manifests",
            str(EXAMPLES),
            "--bootstrap-servers",
            "127.0.0.1:1",
            "--format",
            "json",
            "-o",
            str(out),
        ]
    )
    assert result.exit_code == 1 and not out.exists()
    assert str(saved) in result.output or "cannot reach" in result.output or "127.0.0.1:1" in result.output, result.output


LONG_MAX = 2**63 - 1
_DURATIONS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_SIZES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "KB": 1000, "MB": 1000**2, "TB": 1000**4}
_CLUSTER = "kind: Cluster\nname: prod\nbootstrap_servers: [kafka-1:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"
_TOPIC = "kind: Topic\nname: orders.v1\n"
# Every setting whose value may be written as text with a unit: (file, its text before the value
# on the value's own line, the units, the smallest value allowed).
_UNIT_SETTINGS = [
    ("topics.yaml", _TOPIC + "expected_bytes_per_day: ", _SIZES, 0),
    ("topics.yaml", _TOPIC + "configs:\n  retention.ms: ", _DURATIONS, -1),
    ("topics.yaml", _TOPIC + "configs:\n  retention.bytes: ", _SIZES, -1),
    ("topics.yaml", _TOPIC + "overrides:\n  prod:\n    configs: {}\n    expected_bytes_per_day: ", _SIZES, 0),
    ("clusters.yaml", _CLUSTER + "reassignment:\n  throttle: ", _SIZES, 1),
    ("clusters.yaml", _CLUSTER + "reassignment:\n  wait: ", _DURATIONS, 0),
]


@FUZZ
@given(data=st.data())
def test_sizes_and_durations_written_as_text_have_the_range_of_a_long(tmp_path_factory, data):
    """As a number without a unit is: within Kafka's int64 it is read, beyond it refused at its key."""
    file, before, unit_sizes, minimum = data.draw(st.sampled_from(_UNIT_SETTINGS))
    unit = data.draw(st.sampled_from(sorted(unit_sizes)))
    factor = unit_sizes[unit]
    number = data.draw(st.one_of(st.integers(0, 10**25), st.integers(-1, 1).map(lambda d: LONG_MAX // factor + d)))
    tree = tmp_path_factory.mktemp("u")
    text = f"{number}{unit}"
    (tree / "clusters.yaml").write_text(_CLUSTER)
    (tree / "topics.yaml").write_text(_TOPIC)
    (tree / file).write_text(before + text + "\n")
    result = _run(["validate", str(tree)])
    if minimum <= number * factor <= LONG_MAX:
        assert result.exit_code == 0, (text, result.output)
    else:
        line, column = before.count("\n") + 1, len(before.rsplit("\n", 1)[-1]) + 1
        assert result.exit_code == 1 and f"{file}:{line}:{column}: " in result.output, (text, result.output)
        assert f"'{text}'" in result.output, result.output
