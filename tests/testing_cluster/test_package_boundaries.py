"""The test cluster stands in for Kafka: it must not borrow the product's code (a shared mistake
would pass on both sides), and users get it without pytest unless they use the plugin."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import reconciler.testing

PACKAGE = Path(reconciler.testing.__file__).parent


def _imported_modules(path: Path) -> list[str]:
    """Absolute module names imported by one file (relative imports resolved)."""
    package = ["reconciler", "testing", *path.parent.relative_to(PACKAGE).parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found += [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
    return found


def test_the_test_cluster_imports_nothing_of_the_product():
    outside = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in PACKAGE.rglob("*.py")
        for module in _imported_modules(path)
        if (module == "reconciler" or module.startswith("reconciler."))
        and not (module == "reconciler.testing" or module.startswith("reconciler.testing."))
    }
    assert not outside


def test_the_check_sees_relative_imports():
    modules = _imported_modules(PACKAGE / "handlers" / "offsets.py")
    assert "reconciler.testing.errors" in modules and "reconciler.testing.configs" in modules


def test_the_package_and_its_command_work_without_pytest():
    # A None entry in sys.modules makes `import pytest` fail, as if it were not installed.
    code = (
        "import sys; sys.modules['pytest'] = None\n"
        "import reconciler.testing, reconciler.testing.__main__\n"
        "from reconciler.testing import TestCluster\n"
        "with TestCluster(brokers=1) as c: print(c.bootstrap_servers)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60, cwd=PACKAGE.parent.parent
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("127.0.0.1:")
