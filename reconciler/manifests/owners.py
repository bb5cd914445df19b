"""Team documents -> the Team models, and the owner of each topic (docs/teams.md).

A topic's owner is, first found: its own `owner`, its template's `owner`, the one Team whose
`topics` rules (a name prefix, a regex searched in the name) claim it; or nobody. Two teams whose
rules claim one topic is an error naming both rules, and so is an `owner` no Team defines. The
owner is the topic's on every cluster: it comes from the topic's name and documents, never from
an override.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reconciler.errors import shown, shown_text
from reconciler.manifests.documents import TeamDoc, TopicDoc, TopicTemplateDoc
from reconciler.manifests.problems import Problems
from reconciler.manifests.validate import Entry, valid_regexes
from reconciler.models.desired import SourceRef, Team, TeamBudget
from reconciler.units import parse_bytes, parse_duration_ms


@dataclass(frozen=True)
class _Rule:
    team: str
    where: SourceRef
    prefix: str | None = None
    pattern: re.Pattern[str] | None = None

    def claims(self, topic: str) -> bool:
        return topic.startswith(self.prefix) if self.prefix is not None else bool(self.pattern and self.pattern.search(topic))


class Owners:
    """Every Team, and who owns which topic."""

    def __init__(self, entries: list[Entry[TeamDoc]], problems: Problems):
        self.problems = problems
        self.teams: dict[str, Team] = {}
        self._where: dict[str, SourceRef] = {}
        self._prefixes: dict[str, list[_Rule]] = {}  # prefix -> its rules (one per team naming it)
        self._patterns: list[_Rule] = []
        for entry in entries:
            self._add(entry)
        self._prefix_lengths = sorted({len(p) for p in self._prefixes})
        # One search tells most topics that no pattern claims them (10,000 topics against every
        # pattern one by one would cost more than planning them).
        self._any_pattern = _any_of([r.pattern for r in self._patterns if r.pattern is not None])

    def _add(self, entry: Entry[TeamDoc]) -> None:
        doc, model = entry.doc, entry.model
        if model.name in self._where:
            self.problems.add(
                doc.ref(("name",)), f"duplicate team {shown(model.name)} (also defined at {self._where[model.name]})"
            )
            return
        self._where[model.name] = doc.ref(("name",))
        for i, prefix in enumerate(model.topics.prefixes):
            rule = _Rule(model.name, doc.ref(("topics", "prefixes", i)), prefix=prefix)
            self._prefixes.setdefault(prefix, []).append(rule)
        patterns = valid_regexes(doc, ("topics", "patterns"), model.topics.patterns, self.problems)
        for i, pattern in enumerate(model.topics.patterns):
            if pattern in patterns:
                self._patterns.append(_Rule(model.name, doc.ref(("topics", "patterns", i)), pattern=re.compile(pattern)))
        if entry.is_refused(("review",)):
            return  # reported; the team is still known, so its topics' `owner` is not reported too
        budget = model.budget
        given = budget.model_fields_set
        self.teams[model.name] = Team(
            name=model.name,
            review=model.review,
            budget=TeamBudget(
                max_topics=budget.max_topics,
                max_partitions=budget.max_partitions,
                max_retention_ms=_number(budget.max_retention, parse_duration_ms),
                max_disk_bytes=_number(budget.max_disk, parse_bytes),
                name_prefix=budget.name_prefix,
                sources={name: doc.ref(("budget", name)) for name in given},
            ),
            source=doc.ref(("name",)),
        )

    def owner_of(self, topic: Entry[TopicDoc], template: Entry[TopicTemplateDoc] | None) -> str | None:
        """The topic's owner, each problem reported (an unknown owner, two teams claiming it)."""
        for entry in (topic, template):
            if entry is not None and entry.model.owner is not None:
                return self._known(entry, entry.model.owner)
        if not self._where:
            return None
        name = topic.model.name
        claims = self._claims(name)
        teams = list(dict.fromkeys(r.team for r in claims))
        if len(teams) > 1:
            first, second = (next(r for r in claims if r.team == t) for t in teams[:2])
            self.problems.add(
                topic.doc.ref(("name",)),
                f"topic {shown_text(name)} is claimed by team {shown_text(first.team)} (at {first.where}) and by team "
                f"{shown_text(second.team)} (at {second.where}); a topic has one owner: narrow one of the rules, or set "
                "`owner:` on the topic",
            )
        return teams[0] if teams else None  # the first of two only spares a "has no owner": the load fails

    def by_rules(self, name: str) -> str | None:
        """The one team whose rules claim a topic of this name, or None (none, or more than one:
        the manifests then refuse it where it is declared). For `reconcile import`."""
        teams = {r.team for r in self._claims(name)}
        return teams.pop() if len(teams) == 1 else None

    def _claims(self, name: str) -> list[_Rule]:
        claims = [r for n in self._prefix_lengths for r in self._prefixes.get(name[:n], ())]
        if self._any_pattern is not None and self._any_pattern.search(name):
            claims += [r for r in self._patterns if r.claims(name)]
        return claims

    def _known(self, entry: Entry[TopicDoc] | Entry[TopicTemplateDoc], owner: str) -> str:
        """`owner`, reported when no Team defines it (kept: a "has no owner" would say it again)."""
        if owner in self._where:
            return owner
        self.problems.add(
            entry.doc.ref(("owner",)),
            f"unknown owner {shown(owner)}: no `kind: Team` document defines it"
            + (self.problems.did_you_mean(owner, self._where) or f" (teams: {', '.join(sorted(self._where)) or 'none'})"),
        )
        return owner


def _number(value: int | str | None, parse: Callable[[str], int]) -> int | None:
    return value if value is None or isinstance(value, int) else parse(value)


_NUMBERED_GROUP_REFERENCE = re.compile(r"\\[1-9]|\(\?\(\d")


def _any_of(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One regex that matches where any of `patterns` does (where they cannot be joined, one that
    matches everywhere: each is then searched on its own), or None when there are none."""
    if not patterns:
        return None
    if any(_NUMBERED_GROUP_REFERENCE.search(p.pattern) for p in patterns):
        return re.compile("")  # joined, `\1` or `(?(1)...)` would name another pattern's group
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
    except re.error:  # a group name repeated across patterns
        return re.compile("")
