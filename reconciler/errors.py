"""The reconciler's own error hierarchy.

Every error a user can meet carries a one-paragraph message that names the file, line, topic or
partition concerned and says what to do. Client-library exceptions are chained as causes, never
shown raw.
"""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError


class ReconcilerError(Exception):
    """Base class: its message is what the user sees."""


@dataclass(frozen=True)
class ManifestProblem:
    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class ManifestError(ReconcilerError):
    """One or more problems in the manifests, all reported at once."""

    def __init__(self, problems: list[ManifestProblem]):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column, p.message))
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in the manifests:"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


class SnapshotError(ReconcilerError):
    """A snapshot or saved plan file that cannot be read."""


class ClusterError(ReconcilerError):
    """The cluster could not be read or written."""

    def __init__(self, message: str, retriable: bool = False):
        super().__init__(message)
        self.retriable = retriable


class PlanRejected(ReconcilerError):
    """A plan that must not be applied (errors in it, or the cluster moved away from it)."""


def summarize_validation_error(error: ValidationError, limit: int = 3) -> str:
    """A pydantic error in one line: the first few problems with their JSON paths."""
    parts = [f"{'.'.join(str(x) for x in e['loc']) or '(top level)'}: {e['msg']}" for e in error.errors()[:limit]]
    more = error.error_count() - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
