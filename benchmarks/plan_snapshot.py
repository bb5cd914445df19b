"""`reconcile plan --snapshot` at scale: a synthetic JSON snapshot and manifests declaring its topics.

    python benchmarks/plan_snapshot.py [--topics 10000] [--partitions 10] [--repeat 3] [--check COMMIT] [--phases] [--owners]

Writes, under --workdir, a JSON snapshot of a cluster of --topics topics with --partitions
partitions each (three brokers, a topic-level retention.ms on every topic, committed offsets of one
group on every tenth topic) and a manifests directory declaring every topic (written by `reconcile
import --snapshot`), with a little drift: retention changed on every 1000th topic, partitions added
on every 2000th, a truncation rule on every tenth. Then runs `reconcile plan DIR --snapshot FILE
--format json -o PLAN` --repeat times, each in its own process, and reports the best wall time and
its CPU time (from wait4) and peak RSS.

`--phases` also runs the same calls one step at a time in one child process (import, manifests,
snapshot, plan, render JSON + text) and reports each step's CPU time, the peak RSS after it, and
the step's tracemalloc peak against what stays allocated after it (in a second child, since
tracing slows everything down).

`--owners` (issue 37) adds a Team per prefix (team00 ... team49) owning its topics, with every
budget set and none exceeded, in a workdir of its own: run it alternately with the same command
without it to see what owners and budgets cost.

The package's bytecode is compiled first, as installing it does (see benchmarks/plan_cluster.py).

`--check COMMIT` plans again with that commit's `reconciler` package (`git archive`) and requires
the JSON plan and the text on stdout to be byte-identical. Not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plan_cluster import compiled, package_of

T0 = 1_700_000_000_000
TAKEN_AT = "2026-11-20T09:00:00+00:00"


def snapshot(topics: int, partitions: int) -> dict:
    """A snapshot as `reconcile snapshot` writes it (every field of every partition present)."""
    out = {}
    for i in range(topics):
        name = f"team{i % 50:02d}.events-{i:05d}"
        parts = []
        for p in range(partitions):
            leader = 1 + (i + p) % 3
            replicas = [leader, leader % 3 + 1, (leader + 1) % 3 + 1]
            parts.append(
                {
                    "partition": p,
                    "leader": leader,
                    "leader_epoch": 3 + p % 2,
                    "replicas": replicas,
                    "isr": list(replicas),
                    "offline_replicas": [],
                    "log_start_offset": 100 * (p % 4),
                    "high_watermark": 10_000 + (i * 31 + p * 7) % 5000,
                    "size_bytes": 1_800_000 + p,
                    "epoch_end_offset": None,
                    "offsets_by_timestamp": {str(T0): 500 + p} if i % 10 == 3 else {},
                }
            )
        configs = {
            "cleanup.policy": {"value": "delete", "source": 5, "sensitive": False, "read_only": False},
            "retention.ms": {"value": "604800000", "source": 1, "sensitive": False, "read_only": False},
            "segment.bytes": {"value": "1073741824", "source": 5, "sensitive": False, "read_only": False},
        }
        out[name] = {"name": name, "topic_id": f"id-{i:05d}", "internal": False, "partitions": parts, "configs": configs}
    groups = {"billing": {name: {"0": 50} for j, name in enumerate(out) if j % 10 == 0}}
    return {
        "format_version": 1,
        "cluster": "bench",
        "cluster_id": "bench-id",
        "controller_id": 1,
        "taken_at": TAKEN_AT,
        "brokers": [{"node_id": b, "host": f"b{b}", "port": 9092, "rack": None} for b in (1, 2, 3)],
        "topics": out,
        "group_offsets": groups,
    }


CLUSTER_YAML = """kind: Cluster
name: bench
bootstrap_servers: [b1:9092]
"""


def write_teams(manifests: Path) -> None:
    """A Team per prefix (team00 ... team49) owning its topics, with every budget set and none exceeded."""
    (manifests / "teams.yaml").write_text(
        "\n---\n".join(
            f"kind: Team\nname: team{t:02d}\nreview: '@bench/team{t:02d}'\ntopics: {{prefixes: [team{t:02d}.]}}\n"
            "budget: {max_topics: 100000, max_partitions: 10000000, max_retention: 30d, max_disk: 1000TiB, "
            f"name_prefix: team{t:02d}.}}"
            for t in range(50)
        )
        + "\n"
    )


def write_case(root: Path, topics: int, partitions: int, owners: bool = False) -> tuple[Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    snap, manifests = root / "snapshot.json", root / "manifests"
    if snap.exists() and manifests.exists():
        return snap, manifests
    snap.write_text(json.dumps(snapshot(topics, partitions), indent=2))
    manifests.mkdir()
    (manifests / "cluster.yaml").write_text(CLUSTER_YAML)
    subprocess.run(
        [sys.executable, "-m", "reconciler", "import", str(manifests), "--snapshot", str(snap), "--group-by", "none"],
        check=True,
        capture_output=True,
        env=with_package(ROOT),
        cwd=root,
    )
    (path,) = [p for p in manifests.rglob("*.yaml") if p.name != "cluster.yaml"]
    docs = path.read_text().split("\n---\n")
    for i in range(len(docs)):
        if i % 1000 == 5:
            docs[i] = docs[i].replace("retention.ms: 7d", "retention.ms: 1d")
        elif i % 2000 == 7:
            docs[i] = docs[i].replace(f"partitions: {partitions}", f"partitions: {partitions + 2}")
        elif i % 10 == 1:
            docs[i] += "\ntruncate:\n- keep_last: 500"
    path.write_text("\n---\n".join(docs))
    if owners:
        write_teams(manifests)
    return snap, manifests


def with_package(package: Path) -> dict[str, str]:
    """The environment of a child that runs `package`'s `reconciler` (a PYTHONPATH entry). Each
    child also runs in a directory without one: `python -m` puts the working directory first on
    sys.path, where a checkout's own package would shadow the one asked for."""
    return {**os.environ, "PYTHONPATH": str(package)}


ROOT = Path(__file__).resolve().parent.parent  # the checkout whose package is measured


def run_plan(argv: list[str], env: dict | None = None) -> tuple[float, float, int, subprocess.CompletedProcess]:
    """Wall time, CPU time and peak RSS (KiB) of one run of this checkout's package (or of the
    one `env` names); its output goes through files (a pipe would block the child once full, while
    this waits for it)."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, tempfile.TemporaryDirectory() as elsewhere:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env or with_package(ROOT), cwd=elsewhere)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss,
            subprocess.CompletedProcess(argv, code, out.read(), err.read()),
        )


def phases(manifests: str, snap: str, traced: bool) -> None:
    """The CLI's `plan --snapshot` work, one step at a time (same calls); one JSON line per step."""
    import gc
    import resource
    import tracemalloc

    gc.disable()  # as `reconcile` runs every command (reconciler.cli)
    if traced:
        tracemalloc.start()

    def step(name: str, run):
        cpu = time.process_time()
        if traced:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
        result = run()
        row = {
            "step": name,
            "cpu_s": round(time.process_time() - cpu, 3),
            "rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
        if traced:
            now, peak = tracemalloc.get_traced_memory()
            row = {"step": name, "peak_mib": round((peak - before) / 2**20, 1), "kept_mib": round((now - before) / 2**20, 1)}
        print(json.dumps(row), flush=True)
        return result

    def imports():
        from reconciler.app.inputs import snapshot_for
        from reconciler.manifests import load_manifests
        from reconciler.plan.planner import plan as make_plan
        from reconciler.render import render_plan

        return load_manifests, snapshot_for, make_plan, render_plan

    load_manifests, snapshot_for, make_plan, render_plan = step("import", imports)
    manifests = step("load manifests", lambda: load_manifests(manifests))
    observed = step("load snapshot", lambda: snapshot_for(manifests, snap))
    desired = manifests.desired_state(observed.cluster)
    result = step("plan", lambda: make_plan(desired, observed))
    step("render json + text", lambda: len(render_plan(result, "json")) + len(render_plan(result, "text")))


def phase_rows(manifests: Path, snap: Path, traced: bool) -> list[dict]:
    argv = [sys.executable, __file__, "--child-phases", str(manifests), str(snap)] + (["--traced"] if traced else [])
    done = subprocess.run(argv, check=True, capture_output=True, text=True, env=with_package(ROOT))
    return [json.loads(line) for line in done.stdout.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/plan-snapshot-bench")
    parser.add_argument("--check", metavar="COMMIT")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--child-phases", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--child-write", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--owners", action="store_true", help="with a Team per prefix, every budget set (issue 37)")
    args = parser.parse_args()
    if args.child_phases:
        phases(*args.child_phases, traced=args.traced)
        return
    if args.child_write:
        write_case(Path(args.child_write), args.topics, args.partitions, args.owners)
        return
    root = Path(args.workdir) / f"{args.topics}x{args.partitions}{'-owners' if args.owners else ''}"
    # Written by a child: a process's peak RSS passes to the children it starts (Linux counts the
    # memory of the process a child was forked from), and writing 1M partitions takes 4 GB.
    write = [sys.executable, __file__, "--child-write", str(root), "--topics", str(args.topics)]
    owners = ["--owners"] if args.owners else []
    subprocess.run([*write, "--partitions", str(args.partitions), *owners], check=True, env=with_package(ROOT))
    snap, manifests = root / "snapshot.json", root / "manifests"
    plan_file = root / "plan.json"
    compiled(ROOT / "reconciler")
    argv = [
        sys.executable,
        "-m",
        "reconciler",
        "plan",
        str(manifests),
        "--snapshot",
        str(snap),
        "--format",
        "json",
        "-o",
        str(plan_file),
        "--no-color",
    ]
    runs = [run_plan(argv) for _ in range(args.repeat)]
    for *_, done in runs:
        if done.returncode != 2:
            raise SystemExit(f"plan exited {done.returncode}: {done.stderr[-2000:]}")
    wall, cpu, rss, done = min(runs, key=lambda r: r[0])
    row = {
        "topics": args.topics,
        "partitions": args.topics * args.partitions,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mib": round(rss / 1024),
    }
    if args.check:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            package = package_of(args.check, Path(tmp, "reference"))
            reference = Path(tmp, "plan.json")
            theirs = run_plan([a if a != str(plan_file) else str(reference) for a in argv], env=with_package(package))[3]
            same = theirs.returncode == 2 and theirs.stdout == done.stdout and reference.read_bytes() == plan_file.read_bytes()
            row["check"] = f"identical to {args.check}'s" if same else f"DIFFERS from {args.check}'s"
    print(json.dumps(row))
    if args.phases:
        memory = {r["step"]: r for r in phase_rows(manifests, snap, traced=True)}
        for r in phase_rows(manifests, snap, traced=False):
            print(json.dumps({**r, **memory[r["step"]]}))
    if "check" in row and not row["check"].startswith("identical"):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
