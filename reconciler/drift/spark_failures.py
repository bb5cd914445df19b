"""What a failed Spark job says, in one paragraph: the cause found in the text Spark gives (the
JVM's message, with a Python worker's whole traceback inside it), and what to install or set where.

Pure text in, text out: the causes are matched where Spark puts them (a worker's traceback ends
with a generic line after the error class that matters), so each rule is tested without Spark.
"""

from __future__ import annotations

import re

from reconciler.errors import shown_text

_SKIPPED = ("at ", "For further information", "SQLSTATE", "JVM stacktrace", "...")


def cause_of(text: str, executors_python: str) -> str | None:
    """The paragraph for the cause in a failure's `text` that has its own advice; None for any other."""
    where = f"the executors' Python ({shown_text(executors_python, 120)}; spark.pyspark.python names it)"
    install = "pip install 'kafka-reconciler[spark]'"
    version = re.search(r"PYTHON_VERSION_MISMATCH\].*?different version:? ([\d.]+)\s+than that in driver:? ([\d.]+)", text, re.S)
    if version:
        worker, driver = version.groups()
        return (
            f"the Spark executors run Python {worker} and this driver Python {driver} ([PYTHON_VERSION_MISMATCH]): "
            f"point --conf spark.pyspark.python at a Python {driver} on the workers that has kafka-reconciler "
            f"installed ({install}), or run the driver on Python {worker}. Nothing was reported."
        )
    missing = re.search(r"No module named '([\w.]+)'", text)
    if missing:
        module = missing.group(1).split(".")[0]
        what = "the reconciler" if module == "reconciler" else f"{module}, which the Spark engine needs"
        return (
            f"the Spark executors cannot import {what} (No module named {module!r}): in {where}, {install} on "
            "every worker, or ship a packed virtualenv that has it (--conf spark.archives=venv.tar.gz#venv --conf "
            "spark.pyspark.python=./venv/bin/python). Nothing was reported."
        )
    no_program = re.search(r'Cannot run program "([^"]+)"', text)
    if no_program:
        return (
            f"the Spark executors cannot start Python {shown_text(no_program.group(1), 200)} (no such program on "
            "the workers): set --conf spark.pyspark.python to a Python that exists on every worker and has "
            f"kafka-reconciler installed ({install}). Nothing was reported."
        )
    return None


def last_words(text: str, python_worker: bool) -> str:
    """The line that says what went wrong: a Python worker's error ends its traceback; the JVM's
    leads its message."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(_SKIPPED)]
    if not lines:
        return ""
    return shown_text((lines[-1] if python_worker else lines[0]).rstrip(".:"), 400)
