"""Reading and writing observed-state snapshots (JSON files)."""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from reconciler.errors import SnapshotError, summarize_validation_error
from reconciler.models.observed import ObservedState


def load_snapshot(path: str | Path) -> ObservedState:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise SnapshotError(f"cannot read snapshot {path}: {e.strerror}. Check the path, or take a "
                            "snapshot with `reconcile snapshot --cluster NAME -o FILE`.") from e
    try:
        return ObservedState.model_validate(json.loads(text))
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); a snapshot is the "
                            "JSON written by `reconcile snapshot`.") from e
    except ValidationError as e:
        raise SnapshotError(f"{path} is not a valid snapshot: {summarize_validation_error(e)}. Take a new "
                            "one with `reconcile snapshot`.") from e


def save_snapshot(state: ObservedState, path: str | Path) -> None:
    Path(path).write_text(state.to_json(), encoding="utf-8")

