"""Reading JSON-lines files of records, with errors that name `path:line`.

    for where, record in jsonl.records(path, error=SequenceError):
        ...   # check the record's fields; name `where` in any error

Blank lines are skipped. A line that is not valid JSON, or not a JSON object, raises
`error` (ValueError or a subclass) with the message `"<path>:<line>: ..."` before the
record reaches the caller, so every loader in the workspace reports bad files the same way.
"""
from __future__ import annotations

import json
from typing import Iterator


def records(path: str, *, error: type[Exception] = ValueError) -> Iterator[tuple[str, dict]]:
    """Yield `(where, record)` for each non-blank line of the JSONL file `path`.

    where: `"<path>:<line>"` for the caller's own messages. Raises `error` for a line that
    is not valid JSON or not an object, and for a missing file.
    """
    try:
        f = open(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise error(f"{where}: not valid JSON ({e.msg})") from None
            if not isinstance(record, dict):
                raise error(f"{where}: expected a JSON object, got {type(record).__name__}")
            yield where, record
