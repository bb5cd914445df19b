"""The architecture, as a table the code is checked against: the layers of `reconciler/`, bottom
first, what each may import, and which third-party clients may be imported where.

A module imports only modules of its own layer or of layers below it, and the import graph has
no circle (lazy imports inside functions count: a circle through them is still a circle). A new
module must be given a layer here; that is the point at which its place in the pipeline is decided.

    load -> observe -> plan -> validate -> apply -> render, with drift and import on top, then the
    use cases (app) both front ends call, then the CLI and the entry points.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reconciler"

# (layer, modules): a name covers the module and, for a package, everything in it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core data", ("reconciler", "reconciler.errors", "reconciler.units", "reconciler.kafka_configs",
                   "reconciler.models", "reconciler.ports")),
    # the Policy document's rules: checked as the manifests load, and again by the planner and apply
    ("policy", ("reconciler.policy",)),
    ("load", ("reconciler.yaml_source", "reconciler.manifest_docs", "reconciler.manifests")),
    ("plan", ("reconciler.retention", "reconciler.rights", "reconciler.preconditions", "reconciler.read_scope",
              "reconciler.placement", "reconciler.replication", "reconciler.planner")),
    ("validate", ("reconciler.validation",)),
    ("apply", ("reconciler.apply", "reconciler.reassign")),
    ("import", ("reconciler.importer",)),
    ("files", ("reconciler.files",)),
    ("render", ("reconciler.render",)),
    ("drift", ("reconciler.drift",)),
    ("kafka adapter", ("reconciler.kafka", "reconciler.kafka_cluster")),
    ("use cases", ("reconciler.app",)),
    ("cli", ("reconciler.cli",)),
    ("entry points", ("reconciler.__main__", "reconciler.spark_submit")),
]
# The Kafka wire-protocol test cluster stands in for Kafka: no layer of the product, never imported by it.
TEST_CLUSTER = "reconciler.testing"

# Third-party packages only one place may import (top-level module -> the modules allowed to).
ONLY_IN = {
    "kafka": ("reconciler.kafka", TEST_CLUSTER),  # kafka-python: the adapter, and the test cluster
    "click": ("reconciler.cli",),
    "pyspark": ("reconciler.drift.spark_job", "reconciler.drift.spark_clean"),
    "deepdiff": ("reconciler.drift.changelog",),  # the change log's structural diff
}
# Imported when a Parquet file is read or written, never when a module is imported (Spark's job excepted).
LAZY_ONLY = {"pyarrow": ("reconciler.drift.spark_job",)}


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
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found += [(name, id(node) in top_level) for name in names]
    return found


def _layer(module: str) -> int:
    matches = [(len(name), index) for index, (_, names) in enumerate(LAYERS) for name in names if _within(module, name)]
    assert matches, f"{module} has no layer: add it to LAYERS in {Path(__file__).name}"
    return max(matches)[1]  # the most specific name wins ("reconciler" only covers what nothing else does)


def _graph() -> dict[str, set[str]]:
    return {m: {name for name, _ in _imports(m) if name in MODULES} for m in MODULES if not _within(m, TEST_CLUSTER)}


def test_every_module_has_a_layer_and_imports_none_above_it():
    wrong = []
    for module, imported in sorted(_graph().items()):
        for name in sorted(imported):
            if _within(name, TEST_CLUSTER):
                wrong.append(f"{module} imports the test cluster {name}")
            elif _layer(name) > _layer(module):
                wrong.append(f"{module} ({LAYERS[_layer(module)][0]}) imports {name} ({LAYERS[_layer(name)][0]})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    graph = _graph()
    circles: list[str] = []
    state: dict[str, str] = {}

    def visit(module: str, chain: list[str]) -> None:
        state[module] = "open"
        chain = [*chain, module]
        for name in sorted(graph.get(module, ())):
            if state.get(name) == "open":
                circles.append(" -> ".join([*chain[chain.index(name):], name]))
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
    code = ("import sys, reconciler.cli; print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('kafka', 'pyarrow', 'pyspark', 'deepdiff') or m.startswith(('reconciler.kafka', "
            "'reconciler.drift.spark_job')))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert loaded.split() == []
