"""What a plan says each action adds to each broker's disk, against what the test cluster's log
directories then hold, over real sockets through the CLI: a raised retention with records
produced over the following days at the rate the plan measured, a replication-factor increase,
and a drained broker. Each test plans, applies, lets the brokers reach the steady state, and
compares per broker the plan's figure with the change in `log_dir_used_bytes` (what
DescribeLogDirs' UsableBytes is taken from)."""

from __future__ import annotations

import time

from reconciler.testing import TestCluster
from tests.apply.test_apply_live import Repo
from tests.apply.test_capacity_helpers import GIB, observed_ms, used

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


def test_a_topic_deletion_frees_what_its_replicas_hold_on_each_broker(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        c.create_topic("events", partitions=2, replication_factor=2)
        _produce(c, 1_000, 10)
        repo = Repo(tmp_path, c, "kind: Topic\nname: events\nstate: absent\n")
        before = used(c)
        code, plan, output = repo.plan()  # a live plan, as a snapshot's says it
        assert code == 2, output
        [action] = plan["actions"]
        assert action["kind"] == "delete_topic" and "unknown" not in action["disk"]["method"], action["disk"]
        assert repo.apply()[0] == 0
        after = used(c)
        figures = {int(b): n for b, n in action["disk"]["per_broker"].items()}
        assert figures == {b: after[b] - before[b] for b in (1, 2, 3) if after[b] != before[b]}
        assert sum(figures.values()) == action["disk"]["bytes"] == -2 * 2 * 10 * PER_HOUR * VALUE_SIZE


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


POLICY = "---\nkind: Policy\nmax_disk_usage: 0.45\n"
MIB = 1 << 20


def _policy_repo(tmp_path, cluster: TestCluster, replication_factor: int) -> Repo:
    (tmp_path / "p").mkdir(exist_ok=True)
    return Repo(
        tmp_path / "p",
        cluster,
        f"kind: Topic\nname: events\npartitions: 2\nreplication_factor: {replication_factor}\n" + POLICY,
    )


def test_the_policy_refuses_a_plan_that_fills_a_broker_past_max_disk_usage(tmp_path):
    # Each broker's filesystem is 4 MiB; each partition holds 1 MiB, and RF 1 -> 3 puts both on every broker.
    with TestCluster(brokers=3, log_dir_bytes=4 * MIB) as c:
        c.create_topic("events", partitions=2, replication_factor=1)
        for p in range(2):
            c.produce_many({("events", p): 1024}, value_size=1024)
        code, plan, output = _policy_repo(tmp_path, c, 3).plan()
        assert code == 1, output
        errors = [d for d in plan["diagnostics"] if d["code"] == "policy-max-disk-usage"]
        assert {d["severity"] for d in errors} == {"error"} and len(errors) == 3
        message = errors[0]["message"]
        assert message == (
            "broker 1 (log dir /tmp/kafka-logs) would use 2.0 MiB of 4.0 MiB (50.0%) after this plan, above the "
            "policy's max_disk_usage of 45%: used now 1.0 MiB, +1.0 MiB from the plan; most from reassign replicas "
            "events +1.0 MiB"
        )
        assert errors[0]["source"]["file"] == "topics.yaml" and "error[policy-max-disk-usage]" in output


def test_a_warning_from_90_percent_of_the_limit_and_unknown_capacity_never_blocks(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=[5 * MIB, 5 * MIB, 5 * MIB]) as c:
        c.create_topic("events", partitions=2, replication_factor=1)
        for p in range(2):
            c.produce_many({("events", p): 1024}, value_size=1024)
        # RF 3: 2 MiB of 5 MiB on each broker (40%): below 42%, but past 90% of it.
        repo = Repo(
            tmp_path,
            c,
            "kind: Topic\nname: events\npartitions: 2\nreplication_factor: 3\n---\nkind: Policy\nmax_disk_usage: 0.42\n",
        )
        code, plan, output = repo.plan()
        assert code == 2, output
        warnings = [d for d in plan["diagnostics"] if d["code"] == "policy-max-disk-usage"]
        assert warnings and {d["severity"] for d in warnings} == {"warning"}
        assert "close to the policy's max_disk_usage of 42%" in warnings[0]["message"]
    with TestCluster(brokers=3, log_dir_bytes=4 * MIB, max_versions={35: 3}) as c:
        c.create_topic("events", partitions=2, replication_factor=1)
        for p in range(2):
            c.produce_many({("events", p): 1024}, value_size=1024)
        code, plan, output = _policy_repo(tmp_path, c, 3).plan()
        assert code == 2, output  # the same plan passes: capacity unknown, said once
        notes = [d["message"] for d in plan["diagnostics"] if d["code"] == "capacity-unknown"]
        assert len(notes) == 1 and notes[0].startswith("disk capacity unknown (brokers 1, 2, 3: DescribeLogDirs v3")


def test_apply_reads_the_disks_again_and_refuses_when_they_filled_since_the_plan(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=8 * MIB) as c:
        c.create_topic("events", partitions=2, replication_factor=1)
        c.create_topic("other", partitions=3, replication_factor=1)
        for p in range(2):
            c.produce_many({("events", p): 1024}, value_size=1024)
        repo = _policy_repo(tmp_path, c, 3)
        code, _, output = repo.plan()
        assert code == 2, output  # 2 MiB of 8 MiB on each broker: 25%
        for p in range(3):  # something else fills 2 MiB more on each broker
            c.produce_many({("other", p): 2048}, value_size=1024)
        result = repo.run("apply", str(repo.dir / "plan.json"), "--manifests", str(repo.dir / "manifests"))
        assert result.exit_code == 1, result.output
        assert "Error: the plan for lab would now fill the brokers' disks past the policy: broker 1 (log dir " in result.output
        assert "used now 3.0 MiB, +1.0 MiB from the plan" in result.output  # the disk as read again, the plan's figures
        assert all(len(r) == 1 for r in c.replicas("events").values())  # nothing was changed
