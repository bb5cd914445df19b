"""A snapshot file's content read by someone else, under that reader's name for the file."""

from __future__ import annotations

import io
from pathlib import Path


class SnapshotBytes(io.BytesIO):
    """A snapshot file's content as another reader read it (Spark, through Hadoop's FileSystem:
    HDFS, s3a://, viewfs://), under the name that reader gives the file, which every message shows."""

    def __init__(self, content: bytes, name: str):
        super().__init__(content)
        self.name = name

    def __str__(self) -> str:
        return self.name


Snapshot = str | Path | SnapshotBytes
