"""What a plan says each action adds to each broker's disk, against what the test cluster's log
directories then hold, over real sockets through the CLI: a raised retention with records
produced over the following days at the rate the plan measured, a replication-factor increase,
and a drained broker. Each test plans, applies, lets the brokers reach the steady state, and
compares per broker the plan's figure with the change in `log_dir_used_bytes` (what
DescribeLogDirs' UsableBytes is taken from)."""

from __future__ import annotations

import time

from reconciler.testing import TestCluster
from tests.apply.test_capacity_helpers import GIB, Repo, observed_ms, used

HOUR = 3_600_000
DAY = 24 * HOUR
SEGMENT_BYTES = 50_000
VALUE_SIZE = 1_000
PER_HOUR = 20  # records per hour per partition: 480 KB a day


def _produce(cluster: TestCluster, start_ms: int, hours: int, partitions: int = 2) -> None:
    for p in range(partitions):
        cluster.produce_many(
            {("events", p): hours * PER_HOUR}, timestamp_ms=start_ms, step_ms=HOUR // PER_HOUR, value_size=VALUE_SIZE
        )


def test_a_raised_retention_adds_what_the_extra_days_at_the_measured_rate_hold(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        c.create_topic(
            "events", partitions=2, replication_factor=2, configs={"retention.ms": str(DAY), "segment.bytes": str(SEGMENT_BYTES)}
        )
        repo = Repo(
            tmp_path,
            c,
            f"kind: Topic\nname: events\npartitions: 2\nreplication_factor: 2\n"
            f"configs: {{retention.ms: 3d, segment.bytes: {SEGMENT_BYTES}}}\n",
        )
        # One day of records before the plan, as a topic at steady state under retention.ms 1d holds.
        now = int(time.time() * 1000)
        _produce(c, now - DAY + HOUR // PER_HOUR, 24)
        code, plan, output = repo.plan()
        assert code == 2, output
        [action] = plan["actions"]
        disk = action["disk"]
        assert disk["method"].startswith("retention 1d -> 3d: records of the last day"), disk
        per_day = 2 * PER_HOUR * 24 * VALUE_SIZE
        assert abs(disk["bytes_per_day"] - per_day) <= per_day * 0.02, disk
        before = used(c)
        assert repo.apply()[0] == 0
        # Three more days at the same rate, then the brokers' retention check at their end.
        end = observed_ms(plan) + 3 * DAY
        _produce(c, observed_ms(plan) + HOUR // PER_HOUR, 72)
        c.enforce_retention(now_ms=end)
        after = used(c)
        for broker, estimate in disk["per_broker"].items():
            grown = after[int(broker)] - before[int(broker)]
            # Segments go whole: the log keeps up to one segment more than the limit's bytes.
            assert abs(grown - estimate) <= 2 * SEGMENT_BYTES, (broker, grown, estimate)
        assert sum(disk["per_broker"].values()) == disk["bytes"] > 0


def test_a_replication_factor_increase_lands_the_partition_size_on_each_new_broker(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        c.create_topic("events", partitions=2, replication_factor=1)
        _produce(c, 1_000, 10)
        repo = Repo(tmp_path, c, "kind: Topic\nname: events\npartitions: 2\nreplication_factor: 3\n")
        before = used(c)
        code, plan, output = repo.plan()
        assert code == 2, output
        [action] = plan["actions"]
        assert action["kind"] == "reassign_replicas"
        assert repo.apply()[0] == 0
        after = used(c)
        figures = {int(b): n for b, n in action["disk"]["per_broker"].items()}
        assert figures == {b: after[b] - before[b] for b in (1, 2, 3) if after[b] != before[b]}
        assert sum(figures.values()) == 2 * 2 * 10 * PER_HOUR * VALUE_SIZE  # two new copies of each partition
        # The table ends the plan: each broker's figures as read, what is added, the share.
        rows = {r["broker"]: r for r in plan["capacity"]}
        assert all(rows[b]["total_bytes"] == GIB and rows[b]["used_bytes"] == before[b] for b in (1, 2, 3))
        assert {b: rows[b]["added_bytes"] for b in (1, 2, 3) if rows[b]["added_bytes"]} == figures


def test_a_drained_brokers_replicas_land_on_the_others(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        c.create_topic("events", partitions=2, replication_factor=2)
        _produce(c, 1_000, 10)
        repo = Repo(tmp_path, c, "kind: Topic\nname: events\npartitions: 2\nreplication_factor: 2\n", drain=[3])
        before = used(c)
        code, plan, output = repo.plan()
        assert code == 2, output
        [action] = plan["actions"]
        assert repo.apply()[0] == 0
        after = used(c)
        figures = {int(b): n for b, n in action["disk"]["per_broker"].items()}
        assert after[3] == 0 and figures[3] == -before[3] < 0
        assert figures == {b: after[b] - before[b] for b in (1, 2, 3) if after[b] != before[b]}
        assert action["disk"]["bytes"] == 0  # moved, not copied: the cluster holds as much as before
