"""The wire format, entirely through kafka-python's generated protocol classes: which API keys
and versions this broker speaks, how a request frame is decoded and a response encoded.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping

# Importing these packages registers every ApiMessage subclass kafka-python generates.
import kafka.protocol.admin
import kafka.protocol.consumer
import kafka.protocol.metadata
import kafka.protocol.producer
import kafka.protocol.sasl  # noqa: F401
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS
from kafka.protocol.schemas import BaseField

API_VERSIONS_KEY = 18
# Kafka's Uuid.ZERO_UUID: "no topic id".
ZERO_UUID = uuid.UUID(int=0)


def _message_classes() -> dict[tuple[int, str], type[ApiMessage]]:
    found, todo = {}, list(ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls._class_version is None:  # the primary class, not a Foo_vN wrapper
            found[(cls.API_KEY, cls.type)] = cls
    return found


_CLASSES = _message_classes()

# The ApiVersions a real Apache Kafka 4.0 broker returns, as kafka-python recorded it.
KAFKA_4_0_API_VERSIONS: dict[int, tuple[int, int]] = BROKER_API_VERSIONS[(4, 0)]


def request_class(api_key: int) -> type[ApiMessage]:
    return _CLASSES[(api_key, "request")]


def response_class(api_key: int) -> type[ApiMessage]:
    return _CLASSES[(api_key, "response")]


def api_name(api_key: int) -> str:
    cls = _CLASSES.get((api_key, "request"))
    return cls.name[: -len("Request")] if cls is not None else f"Api{api_key}"


def advertised_versions(api_keys: Iterable[int], caps: Mapping[int, int] | None = None) -> dict[int, tuple[int, int]]:
    """What ApiVersions reports for the APIs this broker implements: Kafka 4.0's ranges, each
    capped at `caps[key]` where given (a broker of an older Kafka)."""
    return {
        k: (low, min(high, (caps or {}).get(k, high)))
        for k in sorted(api_keys)
        if k in KAFKA_4_0_API_VERSIONS
        for low, high in (KAFKA_4_0_API_VERSIONS[k],)
    }


def accepted_versions(api_key: int, caps: Mapping[int, int] | None = None) -> tuple[int, int]:
    """Versions a Kafka 4.0 broker actually parses (capped as in `advertised_versions`). Kafka 4.0
    removed old versions (KIP-896) but still advertises Produce v0 for the sake of old librdkafka;
    the schema's validVersions keeps the real floor, which kafka-python otherwise hides."""
    low, high = KAFKA_4_0_API_VERSIONS[api_key]
    schema_low, _ = BaseField.parse_versions(request_class(api_key).json["validVersions"])
    return max(low, schema_low), min(high, (caps or {}).get(api_key, high))


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id): the fixed prefix of every request header."""
    return struct.unpack_from(">hhi", frame, 0)


def decode_request(frame: bytes, api_key: int, version: int) -> ApiMessage:
    """The request object; its `.header` holds client id and correlation id."""
    return request_class(api_key).decode(frame, version=version, header=True)


def new_response(api_key: int, version: int, **fields: object) -> ApiMessage:
    return response_class(api_key)(version=version, **fields)


def encode_response(response: ApiMessage, correlation_id: int) -> bytes:
    """Size-prefixed response; the response class picks header v0 or v1 (ApiVersions is always v0)."""
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True, framed=True))
