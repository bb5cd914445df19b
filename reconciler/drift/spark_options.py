"""The Spark engine's settings as the command line gives them (no pyspark here: the CLI and the
engine choice read them without starting Spark)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

EXECUTOR_WAIT_S = 180.0  # a Spark job that has no executor at all gives up after this long


@dataclass(frozen=True)
class SparkOptions:
    """The Spark engine's settings: `conf`, any Spark setting (as spark-submit's --conf); `log_level`,
    Spark's own log shown at that level (None: none on success); `executor_wait_s`, how long a job
    waits for the cluster to grant a first executor."""

    conf: Mapping[str, str] = field(default_factory=dict)
    log_level: str | None = None
    executor_wait_s: float = EXECUTOR_WAIT_S

    @property
    def given(self) -> bool:
        return bool(self.conf) or self.log_level is not None
