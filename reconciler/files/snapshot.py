"""The one snapshot reader every command uses, whichever format the file is in.

`load_snapshot(path)` reads a JSON snapshot (`reconcile snapshot -o FILE`) or a Parquet one
(`--format parquet`), told apart by their content (Parquet files start with the magic bytes
`PAR1`), not by their names. Parquet needs pyarrow (`pip install 'kafka-reconciler[spark]'`) and
imports it only then. Both are checked by the same rules (`snapshot_problems`); files that are
not JSON at all (not UTF-8, empty, nested thousands deep, numbers of thousands of digits, a top
level that is not an object) get a one-paragraph error naming the file, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO

from reconciler.errors import SnapshotError
from reconciler.files.snapshot_bytes import Snapshot, SnapshotBytes
from reconciler.files.snapshot_json import read_snapshot_json
from reconciler.models.observed import ObservedState

if TYPE_CHECKING:
    from reconciler.files.snapshot_columns import SnapshotColumns

PARQUET_MAGIC = b"PAR1"


def load_snapshot(path: Snapshot) -> ObservedState:
    """The snapshot in `path`, JSON or Parquet, checked; SnapshotError naming the file otherwise."""
    with _opened(path) as file:
        if file.read(4) != PARQUET_MAGIC:
            file.seek(0)
            return read_snapshot_json(file, str(path))
    from reconciler.files.snapshot_parquet import read_snapshot_parquet

    return read_snapshot_parquet(path)


def load_snapshot_columns(path: Snapshot) -> SnapshotColumns | None:
    """The snapshot in `path` as columns when it is a Parquet file proven good that way
    (`reconciler.files.snapshot_columns`); None otherwise: `load_snapshot` reads and checks it."""
    with _opened(path) as file:
        if file.read(4) != PARQUET_MAGIC:
            return None
    from reconciler.files.snapshot_columns import read_columns

    return read_columns(path)


@contextmanager
def _opened(path: Snapshot) -> Iterator[BinaryIO]:
    if isinstance(path, SnapshotBytes):
        path.seek(0)
        yield path
        path.seek(0)  # for the reader that follows
        return
    try:
        with open(path, "rb") as f:
            yield f
    except IsADirectoryError as e:
        raise SnapshotError(
            f"{path} is a directory, not a snapshot file; give a file written by "
            "`reconcile snapshot` (a fleet directory goes to `drift --fleet`)."
        ) from e
    except OSError as e:
        raise SnapshotError(
            f"cannot read snapshot {path}: {e.strerror}. Check the path, or take a "
            "snapshot with `reconcile snapshot --cluster NAME -o FILE`."
        ) from e
