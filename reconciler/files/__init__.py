"""The files the reconciler reads back, each read and written in one place with the same checks
and the same one-paragraph errors (SnapshotError naming the file and the place):

- `snapshot`: `load_snapshot`, the one reader of a snapshot file, JSON or Parquet by content;
- `snapshot_json`, `snapshot_parquet`: the two formats; `snapshot_problems`: how a bad one is reported;
- `fleet`: the `<fleet>/<cluster>/<run>.parquet` directory the drift engines read;
- `saved_plan`: a JSON plan read back for `apply`;
- `json_document`: strict JSON (no duplicate keys, NaN, giant numbers, lone surrogates) for all of them.

pyarrow is imported only when a Parquet file is read or written.
"""
