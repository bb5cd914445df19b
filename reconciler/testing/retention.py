"""Kafka's periodic retention check, for a TestCluster started with retention_checks=True: each
live broker runs it log.initial.task.delay.ms after it starts (default 30 s), then every
log.retention.check.interval.ms (default 5 min), over the replicas it holds. Both are static
broker configs, read when the cluster starts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from .log import now_ms
from .state import ClusterState


class RetentionChecks:
    def __init__(self, state: ClusterState):
        self._state = state
        self._initial = int(state.setting("log.initial.task.delay.ms")) / 1000
        self._interval = int(state.setting("log.retention.check.interval.ms")) / 1000
        self._due: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self.broker_started(broker_id)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="retention-checks", daemon=True)
        self._thread.start()

    def broker_started(self, broker_id: int) -> None:
        """A (re)started broker's schedule begins again, as a restarted Kafka broker's does."""
        self._due[broker_id] = time.monotonic() + self._initial

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            for broker_id, due in list(self._due.items()):
                if due <= now:
                    self._due[broker_id] = due + self._interval
                    with self._state.lock:
                        if self._state.alive(broker_id):
                            self._state.enforce_retention(now_ms(), {broker_id})
            next_due = min(self._due.values(), default=now + 1)
            self._stop.wait(max(0.0, min(next_due - time.monotonic(), 1.0)))
