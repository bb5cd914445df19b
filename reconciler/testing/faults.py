"""Fault switches (injected errors, slow and lost answers) and the request log."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.data_container import DataContainer
from kafka.protocol.schemas.fields.struct import StructField

from .protocol import api_name

# Fields that Kafka sets to "unknown" whenever the same struct carries an error, so an
# injected error looks like a real one (e.g. DeleteRecords reports low watermark -1).
_UNKNOWN_ON_ERROR = {"low_watermark": -1, "offset": -1, "timestamp": -1, "end_offset": -1, "leader_epoch": -1, "base_offset": -1}


@dataclass
class _Rule:
    kind: str  # "error" | "delay" | "drop"
    api_key: int
    broker: int | None
    remaining: int | None  # None = until cleared
    error_code: int = 0
    throttle_time_ms: int = 0
    apply: bool = False
    seconds: float = 0.0
    # None: any request; True/False: only requests whose validate_only flag is that (admin writes).
    validate_only: bool | None = None

    def matches(self, api_key: int, broker_id: int, validate_only: bool | None) -> bool:
        return self.api_key == api_key and self.broker in (None, broker_id) and self.validate_only in (None, validate_only)


@dataclass
class FaultPlan:
    """What to do to one request: each kind is taken from the first matching rule."""

    error: _Rule | None = None
    delay: _Rule | None = None
    drop: _Rule | None = None

    @property
    def apply(self) -> bool:
        """Whether the operation takes effect (an injected error suppresses it unless apply=True;
        a dropped answer is lost after the operation happened unless apply=False)."""
        if self.error is not None and self.error.error_code and not self.error.apply:
            return False
        return self.drop is None or self.drop.apply


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[_Rule] = []

    def add(self, rule: _Rule) -> None:
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def take(self, api_key: int, broker_id: int, validate_only: bool | None = None) -> FaultPlan:
        plan = FaultPlan()
        with self._lock:
            for rule in list(self._rules):
                if getattr(plan, rule.kind) is not None or not rule.matches(api_key, broker_id, validate_only):
                    continue
                setattr(plan, rule.kind, rule)
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._rules.remove(rule)
        return plan


def error_rule(
    api_key: int,
    error_code: int,
    times: int | None,
    broker: int | None,
    throttle_time_ms: int,
    apply: bool,
    validate_only: bool | None = None,
) -> _Rule:
    return _Rule(
        "error",
        api_key,
        broker,
        times,
        error_code=error_code,
        throttle_time_ms=throttle_time_ms,
        apply=apply,
        validate_only=validate_only,
    )


def delay_rule(api_key: int, seconds: float, times: int | None, broker: int | None) -> _Rule:
    return _Rule("delay", api_key, broker, times, seconds=seconds)


def drop_rule(api_key: int, times: int | None, broker: int | None, apply: bool) -> _Rule:
    return _Rule("drop", api_key, broker, times, apply=apply)


def inject_error(response: ApiMessage, error_code: int) -> None:
    """Set every error code in the response (top level, topics, partitions, resources)."""
    _inject(response, response._struct, error_code, response.version)


def _inject(item: DataContainer, struct: StructField, error_code: int, version: int) -> None:
    for f in struct._fields:
        if not f.for_version_q(version):
            continue
        if f.name == "error_code":
            item.error_code = error_code
        elif f.name in _UNKNOWN_ON_ERROR:
            setattr(item, f.name, _UNKNOWN_ON_ERROR[f.name])
        elif f.is_struct_array():
            for sub in getattr(item, f.name) or ():
                _inject(sub, f, error_code, version)
        elif f.is_struct() and getattr(item, f.name) is not None:
            _inject(getattr(item, f.name), f, error_code, version)


@dataclass(frozen=True)
class RequestRecord:
    api_key: int
    api_name: str
    version: int
    broker_id: int
    correlation_id: int
    client_id: str | None
    time: float
    # The decoded request, so tests can assert on what was sent (e.g. DeleteRecords offsets).
    request: ApiMessage | None = field(default=None, compare=False, repr=False)


class RequestLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []

    def add(
        self,
        api_key: int,
        version: int,
        broker_id: int,
        correlation_id: int,
        client_id: str | None,
        request: ApiMessage | None = None,
    ) -> None:
        record = RequestRecord(api_key, api_name(api_key), version, broker_id, correlation_id, client_id, time.time(), request)
        with self._lock:
            self._records.append(record)

    def snapshot(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
