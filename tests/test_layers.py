"""The architecture, as a table the code is checked against: the layers of `reconciler/`, what
each may import (listed explicitly: an edge not in the table is a finding), and which third-party
packages may be imported where. The import graph has no circle (lazy imports inside functions
count: a circle through them is still a circle). A new module must be given a layer here; that is
the point at which its place in the pipeline is decided.

    load -> plan -> apply, with the Kafka adapter beside them, files, render, drift and adopt on
    top, then the use cases (app) both front ends call, then the CLI and the entry points.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reconciler"

# layer -> the modules it covers: a name covers the module and, for a package, everything in it;
# the most specific name wins ("reconciler" only covers what nothing else does).
LAYERS: dict[str, tuple[str, ...]] = {
    "core data": (
        "reconciler",
        "reconciler.errors",
        "reconciler.units",
        "reconciler.kafka_configs",
        "reconciler.models",
        "reconciler.ports",
    ),
    # the Policy document's rules: checked as the manifests load, and again by the planner and apply
    "policy": ("reconciler.plan.policy",),
    "load": ("reconciler.manifests",),
    "plan": ("reconciler.plan",),
    "apply": ("reconciler.apply",),
    "adopt": ("reconciler.adopt",),
    "files": ("reconciler.files",),
    "render": ("reconciler.render",),
    "drift": ("reconciler.drift",),
    "kafka adapter": ("reconciler.kafka",),
    "use cases": ("reconciler.app",),
    "cli": ("reconciler.cli",),
    "entry points": ("reconciler.__main__", "reconciler.spark_submit"),
}
# layer -> the other layers it may import (its own is always allowed).
ALLOWED: dict[str, set[str]] = {
    "core data": set(),
    "policy": {"core data"},
    "load": {"core data", "policy"},
    "plan": {"core data", "policy"},
    "apply": {"core data", "policy", "plan"},
    "adopt": {"core data", "policy", "load", "plan"},
    "files": {"core data"},
    "render": {"core data", "plan", "files", "adopt"},
    "drift": {"core data", "policy", "plan", "files", "render"},
    # the adapter reads what a plan asks for (plan.read_scope) and knows nothing above it
    "kafka adapter": {"core data", "plan"},
    "use cases": {"core data", "load", "plan", "apply", "adopt", "files", "drift", "kafka adapter"},
    "cli": {"core data", "adopt", "render", "drift", "use cases"},
    "entry points": {"cli", "drift"},  # spark_submit: the JVM's stderr, from the Spark session
}
# The Kafka wire-protocol test cluster stands in for Kafka: no layer of the product, never imported by it.
TEST_CLUSTER = "reconciler.testing"

# Third-party packages only some places may import (top-level module -> the modules allowed to).
ONLY_IN = {
    "kafka": ("reconciler.kafka", TEST_CLUSTER),  # kafka-python: the adapter, and the test cluster
    "click": ("reconciler.cli",),
    # the Spark engine
    "pyspark": (
        "reconciler.drift.spark_job",
        "reconciler.drift.spark_session",
    ),
    # the change log's structural diff, and what differs when a saved plan's manifests changed
    "deepdiff": ("reconciler.drift.changelog", "reconciler.plan.binding"),
    "yaml": ("reconciler.manifests.yaml_source", "reconciler.adopt.importer"),  # reading manifests, writing them
    "jinja2": ("reconciler.drift.render",),  # the HTML drift report
    "orjson": ("reconciler.files.json_document",),  # a JSON snapshot's topics
}
# Imported when a Parquet file is read or written, never when a module is imported (Spark's job excepted).
LAZY_ONLY = {
    "pyarrow": ("reconciler.drift.spark_job",),
    # Amazon MSK's IAM signer, the optional extra [aws]: only when a cluster uses it
    "botocore": (),
    "aws_msk_iam_sasl_signer": (),
    # SASL/GSSAPI's client and the test cluster's acceptor, the optional extra [kerberos]
    "gssapi": (),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _within(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def _imports(module: str) -> list[tuple[str, bool]]:
    """(imported module, at module import time?) for every import statement in `module`."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found += [(name, id(node) in top_level) for name in names]
    return found


def _layer(module: str) -> str:
    matches = [(len(name), layer) for layer, names in LAYERS.items() for name in names if _within(module, name)]
    assert matches, f"{module} has no layer: add it to LAYERS in {Path(__file__).name}"
    return max(matches)[1]


def _graph(test_cluster: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports: the product's, and with `test_cluster` the
    test cluster's too (imports only for type checking count: a circle through them is a circle)."""
    return {
        m: {name for name, _ in _imports(m) if name in MODULES} for m in MODULES if test_cluster or not _within(m, TEST_CLUSTER)
    }


def test_every_name_in_the_tables_is_a_real_module():
    named = [name for names in LAYERS.values() for name in names]
    named += [name for names in (*ONLY_IN.values(), *LAZY_ONLY.values()) for name in names]
    assert [name for name in named if name not in MODULES] == []
    assert set(ALLOWED) == set(LAYERS) and all(edges <= set(LAYERS) for edges in ALLOWED.values())


def test_every_module_has_a_layer_and_imports_only_the_layers_it_may():
    wrong = []
    for module, imported in sorted(_graph().items()):
        for name in sorted(imported):
            mine, theirs = _layer(module), _layer(name)
            if _within(name, TEST_CLUSTER):
                wrong.append(f"{module} imports the test cluster {name}")
            elif theirs != mine and theirs not in ALLOWED[mine]:
                wrong.append(f"{module} ({mine}) imports {name} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    """Anywhere in the package, the test cluster included."""
    graph = _graph(test_cluster=True)
    circles: list[str] = []
    state: dict[str, str] = {}

    def visit(module: str, chain: list[str]) -> None:
        state[module] = "open"
        chain = [*chain, module]
        for name in sorted(graph.get(module, ())):
            if state.get(name) == "open":
                circles.append(" -> ".join([*chain[chain.index(name) :], name]))
            elif name not in state:
                visit(name, chain)
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert not circles, "\n".join(circles)


@pytest.mark.parametrize("package", sorted({**ONLY_IN, **LAZY_ONLY}))
def test_third_party_clients_stay_where_they_belong(package):
    wrong = []
    for module in sorted(MODULES):
        for name, at_import_time in _imports(module):
            if not _within(name, package):
                continue
            allowed = any(_within(module, m) for m in ONLY_IN.get(package, ()))
            lazy_ok = package in LAZY_ONLY and (not at_import_time or module in LAZY_ONLY[package])
            if not (allowed or lazy_ok):
                wrong.append(f"{module} imports {name}" + (" at import time" if at_import_time else ""))
    assert not wrong, "\n".join(wrong)


def test_the_cli_starts_without_the_kafka_client_pyarrow_pyspark_or_deepdiff():
    """`reconcile --help` imports the CLI; the heavy clients wait for the command that needs them."""
    code = (
        "import sys, reconciler.cli; print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('kafka', 'pyarrow', 'pyspark', 'deepdiff') or m.startswith(('reconciler.kafka', "
        "'reconciler.drift.spark_job')))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert loaded.split() == []


def test_the_pipeline_is_in_the_folders_and_module_names_say_what_they_hold():
    """Planning and applying are packages, not flat modules beside the rest: at most 8 modules at
    the package root, and at most 5 module names (of the product, the test cluster aside) used twice."""
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 8, root
    names = [p.stem for p in PACKAGE.rglob("*.py") if p.stem != "__init__" and TEST_CLUSTER.split(".")[1] not in p.parts]
    names += [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()]  # a package's name is a module's too
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert len(repeated) <= 5, repeated
