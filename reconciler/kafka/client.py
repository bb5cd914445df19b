"""Sending protocol requests: kafka-python's connection manager, driven from our coroutines.

Everything runs as coroutines on kafka-python's I/O thread (`Client.run`). Requests to different
brokers are in flight together; each broker gets at most `IN_FLIGHT` at a time, because a
connection with too many requests outstanding refuses new ones instead of queueing them.
Protocol versions are negotiated per connection from the broker's ApiVersions answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import kafka.errors as Errors
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.protocol.metadata import ApiVersionsRequest

from reconciler.errors import ClusterError

T = TypeVar("T")

IN_FLIGHT = 8
NOT_READY_WAIT_S, NOT_READY_POLL_S = 10.0, 0.05
# Failures after which the request may or may not have reached the broker, but no answer came.
# CorrelationIdError: answers arrived out of step, so the connection was dropped with its
# requests unanswered.
_UNANSWERED = (
    Errors.KafkaConnectionError,
    Errors.KafkaTimeoutError,
    Errors.RequestTimedOutError,
    Errors.Cancelled,
    Errors.UnknownBrokerIdError,
    Errors.CorrelationIdError,
    OSError,
)
# Bounded retries of a request that got no answer (connection lost, broker restarting).
SEND_ATTEMPTS = 3
# The longest wait between two rounds of a retry, unless the broker asks for longer (throttling).
MAX_BACKOFF_S = 2.0

# kafka-python logs connection trouble at ERROR level; the reconciler reports it as its own
# errors instead, so without logging configured the user sees one message, not a log storm.
logging.getLogger("kafka").addHandler(logging.NullHandler())


class NoAnswer(Exception):
    """A request that got no answer: not sent, connection lost, or timed out on the client."""

    def __init__(self, node: int | str, request: Any, cause: BaseException):
        super().__init__(f"no answer from broker {node} to {type(request).__name__}: {describe_error(cause)}")
        self.node = node
        self.cause = cause


def describe_error(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.replace("KafkaConnectionError: ", "")


class Client:
    def __init__(
        self,
        net: NetworkSelector,
        manager: KafkaConnectionManager,
        name: str,
        request_timeout_s: float,
        retry_backoff_s: float = 0.1,
    ):
        self._net = net
        self._manager = manager
        self.name = name
        self.request_timeout_s = request_timeout_s
        self.retry_backoff_s = retry_backoff_s
        self._api_versions: dict[int, dict[int, tuple[int, int]]] = {}

    @classmethod
    def start(cls, config: dict, name: str, request_timeout_s: float, retry_backoff_s: float = 0.1) -> Client:
        net = NetworkSelector(**config)
        manager = KafkaConnectionManager(net, **config)
        net.start()
        return cls(net, manager, name, request_timeout_s, retry_backoff_s)

    def rounds(self, limit: int | None = None, *, within_s: float | None = None) -> Rounds:
        """At most `limit` rounds of a retry, or as many as fit in `within_s` seconds."""
        return Rounds(self, limit, None if within_s is None else time.monotonic() + within_s)

    def close(self) -> None:
        try:
            self._manager.close()
        finally:
            self._net.close()  # stops the I/O thread, then closes its wakeup sockets and selector

    @property
    def manager(self) -> KafkaConnectionManager:
        return self._manager

    # -- running coroutines ------------------------------------------------------------------

    def run(self, coroutine_fn: Callable[..., Awaitable[T]], *args: object) -> T:
        """Run on the I/O thread and wait. Client-library failures become ClusterError."""
        try:
            return self._manager.run(coroutine_fn, *args)
        except ClusterError:
            raise
        except NoAnswer as e:
            raise ClusterError(
                f"{self.name}: {e}. Check that the brokers are up and reachable, then run again.", retriable=True
            ) from e
        except Errors.KafkaError as e:
            raise ClusterError(
                f"{self.name}: the Kafka client failed: {describe_error(e)}. Run again; if it persists, check the brokers' logs.",
                retriable=bool(e.retriable),
            ) from e

    async def sleep(self, seconds: float) -> None:
        if seconds > 0:
            await self._net.sleep(seconds)

    async def gather(self, awaitables: Iterable[Awaitable]) -> list:
        """Run coroutines concurrently; results in order. The first failure is raised after all
        have finished, so nothing is left running against a closed connection."""
        futures = [self._manager.call_soon(a) for a in awaitables]
        results, failure = [], None
        for future in futures:
            try:
                results.append(await future)
            except BaseException as e:  # noqa: BLE001 - re-raised below
                failure = failure or e
                results.append(None)
        if failure is not None:
            raise failure
        return results

    # -- sending -----------------------------------------------------------------------------

    async def send(self, node: int, request: object) -> Any:
        """One attempt; raises NoAnswer when no response arrives."""
        waited = 0.0
        while True:
            try:
                return await self._manager.send(request, node_id=node)
            except Errors.NodeNotReadyError as e:
                # Not sent at all: the connection is paused (the broker throttled us, or it is
                # full) or waits out a reconnect backoff. Waiting is safe for any request.
                if waited >= min(self.request_timeout_s, NOT_READY_WAIT_S):
                    raise NoAnswer(node, request, e) from e
                await self.sleep(NOT_READY_POLL_S)
                waited += NOT_READY_POLL_S
            except Errors.IncompatibleBrokerVersion as e:
                raise ClusterError(
                    f"{self.name}: broker {node} does not support {type(request).__name__} in a "
                    f"version this tool speaks ({e}). The reconciler needs Apache Kafka 3.0 or "
                    "later."
                ) from e
            except _UNANSWERED as e:
                raise NoAnswer(node, request, e) from e

    async def request(self, request: object, nodes: Sequence[int], attempts: int = SEND_ATTEMPTS) -> Any:
        """Send to nodes[0], trying the next node (round robin) after each unanswered attempt.
        Only for requests that are safe to send twice."""
        last: NoAnswer | None = None
        async for attempt in self.rounds(attempts):
            try:
                return await self.send(nodes[attempt % len(nodes)], request)
            except NoAnswer as e:
                last = e
        assert last is not None
        raise last

    async def request_each(self, requests: Sequence[tuple[int, Any]], attempts: int = 1) -> list:
        """Send every (node, request) with requests to different brokers in flight together.
        Returns responses in order, a NoAnswer in place of each unanswered one."""
        by_node: dict[int, list[int]] = {}
        for index, (node, _) in enumerate(requests):
            by_node.setdefault(node, []).append(index)
        results: list = [None] * len(requests)

        async def one_broker(node: int, indexes: list[int]) -> None:
            for start in range(0, len(indexes), IN_FLIGHT):
                window = indexes[start : start + IN_FLIGHT]
                answers = await self.gather(self._answer_or_error(requests[i][1], [node], attempts) for i in window)
                for i, answer in zip(window, answers):
                    results[i] = answer

        await self.gather(one_broker(node, indexes) for node, indexes in by_node.items())
        return results

    async def _answer_or_error(self, request: object, nodes: Sequence[int], attempts: int) -> Any:
        try:
            return await self.request(request, nodes, attempts)
        except NoAnswer as e:
            return e

    # -- brokers -----------------------------------------------------------------------------

    async def know_brokers(self, node_ids: Iterable[int]) -> None:
        """Make sure the connection manager has addresses for these brokers (a broker that joined
        since the last refresh is otherwise unknown to it)."""
        known = {b.node_id for b in self._manager.cluster.brokers()}
        if not set(node_ids) <= known:
            await self._manager.cluster.refresh_metadata()

    async def api_versions(self, node: int) -> dict[int, tuple[int, int]]:
        """The broker's ApiVersions answer (api key -> (min, max)), asked once per broker."""
        if node not in self._api_versions:
            response = await self.request(
                ApiVersionsRequest(client_software_name="kafka-reconciler", client_software_version="0.1.0"), [node]
            )
            if response.error_code:
                raise ClusterError(f"{self.name}: broker {node} answered ApiVersions with error {response.error_code}")
            self._api_versions[node] = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        return self._api_versions[node]


class Rounds:
    """The rounds of a bounded retry: `async for round_ in client.rounds(limit): ...` (break when
    nothing is left to do). Before each round but the first it waits the client's backoff,
    doubled each round and capped at MAX_BACKOFF_S, or longer when the last round's answers
    asked for a throttle time (`throttle`). With a deadline instead of a limit, the rounds end
    at it, the last wait cut short to end there, so one round runs at the deadline."""

    def __init__(self, client: Client, limit: int | None, deadline: float | None):
        if limit is None and deadline is None:
            raise ValueError("a retry needs a limit or a deadline")
        self._client = client
        self._limit = limit
        self._deadline = deadline
        self._round = -1
        self._throttle_s = 0.0

    def throttle(self, answers: Iterable[Any]) -> None:
        """Wait at least as long as any of these answers' throttle_time_ms before the next round."""
        self._throttle_s = max((getattr(a, "throttle_time_ms", 0) or 0 for a in answers), default=0) / 1000

    def wait_s(self, round_: int) -> float:
        """Seconds to wait before round `round_` (none before the first)."""
        if round_ == 0:
            return 0.0
        return max(min(self._client.retry_backoff_s * (2**round_), MAX_BACKOFF_S), self._throttle_s)

    def __aiter__(self) -> Rounds:
        return self

    async def __anext__(self) -> int:
        round_ = self._round + 1
        if self._limit is not None and round_ >= self._limit:
            raise StopAsyncIteration
        wait_s = self.wait_s(round_)
        if self._deadline is not None and round_:
            left_s = self._deadline - time.monotonic()
            if left_s <= 0:
                raise StopAsyncIteration
            wait_s = min(wait_s, left_s)
        self._round, self._throttle_s = round_, 0.0
        await self._client.sleep(wait_s)
        return round_
