"""The manifest change `reconcile idle --propose` writes (docs/idle-topics.md), pure: text in,
text out. A declared idle topic becomes `state: absent` with the guard, in place, with a comment
saying what evidence was seen and when; an undeclared one gets a Topic document as it is, absent
and guarded, in a file of its own. Everything else in the files is left as written."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.models.desired import DesiredState
from reconciler.models.idle import TopicActivity, stamp
from reconciler.models.observed import ObservedTopic
from reconciler.plan.policy import is_protected, never_idle
from reconciler.units import format_duration_ms

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_STATE = re.compile(r"^state\s*:")
_GUARD = re.compile(r"^delete_only_if_idle_for\s*:")


@dataclass(frozen=True)
class IdleTopic:
    evidence: TopicActivity
    declared: bool
    proposed: bool
    note: str = ""  # why a declared one is not proposed


@dataclass(frozen=True)
class IdleFindings:
    cluster: str
    idle_for_ms: int
    idle: list[IdleTopic]
    unknown: dict[str, list[str]]  # topic -> why its idleness cannot be shown
    written: list[str] = field(default_factory=list)  # files the proposal wrote


def candidates(desired: DesiredState, topics: Mapping[str, ObservedTopic], exclude: Sequence[str]) -> frozenset[str]:
    """The topics that may be called idle: not internal, protected, ignored by the Cluster
    document, matched by the Policy's idle_exempt_topics or `exclude`, nor declared absent already."""
    return frozenset(
        name
        for name, topic in topics.items()
        if not never_idle(desired, name, topic.internal, exclude) and not is_protected(desired, name)
    )


def classify(
    desired: DesiredState, activity: Mapping[str, TopicActivity], idle_for_ms: int, shared: set[str], propose: bool
) -> IdleFindings:
    """The topics shown idle for `idle_for_ms`, and those whose evidence is not complete. `shared`:
    the names other clusters' manifests declare (such a topic's state is theirs too: not proposed)."""
    idle, unknown = [], {}
    for name, evidence in sorted(activity.items()):
        if evidence.unknown:
            unknown[name] = evidence.unknown
        elif not evidence.not_idle(idle_for_ms):
            declared = name in desired.topics
            note = "declared for other clusters too: its state is theirs as well, so it is not proposed" if name in shared else ""
            idle.append(IdleTopic(evidence, declared, proposed=propose and not note, note=note))
    return IdleFindings(desired.cluster.name, idle_for_ms, idle, unknown)


@dataclass(frozen=True)
class Declared:
    """An idle topic the manifests declare: the line of its `name:` in `file` (1-based)."""

    file: str
    line: int
    evidence: TopicActivity


@dataclass(frozen=True)
class Undeclared:
    evidence: TopicActivity
    partitions: int
    replication_factor: int


def evidence_comment(evidence: TopicActivity) -> str:
    newest = evidence.newest()
    records = (
        "no record on disk"
        if newest is None
        else f"newest record stamped {stamp(newest.newest_timestamp or 0)} (partition {newest.partition})"
    )
    marks = ", ".join(f"{p.partition}:{p.high_watermark}" for p in evidence.partitions[:8])
    groups = ", ".join(g.group for g in evidence.groups[:5]) or "none"
    return (
        f"# idle: {records}; high watermarks {marks}{' ...' if len(evidence.partitions) > 8 else ''}; "
        f"groups with commits (none live): {groups}; seen {stamp(evidence.read_at_ms)} by reconcile idle"
    )


def guard_lines(idle_for_ms: int, evidence: TopicActivity) -> list[str]:
    return [evidence_comment(evidence), "state: absent", f"delete_only_if_idle_for: {format_duration_ms(idle_for_ms)}"]


def edit_declared(text: str, topics: list[Declared], idle_for_ms: int) -> str:
    """`text` with each topic's document made absent and guarded: its `state:` and guard lines
    (top-level keys of the document) replaced, the new ones after its `name:` line."""
    lines = text.splitlines(keepends=True)
    for topic in sorted(topics, key=lambda t: t.line, reverse=True):  # bottom up: earlier lines keep their numbers
        start, end = _document(lines, topic.line - 1)
        drop = [i for i in range(start, end) if _STATE.match(lines[i]) or _GUARD.match(lines[i])]
        new = [line + "\n" for line in guard_lines(idle_for_ms, topic.evidence)]
        lines[topic.line : topic.line] = new
        for i in reversed(drop):
            del lines[i + (len(new) if i >= topic.line else 0)]
    return "".join(lines)


def _document(lines: list[str], index: int) -> tuple[int, int]:
    """[start, end) of the YAML document holding line `index`."""
    start = index
    while start > 0 and not lines[start - 1].startswith("---"):
        start -= 1
    end = index + 1
    while end < len(lines) and not lines[end].startswith("---"):
        end += 1
    return start, end


def undeclared_file(cluster: str, topics: list[Undeclared], idle_for_ms: int, now_ms: int) -> str:
    """A file of Topic documents for the undeclared idle topics, as they are, absent and guarded."""
    head = (
        f"# Proposed by reconcile idle at {stamp(now_ms)}: topics on {cluster} that no manifest declared,\n"
        f"# idle for {format_duration_ms(idle_for_ms)} or more. Each is deleted only if still idle when applied.\n"
    )
    documents = []
    for topic in sorted(topics, key=lambda t: t.evidence.topic):
        name = topic.evidence.topic
        documents.append(
            "\n".join(
                [
                    "kind: Topic",
                    f"name: {name if _PLAIN.match(name) else _quoted(name)}",
                    f"clusters: [{cluster if _PLAIN.match(cluster) else _quoted(cluster)}]",
                    f"partitions: {topic.partitions}",
                    f"replication_factor: {topic.replication_factor}",
                    *guard_lines(idle_for_ms, topic.evidence),
                ]
            )
            + "\n"
        )
    return head + "---\n".join(documents)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
