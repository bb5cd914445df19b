"""The fleet directory both drift engines read: `<fleet>/<cluster>/<run>.parquet`, `<run>` the
snapshot's time as `YYYYMMDDTHHMMSSZ` (JSON snapshots anywhere under it are read too, named by
their content). Each cluster's latest snapshot is the one reported on, the one before it the
earlier state for data-loss signals.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from reconciler.errors import SnapshotError
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_parquet import count_partitions_parquet, utc, write_snapshot_parquet
from reconciler.models.observed import ObservedState

RUN_FORMAT = "%Y%m%dT%H%M%SZ"
JSON_BYTES_PER_PARTITION = 400  # a JSON snapshot's size per partition, roughly (example snapshots)


@dataclass(frozen=True)
class SnapshotFile:
    path: Path
    cluster: str
    run: datetime


def run_name(taken_at: datetime | None) -> str:
    return utc(taken_at or datetime.now(timezone.utc)).strftime(RUN_FORMAT)


def write_fleet_snapshot(state: ObservedState, fleet_dir: str | Path) -> Path:
    """Write one snapshot as `<fleet_dir>/<cluster>/<run>.parquet`; returns the file's path."""
    if state.taken_at is None:
        state = state.model_copy(update={"taken_at": datetime.now(timezone.utc)})
    path = Path(fleet_dir) / state.cluster / f"{run_name(state.taken_at)}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_snapshot_parquet(state, path)
    return path


def count_partitions(path: str | Path) -> int:
    """Partitions in a snapshot file without loading it: from the Parquet footer, or estimated
    from a JSON file's size."""
    if str(path).endswith(".parquet"):
        return count_partitions_parquet(path)
    return Path(path).stat().st_size // JSON_BYTES_PER_PARTITION


def discover_fleet(fleet: str | Path) -> dict[str, list[SnapshotFile]]:
    """Every cluster's snapshots under `fleet` (Parquet files and JSON snapshots), oldest first.

    A JSON snapshot is read for its cluster name and time; a Parquet file is named by the layout
    `<cluster>/<run>.parquet` and its header.
    """
    root = Path(fleet)
    if not root.is_dir():
        raise SnapshotError(
            f"{fleet} is not a directory of snapshots; write one with `reconcile snapshot --format parquet -o DIR` per cluster."
        )
    found: dict[str, list[SnapshotFile]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix == ".parquet" and path.is_file():
            cluster, run = path.parent.name, parse_run(path.stem, path)
        elif path.suffix == ".json" and path.is_file():
            state = load_snapshot(path)  # checked like any snapshot
            cluster = state.cluster
            run = utc(state.taken_at) if state.taken_at else datetime.fromtimestamp(0, timezone.utc)
        else:
            continue
        found.setdefault(cluster, []).append(SnapshotFile(path, cluster, run))
    if not found:
        raise SnapshotError(f"{fleet} holds no snapshots (*.parquet or *.json).")
    for runs in found.values():
        runs.sort(key=lambda s: (s.run, str(s.path)))
    return dict(sorted(found.items()))


def parse_run(stem: str, path: object) -> datetime:
    """The run time a Parquet snapshot's name `stem` gives (`path`: the file, as messages name it)."""
    try:
        return datetime.strptime(stem, RUN_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError as e:
        raise SnapshotError(f"{path}: a fleet's Parquet snapshots are named <cluster>/<YYYYMMDDTHHMMSSZ>.parquet") from e
