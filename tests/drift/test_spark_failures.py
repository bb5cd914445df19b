"""The Spark engine's failures in one paragraph, from the text Spark gives (matched without Spark:
each text below is what Spark 4 printed for that cause), and the drift options that contradict
each other, refused before anything starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.drift.spark_failures import cause_of, last_words
from tests.drift.test_drift_command import _setup

# A Python worker's failure as the JVM reports it: the error class, then a generic last line.
MISMATCH = """Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times, most recent failure: Lost task
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/work/pyspark.zip/pyspark/worker.py", line 3046, in main
    raise PySparkRuntimeError(
pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in worker has different \
version: 3.12 than that in driver: 3.11, PySpark cannot run with different minor versions.
Please check environment variables PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON are correctly set.

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:640)
"""


def test_another_python_on_the_executors_names_both_versions_not_the_generic_last_line():
    cause = cause_of(MISMATCH, "/opt/py312/bin/python")
    assert cause is not None
    assert cause.startswith("the Spark executors run Python 3.12 and this driver Python 3.11 ([PYTHON_VERSION_MISMATCH])")
    assert "spark.pyspark.python at a Python 3.11" in cause
    assert last_words(MISMATCH, python_worker=True).startswith("Please check environment variables")  # what it was


@pytest.mark.parametrize(
    "text, says",
    [
        ("ModuleNotFoundError: No module named 'reconciler'", "cannot import the reconciler (No module named 'reconciler')"),
        ("ModuleNotFoundError: No module named 'pyarrow.lib'", "cannot import pyarrow, which the Spark engine needs"),
        ("ModuleNotFoundError: No module named 'numpy'", "cannot import numpy, which the Spark engine needs"),
    ],
)
def test_a_module_the_executors_lack_is_named_with_what_to_install_where(text, says):
    cause = cause_of(f"Lost task 0.3\n{text}\n\tat org.apache...", "./venv/bin/python")
    assert cause is not None and says in cause
    assert "in the executors' Python (./venv/bin/python; spark.pyspark.python names it)" in cause
    assert "pip install 'kafka-reconciler[spark]' on every worker" in cause and "spark.archives" in cause


def test_an_executor_python_that_does_not_exist_is_named():
    text = 'java.io.IOException: Cannot run program "/nowhere/python": error=2, No such file or directory'
    cause = cause_of(text, "/nowhere/python")
    assert cause is not None and "cannot start Python /nowhere/python" in cause


def test_a_failure_without_advice_of_its_own_has_no_cause():
    assert cause_of("java.lang.OutOfMemoryError: Java heap space", "python3") is None


def _run(*args: str):
    return CliRunner().invoke(main, ["drift", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ("--engine", "local", "--master", "spark://h:7077"),
            "--engine local runs in this process without Spark: it takes no --master",
        ),
        (("--engine", "local", "--conf", "spark.executor.memory=2g"), "it takes no Spark settings (--conf, ...)"),
        (("--engine", "local", "--spark-log-level", "info"), "it takes no Spark settings (--conf, ...)"),
        (("--conf", "spark.executor.memory"), "'spark.executor.memory' is not KEY=VALUE"),
        (("--conf", "a=1", "--conf", "a=2"), "a is given twice"),
    ],
)
def test_contradictory_or_malformed_spark_options_are_refused_before_anything_runs(tmp_path, args, says):
    manifests = _setup(tmp_path)
    result = _run(str(manifests), "--fleet", str(tmp_path / "nowhere"), *args)
    assert result.exit_code == 1 and says in result.output, result.output


def test_spark_options_without_a_fleet_are_refused(tmp_path):
    manifests = _setup(tmp_path)
    result = _run(str(manifests), "--snapshot", str(tmp_path / "now.json"), "--conf", "spark.executor.memory=2g")
    assert result.exit_code == 1 and "--master, --conf and --spark-log-level are for --fleet" in result.output
