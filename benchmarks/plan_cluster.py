"""`reconcile plan` end to end against a large cluster, and the same read through kafka-python's admin client.

    python benchmarks/plan_cluster.py [--topics 1000 10000] [--partitions 10] [--replication-factor 3]
                                      [--check COMMIT] [--skip-admin] [--skip-confluent]

For each size, a 3-broker test cluster is seeded in a child process exactly as benchmarks/read_cluster.py
does (200 records per partition, a topic-level retention.ms on every topic, committed offsets of one
group on every tenth topic), and a manifests directory declaring every topic is written to a
temporary directory: a Cluster, a Policy, two TopicTemplates, a shared TruncationRule and one file
of Topics per team. Truncation rules sit on 30% of the topics (consumed_by on every tenth topic
through its template, a shared before_time rule on another tenth, keep_last on another tenth), so the
read includes ListOffsets by time, OffsetForLeaderEpoch and committed group offsets; a little drift
(retention changed on every 1000th topic, partitions added on every 2000th, five new topics) gives
the broker validation (validate_only) something to check. The records are old (T0, 2023), so the
lowered retention would delete all of them: the policy allows that (max_delete_fraction 1.0), else
the plan would fail instead of showing the drift. Then, each in its own process:

1. `reconcile plan DIR --cluster bench --format json -o FILE`, the installed CLI: wall time, and from
   wait4 its CPU time and peak RSS; the brokers' process reports its own CPU time over the same
   interval, and the requests it received per API.
2. The same work in phases (`--phases`, in-process, same calls as the CLI): import, manifest load,
   connect, read, plan, validation on the brokers, rendering.
3. The same read through kafka-python's public KafkaAdminClient calls (`--admin`): describe_topics,
   describe_configs of every topic, list_partition_offsets earliest and latest of every partition,
   and, to match the rules, by time for the before_time topics and list_group_offsets for the group.
   kafka-python has no public call for OffsetForLeaderEpoch, so that part is not compared.
4. The same read through confluent-kafka's AdminClient (`--confluent`), when confluent-kafka is
   installed (it is not a dependency of the reconciler; without it a note says so): list_topics,
   describe_configs of every topic, list_offsets earliest, latest and by time, and
   list_consumer_group_offsets.

`--owners N` (issue 37) also plans, N times each and alternately in the same run against the same
brokers, the manifests without and with a Team per service prefix (`write_teams`: every topic owned,
every budget set, none exceeded) and reports the CPU seconds of each, the brokers' included.

`--check COMMIT` proves the plan unchanged: that commit's `reconciler` package (`git archive`, so
the repository is needed) plans the same manifests against the same brokers right after the
measured run, and its JSON and text must equal the measured run's byte for byte, the instant of
the read (`observed_at`) masked. The commit before the speed work of issue 16 is 09358db:
`python benchmarks/plan_cluster.py --topics 1000 10000 --check 09358db`.

Before measuring, the package's bytecode is compiled beside its sources (`compiled`), as installing
a wheel does: an editable install run with PYTHONDONTWRITEBYTECODE set (as on this project's
machines) would otherwise compile every one of its modules again in every run (~0.14 s of CPU),
which the peers, installed packages, never do.

In 2, 3 and 4 the child announces each step and waits, so the brokers' request log and CPU time are
taken per step. Prints Markdown tables. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from read_cluster import APIS, GROUP, T0, Brokers, names

CLUSTER = "bench"
CUT_MS = T0 + 50_000  # the before_time rule: the first 50 records of each partition
NEW_TOPICS = 5
ORDER = APIS + ["ApiVersions", "CreateTopics", "CreatePartitions", "IncrementalAlterConfigs"]


# -- the manifests ---------------------------------------------------------------------------


def write_manifests(root: Path, bootstrap: str, topics: int, partitions: int, replication_factor: int) -> None:
    cut = datetime.fromtimestamp(CUT_MS / 1000, timezone.utc).isoformat().replace("+00:00", "Z")
    (root / "topics").mkdir(parents=True)
    (root / "cluster.yaml").write_text(
        f"kind: Cluster\nname: {CLUSTER}\nbootstrap_servers: [{bootstrap}]\n"
        f"defaults: {{partitions: {partitions}, replication_factor: {replication_factor}}}\n"
        "---\nkind: Policy\n"
        "topic_name_pattern: '^[a-z][a-z0-9-]*(\\.[a-z0-9-]+)+$'\n"
        f"max_partitions: 64\nallowed_replication_factors: [{replication_factor}]\nmax_delete_fraction: 1.0\n"
    )
    (root / "shared.yaml").write_text(
        "kind: TopicTemplate\nname: events\nconfigs: {retention.ms: 7d}\n"
        "---\nkind: TopicTemplate\nname: consumed-events\nconfigs: {retention.ms: 7d}\n"
        f"truncate:\n  - consumed_by: [{GROUP}]\n"
        f"---\nkind: TruncationRule\nname: erasure-batch\nbefore_time: {cut}\n"
    )
    teams: dict[str, list[str]] = {}
    for i, name in enumerate(names(topics)):
        doc = [f"kind: Topic\nname: {name}\ntemplate: {'consumed-events' if i % 10 == 0 else 'events'}"]
        if i % 10 == 5:
            doc.append("truncate:\n  - rule: erasure-batch")
        elif i % 10 == 1:
            doc.append("truncate:\n  - keep_last: 100")
        if i % 1000 == 3:
            doc.append("configs: {retention.ms: 3d}")
        if i % 2000 == 7:
            doc.append(f"partitions: {partitions + 2}")
        teams.setdefault(name.split(".")[0], []).append("\n".join(doc))
    for j in range(NEW_TOPICS):
        teams["svc00"].append(f"kind: Topic\nname: svc00.new-{j}\ntemplate: events")
    for team, docs in teams.items():
        (root / "topics" / f"{team}.yaml").write_text("\n---\n".join(docs) + "\n")


def write_teams(root: Path, topics: int) -> None:
    """A Team per service prefix owning its topics, with every budget set and none exceeded (a disk
    budget has the team's partitions sized by the read)."""
    prefixes = sorted({name.split(".")[0] for name in names(topics)})
    (root / "teams.yaml").write_text(
        "\n---\n".join(
            f"kind: Team\nname: {p}\nreview: '@bench/{p}'\ntopics: {{prefixes: [{p}.]}}\n"
            "budget: {max_topics: 100000, max_partitions: 10000000, max_retention: 30d, max_disk: 1000TiB, "
            f"name_prefix: {p}.}}"
            for p in prefixes
        )
        + "\n"
    )


# -- children: measured with wait4, talking step by step -------------------------------------


def run_child(argv: list[str], timeout_s: float, brokers: Brokers, stdout=None) -> dict:
    """Run a child to completion (killed after timeout_s): wall, CPU and peak RSS of that process
    alone, and the brokers' CPU time and requests over the same interval. A child that talks the
    step protocol (see `Steps`) gets per-step broker figures in "steps"."""
    import subprocess

    brokers.ask("clear")
    broker_before, started = brokers.ask("usage"), time.perf_counter()
    stepwise = stdout is None
    child = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stepwise else subprocess.DEVNULL,
        stdout=subprocess.PIPE if stepwise else stdout,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = threading.Event()
    killer = threading.Timer(timeout_s, lambda: (killed.set(), child.kill()))
    killer.start()
    steps, stderr = [], []
    drain = threading.Thread(target=lambda: stderr.extend(child.stderr), daemon=True)
    drain.start()
    step = None
    for line in child.stdout if stepwise else ():
        message = json.loads(line)
        if "begin" in message:
            brokers.ask("clear")
            step = {"name": message["begin"], "broker": brokers.ask("usage"), "started": time.perf_counter()}
        elif "end" in message:
            used = brokers.ask("usage")
            step.update(
                message, broker_cpu=used[0] + used[1] - step["broker"][0] - step["broker"][1], counts=brokers.ask("counts")
            )
            steps.append(step)
            step = None
        else:
            steps.append(message)
        child.stdin.write("go\n")
        child.stdin.flush()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    drain.join(timeout=10)
    broker_after = brokers.ask("usage")
    if step is not None:  # killed during this step
        steps.append(
            dict(
                step,
                wall=time.perf_counter() - step["started"],
                cpu=float("nan"),
                error="killed",
                broker_cpu=sum(broker_after[:2]) - sum(step["broker"][:2]),
                counts=brokers.ask("counts"),
            )
        )
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "exit": child.returncode,
        "killed": killed.is_set(),
        "broker_cpu": sum(broker_after[:2]) - sum(broker_before[:2]),
        "broker_rss_mib": broker_after[2] / 1024,
        "counts": brokers.ask("counts"),
        "steps": steps,
        "stderr": "".join(stderr)[-2000:],
    }


class Steps:
    """The child's side: announce a step, wait for the parent to take the brokers' figures, run."""

    @contextmanager
    def __call__(self, name: str):
        self._say({"begin": name})
        wall, cpu, error = time.perf_counter(), time.process_time(), None
        try:
            yield
        except Exception as e:  # noqa: BLE001 - reported, not fatal: the comparison says what failed
            error = f"{type(e).__name__}: {e}"[:300]
        self._say(
            {
                "end": name,
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
                "error": error,
                "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )

    def note(self, **values) -> None:
        self._say({"note": values})

    @staticmethod
    def _say(message: dict) -> None:
        print(json.dumps(message), flush=True)
        sys.stdin.readline()


def phases(manifests_dir: str) -> None:
    """The CLI's `plan` work, one step at a time (same calls, same connection settings)."""
    import gc

    gc.disable()  # as `reconcile` runs every command (reconciler.cli)
    step = Steps()
    with step("import"):
        from reconciler.kafka.connection import connect
        from reconciler.manifests import load_manifests
        from reconciler.plan.planner import plan as make_plan
        from reconciler.plan.validate_only import validate_on_brokers
        from reconciler.render import render_plan
    with step("load manifests"):
        manifests = load_manifests(manifests_dir)
        desired = manifests.desired_state(CLUSTER)
    with step("connect"):
        kafka = connect(desired.cluster)
        cluster = kafka.__enter__()
    with step("read (observe_desired)"):
        observed = cluster.observe_desired(desired, every_offset=False)  # as `plan` reads
    with step("plan"):
        result = make_plan(desired, observed)
    with step("validate on brokers"):
        result = validate_on_brokers(result, cluster)
    kafka.__exit__(None, None, None)
    with step("render json + text"):
        size = len(render_plan(result, "json")) + len(render_plan(result, "text"))
    step.note(actions=len(result.actions), rendered_bytes=size, errors=result.has_errors)


def admin(bootstrap: str, topics: int) -> None:
    """The same read through kafka-python's public admin calls."""
    step = Steps()
    with step("import"):
        from kafka import TopicPartition
        from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, OffsetSpec
    with step("connect"):
        client = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id="bench-admin", request_timeout_ms=600_000)
    described = []
    with step("describe_topics()"):
        described = client.describe_topics()
    wanted = set(names(topics))
    every = [TopicPartition(t["name"], p["partition_index"]) for t in described if t["name"] in wanted for p in t["partitions"]]
    by_index = {name: i for i, name in enumerate(names(topics))}
    with step("describe_configs(all topics)"):
        found = client.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, n) for n in sorted(wanted)], config_filter="all"
        )
        assert len(found["topic"]) == topics
    for label, spec in (("earliest", OffsetSpec.EARLIEST), ("latest", OffsetSpec.LATEST)):
        with step(f"list_partition_offsets({label})"):
            assert len(client.list_partition_offsets(dict.fromkeys(every, spec))) == len(every)
    with step("list_partition_offsets(by time)"):
        client.list_partition_offsets({tp: CUT_MS for tp in every if by_index[tp.topic] % 10 == 5})
    with step("list_group_offsets"):
        client.list_group_offsets({GROUP: [tp for tp in every if by_index[tp.topic] % 10 == 0]})
    client.close()
    step.note(partitions=len(every))


def confluent(bootstrap: str, topics: int) -> None:
    """The same read through confluent-kafka's AdminClient (librdkafka)."""
    step = Steps()
    with step("import"):
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
        from confluent_kafka.admin import AdminClient, ConfigResource, OffsetSpec, ResourceType
    with step("connect"):
        client = AdminClient({"bootstrap.servers": bootstrap, "client.id": "bench-confluent"})
    described = None
    with step("list_topics()"):
        described = client.list_topics(timeout=600)
    wanted = set(names(topics))
    every = [TopicPartition(t, p) for t, meta in described.topics.items() if t in wanted for p in meta.partitions]
    by_index = {name: i for i, name in enumerate(names(topics))}
    with step("describe_configs(all topics)"):
        futures = client.describe_configs([ConfigResource(ResourceType.TOPIC, n) for n in sorted(wanted)], request_timeout=600)
        assert len([f.result() for f in futures.values()]) == topics
    for label, spec in (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest())):
        with step(f"list_offsets({label})"):
            found = client.list_offsets(dict.fromkeys(every, spec), request_timeout=600)
            assert len([f.result() for f in found.values()]) == len(every)
    with step("list_offsets(by time)"):
        found = client.list_offsets(
            {tp: OffsetSpec.for_timestamp(CUT_MS) for tp in every if by_index[tp.topic] % 10 == 5}, request_timeout=600
        )
        [f.result() for f in found.values()]
    with step("list_consumer_group_offsets"):
        request = ConsumerGroupTopicPartitions(GROUP, [tp for tp in every if by_index[tp.topic] % 10 == 0])
        [f.result() for f in client.list_consumer_group_offsets([request], request_timeout=600).values()]
    step.note(partitions=len(every))


def has_confluent() -> bool:
    import importlib.util

    return importlib.util.find_spec("confluent_kafka") is not None


# -- checking the plan against an earlier commit's ---------------------------------------------


def compiled(package: Path) -> Path:
    """`package` with its modules' bytecode written beside them (see the module's docstring)."""
    import compileall

    compileall.compile_dir(str(package), quiet=1)
    return package


def package_of(commit: str, into: Path) -> Path:
    """The `reconciler` package as `commit` has it, extracted under `into` (a PYTHONPATH entry)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", commit, "reconciler"], check=True, capture_output=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _masked(text: str) -> str:
    """The instant of the read (JSON `observed_at`, the text's first line) masked."""
    import re

    text = re.sub(r'"observed_at": "[^"]*"', '"observed_at": "<time>"', text, count=1)
    return re.sub(r", observed [^)]*\)", ", observed <time>)", text, count=1)


def check_against(commit: str, tmp: str, argv: list[str], plan_file: Path, text_file: Path) -> str:
    """Plan again with `commit`'s package; "identical" or where the outputs differ."""
    import subprocess

    package = package_of(commit, Path(tmp, "reference"))
    reference = Path(tmp, "reference.json")
    args = [a if a != str(plan_file) else str(reference) for a in argv]
    # From `tmp`: `python -m` puts the working directory first on sys.path, so run from a checkout
    # it would import the checkout's package instead of the reference.
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", *args],
        capture_output=True,
        text=True,
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": str(package)},
        check=False,
    )
    if done.returncode != 2:
        return f"the reference plan exited {done.returncode}: {done.stderr[-500:]}"
    for name, ours, theirs in (
        ("JSON", plan_file.read_text(), reference.read_text()),
        ("text", text_file.read_text(), done.stdout),
    ):
        ours, theirs = _masked(ours), _masked(theirs)
        if ours != theirs:
            line = next(i for i, (a, b) in enumerate(zip(ours.splitlines() + [""], theirs.splitlines() + [""])) if a != b)
            return f"{name} differs from {commit}'s at line {line + 1}"
    return f"identical to {commit}'s (JSON and text, byte for byte; the read's time masked)"


# -- the parent ------------------------------------------------------------------------------


def measure(
    topics: int,
    partitions: int,
    replication_factor: int,
    skip_admin: bool,
    admin_timeout_s: float,
    skip_confluent: bool = False,
    check: str | None = None,
    owners: int = 0,
) -> dict:
    out = {"topics": topics, "partitions": topics * partitions, "load": [os.getloadavg()[0]]}
    compiled(Path(__file__).resolve().parent.parent / "reconciler")
    reconcile = Path(sys.executable).with_name("reconcile")
    cli = [str(reconcile)] if reconcile.exists() else [sys.executable, "-m", "reconciler"]
    with Brokers(topics, partitions, replication_factor) as brokers, tempfile.TemporaryDirectory() as tmp:
        out["broker_seed_rss_mib"] = brokers.ask("usage")[2] / 1024
        manifests = Path(tmp, "manifests")
        write_manifests(manifests, brokers.bootstrap_servers, topics, partitions, replication_factor)
        plan_file, text_file = Path(tmp, "plan.json"), Path(tmp, "plan.txt")
        argv = ["plan", str(manifests), "--cluster", CLUSTER, "--format", "json", "-o", str(plan_file), "--no-color"]
        with open(text_file, "w") as text:
            out["plan"] = run_child(cli + argv, 1800, brokers, stdout=text)
        if out["plan"]["exit"] != 2:  # 2: changes present, as the drift above should give
            raise SystemExit(f"reconcile plan exited {out['plan']['exit']}: {out['plan']['stderr']}")
        plan = json.loads(plan_file.read_text())
        out["plan"]["actions"] = Counter(a["kind"] for a in plan["actions"])
        out["plan"]["json_mib"] = plan_file.stat().st_size / 2**20
        if check:
            out["check"] = check_against(check, tmp, argv, plan_file, text_file)
        out["load"].append(os.getloadavg()[0])
        if owners:
            out["owners"] = owner_runs(cli, manifests, Path(tmp), topics, owners, brokers)
        out["phases"] = run_child([sys.executable, __file__, "--phases", str(manifests)], 1800, brokers)
        out["load"].append(os.getloadavg()[0])
        if not skip_admin:
            out["admin"] = run_child(
                [sys.executable, __file__, "--admin", brokers.bootstrap_servers, str(topics)], admin_timeout_s, brokers
            )
            out["admin"]["timeout_s"] = admin_timeout_s
            out["load"].append(os.getloadavg()[0])
        if not skip_confluent and has_confluent():
            out["confluent"] = run_child(
                [sys.executable, __file__, "--confluent", brokers.bootstrap_servers, str(topics)], admin_timeout_s, brokers
            )
            out["confluent"]["timeout_s"] = admin_timeout_s
            out["load"].append(os.getloadavg()[0])
    return out


def markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(head))) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _apis(counts: Counter) -> str:
    known = [a for a in ORDER if counts.get(a)] + sorted(a for a in counts if a not in ORDER)
    return ", ".join(f"{a} {counts[a]}" for a in known)


def report(results: list[dict]) -> str:
    out = [
        "### `reconcile plan` end to end",
        "",
        markdown(
            ["topics / partitions", "wall s", "client CPU s", "client peak RSS MiB", "broker CPU s", "requests"],
            [
                [
                    f"{r['topics']:,} / {r['partitions']:,}",
                    f"{r['plan']['wall']:.1f}",
                    f"{r['plan']['cpu']:.1f}",
                    f"{r['plan']['rss_mib']:.0f}",
                    f"{r['plan']['broker_cpu']:.1f}",
                    f"{sum(r['plan']['counts'].values())}: {_apis(r['plan']['counts'])}",
                ]
                for r in results
            ],
        ),
    ]
    out += [
        "",
        "Plans: "
        + "; ".join(
            f"{r['topics']:,} topics: {', '.join(f'{n} {k}' for k, n in sorted(r['plan']['actions'].items()))}, "
            f"JSON {r['plan']['json_mib']:.1f} MiB"
            for r in results
        ),
    ]
    peers = [
        (key, label)
        for key, label in (("admin", "KafkaAdminClient"), ("confluent", "confluent-kafka"))
        if any(key in r for r in results)
    ]
    if peers:
        out += [
            "",
            "Client CPU of the whole `reconcile plan` against the peers' bare read of the same state: "
            + "; ".join(
                f"{r['topics']:,} topics: "
                + ", ".join(
                    f"{label} {r[key]['cpu']:.1f} s ({r[key]['cpu'] / r['plan']['cpu']:.1f}x)" for key, label in peers if key in r
                )
                for r in results
            )
            + ".",
        ]
    if any("check" in r for r in results):
        out += [
            "",
            "Plan output check: " + "; ".join(f"{r['topics']:,} topics: {r['check']}" for r in results if "check" in r) + ".",
        ]
    if not any("confluent" in r for r in results) and not has_confluent():
        out += [
            "",
            "confluent-kafka is not installed, so its AdminClient was not compared (pip install "
            "confluent-kafka to include it; it is not a dependency of the reconciler).",
        ]
    for key, title in (
        ("phases", "The same, phase by phase (in one process)"),
        ("admin", "The same read through kafka-python's KafkaAdminClient"),
        ("confluent", "The same read through confluent-kafka's AdminClient"),
    ):
        if not any(key in r for r in results):
            continue
        out += ["", f"### {title}", ""]
        rows = []
        for r in results:
            run = r[key]
            for s in run["steps"]:
                if "note" in s:
                    continue
                status = f" ({s['error']})" if s.get("error") else ""
                rows.append(
                    [
                        f"{r['topics']:,}",
                        s["name"] + status,
                        f"{s['wall']:.2f}",
                        f"{s['cpu']:.2f}",
                        f"{s['rss_mib']:.0f}" if "rss_mib" in s else "",
                        f"{max(0, s['broker_cpu']):.2f}",
                        f"{sum(s['counts'].values())}: {_apis(s['counts'])}" if s["counts"] else "0",
                    ]
                )
            finished = "" if not run["killed"] else f" (killed after {run['timeout_s'] / 60:.0f} min)"
            total = sum(sum(s.get("counts", {}).values()) for s in run["steps"])
            rows.append(
                [
                    f"{r['topics']:,}",
                    f"**whole process**{finished}",
                    f"{run['wall']:.2f}",
                    f"{run['cpu']:.2f}",
                    f"{run['rss_mib']:.0f}",
                    f"{max(0, run['broker_cpu']):.2f}",
                    str(total),
                ]
            )
        out.append(
            markdown(["topics", "step", "wall s", "client CPU s", "client peak RSS MiB", "broker CPU s", "requests"], rows)
        )
    out += [
        "",
        "1-minute load average before/between/after the runs: "
        + "; ".join(f"{r['topics']:,} topics: " + ", ".join(f"{x:.2f}" for x in r["load"]) for r in results)
        + ". Broker process peak RSS after seeding: "
        + ", ".join(f"{r['broker_seed_rss_mib']:.0f} MiB" for r in results)
        + ".",
    ]
    return "\n".join(out)


def owner_runs(cli: list[str], manifests: Path, tmp: Path, topics: int, repeat: int, brokers: Brokers) -> dict:
    """CPU seconds of `repeat` plans without and with owners and budgets, alternately."""
    import shutil

    owned = tmp / "owned"
    shutil.copytree(manifests, owned)
    write_teams(owned, topics)
    runs: dict[str, list[dict]] = {"without": [], "with": []}
    for _ in range(repeat):
        for label, root in (("without", manifests), ("with", owned)):
            argv = ["plan", str(root), "--cluster", CLUSTER, "--format", "json", "-o", str(tmp / f"{label}.json"), "--no-color"]
            with open(tmp / f"{label}.txt", "w") as text:
                run = run_child(cli + argv, 1800, brokers, stdout=text)
            if run["exit"] != 2:
                raise SystemExit(f"reconcile plan ({label} owners) exited {run['exit']}: {run['stderr']}")
            runs[label].append({"cpu": run["cpu"], "broker_cpu": run["broker_cpu"], "wall": run["wall"]})
    print(f"  owners: {json.dumps(runs)}", file=sys.stderr, flush=True)
    return runs


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--phases":
        return phases(sys.argv[2])
    if len(sys.argv) > 1 and sys.argv[1] == "--admin":
        return admin(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "--confluent":
        return confluent(sys.argv[2], int(sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--partitions", type=int, default=10, help="partitions per topic")
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--skip-admin", action="store_true", help="leave out the kafka-python comparison")
    parser.add_argument("--skip-confluent", action="store_true", help="leave out the confluent-kafka comparison")
    parser.add_argument("--admin-timeout", type=float, default=1800, help="seconds before a comparison is killed")
    parser.add_argument(
        "--check", metavar="COMMIT", help="also plan with this commit's reconciler package and require identical output"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    parser.add_argument("--owners", type=int, default=0, metavar="N", help="also plan N times without and with teams")
    args = parser.parse_args()
    results = []
    for topics in args.topics:
        results.append(
            measure(
                topics,
                args.partitions,
                args.replication_factor,
                args.skip_admin,
                args.admin_timeout,
                args.skip_confluent,
                args.check,
                args.owners,
            )
        )
        print(f"  {topics:,} topics: plan {results[-1]['plan']['wall']:.1f}s", file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print(report(results))
    if any("check" in r and not r["check"].startswith("identical") for r in results):
        raise SystemExit("the plan output differs from the reference commit's")


if __name__ == "__main__":
    main()
