"""The problems found while loading manifests, collected so that all of them are reported at once,
each once, and the rules for what a message may show (no secret, "did you mean" within a budget).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reconciler.errors import ManifestProblem, shown
from reconciler.manifests.yaml_source import Path_, YamlDocument
from reconciler.models.desired import ClientSecurity, SourceRef

SECRET_FIELDS = ("password", "ssl_password", "oauth_client_secret", "oauth_token")
# Every other key under `security` (a misspelt `pasword` too) may hold a secret: no message shows its value.
_NOT_SECRET = frozenset(ClientSecurity.model_fields) - set(SECRET_FIELDS)


def is_secret(path: Path_) -> bool:
    """Whether a value at `path` in a document may be a secret, never to be shown."""
    return bool(path) and path[0] == "security" and not (len(path) > 1 and path[1] in _NOT_SECRET)


def contains_secret(doc: YamlDocument, value: Any) -> bool:
    """Whether a value a message would show holds the text of one of the document's secrets (an
    anchor used both as a secret and elsewhere)."""
    if not doc.secret_texts:
        return False
    text = value if isinstance(value, str) else repr(value)
    return any(secret in text for secret in doc.secret_texts)


@dataclass
class Problems:
    found: list[ManifestProblem] = field(default_factory=list)
    seen: set[ManifestProblem] = field(default_factory=set)
    # Per file, the places of keys and values refused while reading the YAML: what the checks after
    # that find at the same place is about the same mistake, and not reported again.
    refused_at: dict[str, set[tuple[int, int]]] = field(default_factory=dict)
    # "Did you mean" compares a name with every choice; past this many comparisons in all, with
    # thousands of names misspelt against thousands of choices, it is left out.
    suggestions_left: int = 2_000_000

    def add(self, ref: SourceRef, message: str) -> None:
        self.add_problem(ManifestProblem(ref.file, ref.line, ref.column, message))

    def add_problem(self, problem: ManifestProblem) -> None:
        if problem in self.seen:
            return
        refused = self.refused_at.get(problem.file)
        if refused and (problem.line, problem.column) in refused:
            return
        self.seen.add(problem)
        self.found.append(problem)

    def did_you_mean(self, word: str, choices: Iterable[str]) -> str:
        """` (did you mean 'x'?)` for the closest choice, or nothing."""
        choices = list(choices)
        if len(choices) > self.suggestions_left:
            return ""
        self.suggestions_left -= len(choices)
        if len(word) > 100:
            return ""  # no name is that long
        close = difflib.get_close_matches(word, choices, n=1)
        return f" (did you mean {shown(close[0])}?)" if close else ""
