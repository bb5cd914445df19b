"""The file to hand to spark-submit for a fleet drift report:

    spark-submit [options] "$(python -c 'import reconciler.spark_submit as m; print(m.__file__)')" \\
        MANIFESTS_DIR --fleet PATH [drift options]

is `reconcile drift MANIFESTS_DIR --fleet PATH --engine spark [drift options]`, with the master and
the rest of the Spark settings taken from spark-submit (the Spark job picks up the session it
started). It exits with drift's codes (0 no drift, 3 drift found, 1 error). An entry point like
`__main__`: it sits above the CLI, which it runs; nothing imports it.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

if __name__ == "__main__":  # pragma: no cover - run as a file by spark-submit
    # Python put this file's directory first on sys.path: the package's own modules (`kafka`,
    # `testing`, ...) must not shadow top-level ones. The reconciler is imported as the installed package.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)


class _SparkSubmitStderr(io.TextIOBase):
    """spark-submit merges the Python driver's stderr into its own stdout: errors and progress go
    to the JVM's stderr instead, through the gateway spark-submit opened for this process."""

    def __init__(self, stream: Any) -> None:  # java.io.PrintStream, through py4j
        self.stream = stream

    def writable(self) -> bool:
        return True

    def write(self, text: str | bytes) -> int:
        # str(): py4j hands bytes to Java as a byte[], which PrintStream.print shows as "[B@..."
        self.stream.print(text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text))
        self.stream.flush()
        return len(text)


def main(argv: list[str] | None = None) -> None:
    from reconciler.cli import main as reconcile
    from reconciler.drift.spark_session import jvm_stderr, launched_by_spark_submit

    if launched_by_spark_submit():
        sys.stderr = _SparkSubmitStderr(jvm_stderr())
    args = list(sys.argv[1:] if argv is None else argv)
    reconcile(["drift", "--engine", "spark", *args], prog_name="reconcile")


if __name__ == "__main__":  # pragma: no cover
    main()
