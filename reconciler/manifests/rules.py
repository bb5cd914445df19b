"""Truncation rules: the shared TruncationRule documents, and each topic's rules resolved into the
models the planner reads (reconciler.models.desired).

The document models have already refused what is wrong with one rule on its own (a negative
offset, a time without timezone, `everything: false`, ...). What is left here needs more than one
rule or the topic: a reference to a shared rule, a partition the topic does not have, and rules
that conflict (`everything` beside any other rule, or one kind of rule twice on one topic: which
of two offsets or times was meant is not for the tool to guess).
"""

from __future__ import annotations

from typing import Any

from reconciler.errors import shown, shown_text
from reconciler.manifests.documents import RULE_KINDS, RuleEntry, TruncationRuleDoc, rfc3339
from reconciler.manifests.problems import Problems
from reconciler.manifests.validate import Entry
from reconciler.manifests.yaml_source import Path_, YamlDocument
from reconciler.models.desired import (
    BeforeOffset,
    BeforeTime,
    ConsumedBy,
    Everything,
    KeepLast,
    SourceRef,
    TruncationRule,
)


def one_kind_needed(given: list[str]) -> str:
    return (
        "a truncation rule needs exactly one of "
        + ", ".join(RULE_KINDS)
        + (f"; this one has {', '.join(given)}" if given else "")
    )


class Rules:
    def __init__(self, shared: dict[str, Entry[TruncationRuleDoc]], problems: Problems):
        self.shared = shared
        self.problems = problems

    def _usable(self, entry: Entry[TruncationRuleDoc]) -> bool:
        """A shared rule that can be used: one kind, given by itself, none of it refused by the model
        (which reported it where the rule is defined)."""
        rule = entry.model
        return not any(entry.is_refused((kind,)) for kind in RULE_KINDS) and rule.rule is None and len(rule.kinds()) == 1

    def check_shared(self) -> None:
        """Each shared rule on its own, used or not. What depends on the topic (its partitions) is
        checked where the rule is used."""
        for name, entry in self.shared.items():
            doc, rule = entry.doc, entry.model
            if any(entry.is_refused((kind,)) for kind in RULE_KINDS):
                continue  # reported by the model
            if rule.rule is not None:
                self.problems.add(
                    doc.ref(("rule",)),
                    f"truncation rule {shown_text(name)} refers to rule "
                    f"{shown(rule.rule)}; a "
                    "shared rule must give its own before_offset, before_time, ...",
                )
            elif len(rule.kinds()) != 1:
                self.problems.add(doc.ref(), one_kind_needed(rule.kinds()))

    def for_topic(
        self, owner: Entry[Any], path: Path_, entries: list[RuleEntry], partitions: int, topic: str
    ) -> list[TruncationRule]:
        """The topic's rules (the `truncate` list at `path` in `owner`), each problem reported."""
        doc = owner.doc
        rules: list[TruncationRule] = []
        kinds: dict[str, SourceRef] = {}
        for i, entry in enumerate(entries):
            where = path + (i,)
            if owner.refused_within(where):
                continue  # reported by the model
            given = entry.kinds()
            if len(given) != 1:
                self.problems.add(doc.ref(where), one_kind_needed(given))
                continue
            rule_doc, rule_path, rule, name = doc, where, entry, None
            if entry.rule is not None:
                shared = self.shared.get(entry.rule)
                if shared is None:
                    self.problems.add(
                        doc.ref(where + ("rule",)),
                        f"unknown truncation rule {shown(entry.rule)}" + self.problems.did_you_mean(entry.rule, self.shared),
                    )
                    continue
                if not self._usable(shared):
                    continue  # reported where the shared rule is defined
                rule_doc, rule_path, rule, name = shared.doc, (), shared.model, entry.rule
            made = self._rule(rule_doc, rule_path, rule, partitions, topic, name)
            if made is None:
                continue
            if made.kind in kinds:
                self.problems.add(
                    doc.ref(where),
                    f"topic {shown_text(topic)} has two {made.kind} rules (the other at {kinds[made.kind]}); keep one",
                )
                continue
            kinds[made.kind] = doc.ref(where)
            rules.append(made)
        if "everything" in kinds and len(kinds) > 1:
            self.problems.add(
                kinds["everything"],
                f"topic {shown_text(topic)}: `everything` deletes all records, so the "
                "other rules beside it conflict with it; keep one",
            )
        return rules

    def _rule(
        self, doc: YamlDocument, path: Path_, rule: RuleEntry, partitions: int, topic: str, name: str | None
    ) -> TruncationRule | None:
        """The rule as a model, or None after reporting why it cannot be one on this topic."""
        kind = rule.kinds()[0]
        source = doc.ref(path)
        if rule.before_offset is not None:
            if isinstance(rule.before_offset, int):
                return BeforeOffset(offset=rule.before_offset, name=name, source=source)
            beyond = [p for p in rule.before_offset if p >= partitions]
            for p in beyond:
                self.problems.add(
                    doc.ref(path + (kind, p), key=True), f"topic {shown_text(topic)} has no partition {p} (it has {partitions})"
                )
            return None if beyond else BeforeOffset(partitions=rule.before_offset, name=name, source=source)
        if rule.before_time is not None:
            when = rfc3339(rule.before_time)
            if isinstance(when, str):  # the model refused it already; kept for the type
                self.problems.add(doc.ref(path + (kind,)), when)
                return None
            return BeforeTime(timestamp=when, name=name, source=source)
        if rule.keep_last is not None:
            return KeepLast(records=rule.keep_last, name=name, source=source)
        if rule.everything is not None:
            return Everything(name=name, source=source)
        assert rule.consumed_by is not None
        return ConsumedBy(groups=rule.consumed_by, name=name, source=source)
