"""The use cases: what each `reconcile` command does, with plain arguments in and one outcome out.

One module per command (`plan`, `apply`, `drift`, `snapshot`, `import_cluster`, `validate`), each
a function that takes paths, a cluster name, options and a way to connect (`connection.Connect`)
and returns an outcome object: the data to render and its `Outcome` kind. The CLI parses,
calls, renders and turns the kind into the exit code; nothing here knows click or a terminal.

Importing this package is cheap on purpose (`reconcile --help` imports the CLI): the Kafka
adapter, pyarrow and pyspark are imported inside the use case that needs them, never at module
import time.
"""
