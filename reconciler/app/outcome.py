"""What a command's run came to. The CLI maps each kind to one exit code (`cli.EXIT_CODES`)."""

from __future__ import annotations

from enum import Enum


class Outcome(Enum):
    DONE = "done"  # nothing to change, or everything asked for was done
    CHANGES = "changes"  # plan: the cluster differs from the manifests
    DRIFT = "drift"  # drift: the cluster moved away from Git
    FAILED = "failed"  # errors in the plan, an apply that did not succeed, or any error
