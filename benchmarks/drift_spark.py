"""Spark drift engine benchmark: reconciled fleets, Spark vs local, wall and CPU time, peak memory.

    python benchmarks/drift_spark.py --clusters 2 5 --partitions 100000 [--engines spark local] [--check]
        [--master spark://HOST:7077 --conf spark.pyspark.python=... --rounds 2]

The fleets are drift_fleet.py's synthetic ones as a reconciler keeps them: the declared configs
are set on the topics (in drift_fleet.py every topic inherits the cleanup.policy its manifest
declares, so every topic has a finding). What is left is drift_fleet.py's drift: ~10% of topics
unmanaged, ~5% with another retention, ~3% with a truncation rule, ~1% short of partitions, ~2%
with an undeclared key, a few partitions under-replicated, offline or behind the earlier run;
about three topics in four have no finding. `--drifted` sets the share of drifting topics instead
(the others are made in sync): 0.01 is a fleet a reconciler runs on.

Each engine runs in its own child process; its figures are wall time, CPU time of the whole
process tree (the driver, Spark's JVM and its Python workers, from /proc at the end of the run,
children reaped included), peak RSS of the Python driver and of the tree (sampled every 0.25 s).
`--check` requires the engines' reports (JSON, every field but the engine's name) to be equal.
Not a test: figures depend on the machine and its load.

`--profile DIR` breaks Spark's run down (figures under DIR/<fleet>/): Spark's event log gives the
time from the command's start to the session and to the first task, and per job (named by the
line of the engine that ran it) its wall time and its tasks' run and CPU time; the process tree's
CPU is split between the driver's Python, the JVM and the Python workers; and the workers'
tasks (one cluster each) run under Spark's own profiler (spark.python.profile), whose top
functions are printed and dumped as pstats. The profiler slows the Python side: compare
CPU figures with a run without `--profile`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from drift_fleet import GENERATED_AT, synthetic_desired, synthetic_rows, write_run

from reconciler.models.desired import DesiredState, DesiredTopic

TICKS = os.sysconf("SC_CLK_TCK")


def reconciled(desired: DesiredState, runs: list[list[dict]], drifted: float | None, seed: int) -> DesiredState:
    """The fleet as a reconciler keeps it (the runs' rows changed in place): declared keys set on
    the topics; with `drifted`, only that share of the topics keeps drift_fleet.py's drift, the
    others are declared, in sync and healthy in both runs."""
    rnd = random.Random(f"{seed}-{desired.cluster.name}-drifted")
    topics = dict(desired.topics)
    for same_topic in zip(*runs):
        name = same_topic[0]["topic"]
        if drifted is not None and not same_topic[0]["internal"] and rnd.random() >= drifted:
            topics[name] = _in_sync(name, same_topic)
        want = topics.get(name)
        for row in same_topic if want is not None else ():
            row["configs"] = [{**c, "source": 1} if c["key"] in want.configs else c for c in row["configs"]]
    return desired.model_copy(update={"topics": topics})


def _in_sync(name: str, same_topic: tuple[dict, ...]) -> DesiredTopic:
    configs = {"retention.ms": "604800000", "cleanup.policy": "delete"}
    for row in same_topic:
        row["configs"] = [c for c in row["configs"] if c["key"] in configs]
    for partitions in zip(*(row["partitions"] for row in same_topic)):
        for before, p in itertools.pairwise(partitions):  # no data loss, no epoch change
            p["high_watermark"] = max(p["high_watermark"], before["high_watermark"])
            p["leader_epoch"] = before["leader_epoch"]
        for p in partitions:
            p["leader"], p["isr"] = p["replicas"][0], list(p["replicas"])
    return DesiredTopic(name=name, partitions=len(same_topic[0]["partitions"]), replication_factor=3, configs=configs)


def write_reconciled_fleet(
    directory: Path, clusters: int, partitions: int, drifted: float | None, seed: int = 7
) -> dict[str, DesiredState]:

    out = {}
    for c in range(clusters):
        name = f"cluster-{c:03d}"
        runs = [synthetic_rows(name, partitions, run, seed) for run in range(2)]
        out[name] = reconciled(synthetic_desired(name, partitions, seed), runs, drifted, seed)
        for rows in runs:
            write_run(directory, name, rows)
    return out


def _tree(pid: int) -> tuple[int, float]:
    """(resident KiB, CPU seconds) of a process and its living descendants; a process's CPU counts
    its reaped children (cutime, cstime)."""
    rss, cpu, stack = 0, 0.0, [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += sum(int(f) for f in fields[11:15]) / TICKS  # utime stime cutime cstime
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return rss, cpu


def _started_at() -> float:
    """This process's start (epoch seconds), from /proc: the command's start, not this module's."""
    boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime"))
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    return boot + ticks / TICKS


def _cpu_by_kind(pid: int) -> dict[str, float]:
    """CPU seconds of the process tree by kind: the driver's Python, the JVM, the Python workers
    (children reaped count to their parent)."""
    out: dict[str, float] = {}
    stack = [(pid, "driver")]
    while stack:
        p, kind = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            name = Path(f"/proc/{p}/comm").read_text().strip()
            kind = "jvm" if name == "java" else kind if kind != "jvm" else "python workers"
            out[kind] = out.get(kind, 0.0) + sum(int(f) for f in fields[11:15]) / TICKS
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [(int(c), kind) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return {k: round(v, 1) for k, v in out.items()}


def profile_conf(directory: Path) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": directory.resolve().as_uri(),
        "spark.eventLog.rolling.enabled": "false",  # one plain JSON-lines file
        "spark.eventLog.compress": "false",
        "spark.python.profile": "true",
    }


def breakdown(directory: Path, started: float, driver_cpu: dict[str, float]) -> list[str]:
    """The event log's figures as lines: start, first task, each job's wall and its tasks' times."""
    log = max((f for f in directory.iterdir() if f.is_file() and f.suffix != ".txt"), key=lambda f: f.stat().st_mtime)
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert any(e["Event"] == "SparkListenerTaskEnd" for e in events), f"no task in {log}"
    app = next(e["Timestamp"] for e in events if e["Event"] == "SparkListenerApplicationStart") / 1000
    jobs: dict[int, dict] = {}
    stage_job: dict[int, int] = {}
    for e in events:
        if e["Event"] == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            site = props.get("callSite.short") or ""
            jobs[e["Job ID"]] = {
                "site": site,
                "start": e["Submission Time"],
                "end": None,
                "tasks": 0,
                "run": 0,
                "cpu": 0,
                "gc": 0,
                "stages": len(e["Stage IDs"]),
            }
            for s in e["Stage IDs"]:
                stage_job[s] = e["Job ID"]
        elif e["Event"] == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
    first_task = None
    for e in events:
        if e["Event"] == "SparkListenerTaskEnd" and e.get("Task Metrics"):
            job = jobs.get(stage_job.get(e["Stage ID"], -1))
            launch = e["Task Info"]["Launch Time"] / 1000
            first_task = launch if first_task is None else min(first_task, launch)
            if job is not None:
                m = e["Task Metrics"]
                job["tasks"] += 1
                job["run"] += m["Executor Run Time"] / 1000
                job["cpu"] += m["Executor CPU Time"] / 1e9
                job["gc"] += m["JVM GC Time"] / 1000
    lines = [
        f"command start -> SparkContext up: {app - started:.1f} s; -> first task: {(first_task or app) - started:.1f} s",
        f"CPU by process: {driver_cpu}",
        "| job | call site | wall (s) | stages | tasks | task run (s) | task JVM CPU (s) | GC (s) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for i, j in sorted(jobs.items()):
        wall = ((j["end"] or j["start"]) - j["start"]) / 1000
        lines.append(
            f"| {i} | {j['site']} | {wall:.1f} | {j['stages']} | {j['tasks']} | {j['run']:.1f} | {j['cpu']:.1f} | {j['gc']:.1f} |"
        )
    return lines


def _python_profile(spark: object, directory: Path) -> list[str]:
    """The executors' Python, from Spark's RDD profiler: its top functions by own time."""
    import io
    import pstats

    spark.sparkContext.dump_profiles(str(directory))  # type: ignore[attr-defined]
    dumps = list(directory.rglob("*.pstats"))
    if not dumps:
        return ["(no Python profile: no task's Python ran)"]
    out = io.StringIO()
    stats = pstats.Stats(*map(str, dumps), stream=out)
    stats.sort_stats("tottime").print_stats(25)
    return [f"Python workers, the clusters' tasks (profiled; {len(dumps)} dump(s)):", *out.getvalue().splitlines()[:60]]


def _child(
    engine: str, fleet: Path, report: Path, master: str | None = None, conf: list[str] | None = None, profile: Path | None = None
) -> None:
    import gc

    from reconciler.drift.engine import run_fleet
    from reconciler.drift.spark_options import SparkOptions

    gc.disable()  # as `reconcile` runs every command (reconciler.cli)
    data = json.loads((fleet / "desired.json").read_text())
    states = {k: DesiredState.model_validate(v) for k, v in data.items()}
    del data  # the manifests as models only, as `reconcile` holds them
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], _tree(os.getpid())[0])

    threading.Thread(target=sample, daemon=True).start()
    cpu_before, start = _tree(os.getpid())[1], time.perf_counter()
    settings = dict(c.split("=", 1) for c in conf or [])
    if profile is not None and engine == "spark":
        settings |= profile_conf(profile)
    spark = SparkOptions(settings) if engine == "spark" else SparkOptions()
    result = run_fleet(
        fleet / "snapshots",
        states.__getitem__,
        engine=engine,
        master=master if engine == "spark" else None,
        tables=fleet / f"tables-{engine}",
        generated_at=GENERATED_AT,
        spark=spark,
    )
    wall, cpu = time.perf_counter() - start, _tree(os.getpid())[1] - cpu_before
    done.set()
    report.write_text(json.dumps(result.report.comparable(), sort_keys=True))
    if profile is not None and engine == "spark":
        from reconciler.drift import spark_session

        spark_now = spark_session.session()
        python = _python_profile(spark_now, profile / "python")
        cpu_by_kind = _cpu_by_kind(os.getpid())
        spark_now.stop()  # the event log complete
        lines = [*breakdown(profile, _started_at(), cpu_by_kind), *python]
        (profile / "breakdown.txt").write_text("\n".join(lines) + "\n")
        print("\n".join(lines), file=sys.stderr)
    self_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "engine": result.engine,
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
                "driver_rss_mib": round(self_kib / 1024),
                "tree_rss_mib": round(max(peak[0], self_kib) / 1024),
                "items": sum(c.counts.items for c in result.report.clusters),
                "topics": sum(c.topics_observed for c in result.report.clusters),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, nargs="+", default=[2, 5])
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions per cluster")
    parser.add_argument("--engines", nargs="+", default=["spark", "local"])
    parser.add_argument("--drifted", type=float, default=None, help="share of topics with drift (default: as generated)")
    parser.add_argument("--workdir", default="/tmp/drift-spark-bench")
    parser.add_argument("--check", action="store_true", help="require the engines' reports to be equal")
    parser.add_argument("--master", help="Spark master (default local[*]), e.g. spark://127.0.0.1:7077")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting; repeatable")
    parser.add_argument("--rounds", type=int, default=1, help="run the engines this many times, alternately")
    parser.add_argument("--profile", metavar="DIR", help="Spark's event log, CPU by process and Python profile under DIR")
    parser.add_argument("--run", nargs=3, metavar=("ENGINE", "FLEET", "REPORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        _child(
            args.run[0],
            Path(args.run[1]),
            Path(args.run[2]),
            args.master,
            args.conf,
            Path(args.profile) if args.profile else None,
        )
        return
    results = []
    for n in args.clusters:
        fleet = Path(args.workdir) / f"{n}x{args.partitions}-{args.drifted if args.drifted is not None else 'as-made'}"
        if not (fleet / "desired.json").exists():
            start = time.perf_counter()
            desired = write_reconciled_fleet(fleet / "snapshots", n, args.partitions, args.drifted)
            (fleet / "desired.json").write_text(json.dumps({k: v.model_dump(mode="json") for k, v in desired.items()}))
            print(
                f"# wrote {n} clusters x {args.partitions:,} partitions x 2 runs in {time.perf_counter() - start:.0f}s",
                file=sys.stderr,
            )
        reports = {}
        spark_args = [*(["--master", args.master] if args.master else []), *(f"--conf={c}" for c in args.conf)]
        for round_, engine in enumerate(args.engines * args.rounds):  # alternately: a load that drifts weighs on both
            if args.profile:
                shown = Path(args.profile) / f"{fleet.name}-{engine}-{round_}"
                spark_args = [a for a in spark_args if not a.startswith("--profile=")] + [f"--profile={shown}"]
            reports[engine] = fleet / f"report-{engine}.json"
            cmd = [sys.executable, __file__, "--run", engine, str(fleet), str(reports[engine]), *spark_args]
            out = subprocess.run(cmd, check=False, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            line = [x for x in out.stdout.splitlines() if x.startswith("{")]
            if args.profile and engine == "spark":
                print(out.stderr[out.stderr.find("command start") :], file=sys.stderr)
            if out.returncode or not line:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{engine} failed on {fleet}")
            row = {"clusters": n, "partitions": n * args.partitions, "load": round(os.getloadavg()[0], 1), **json.loads(line[-1])}
            results.append(row)
            print(json.dumps(row), flush=True)
        if args.check and len(reports) > 1:
            texts = {e: p.read_text() for e, p in reports.items()}
            same = len(set(texts.values())) == 1
            print(f"# {n} clusters: reports {'equal' if same else 'DIFFER'} ({', '.join(texts)})", flush=True)
            if not same:
                raise SystemExit(1)
    print(
        "\n| clusters | partitions | engine | wall (s) | CPU, process tree (s) | peak RSS, driver (MiB) "
        "| peak RSS, tree (MiB) | topics | findings | load |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['clusters']} | {r['partitions']:,} | {r['engine']} | {r['wall_s']} | {r['cpu_s']} | "
            f"{r['driver_rss_mib']} | {r['tree_rss_mib']} | {r['topics']:,} | {r['items']:,} | {r['load']} |"
        )


if __name__ == "__main__":
    main()
