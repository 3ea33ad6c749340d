"""The one reader of user-supplied or cached JSON and JSON-lines files; errors name the file.

    for where, record in jsonl.records(path, error=SequenceError):
        ...   # check the record's fields; name `where` in any error
    metadata = jsonl.read_json(path, error=CorruptDatasetError, expect=dict)

JSON lines: blank lines are skipped. A line that is not valid JSON, or not a JSON object,
raises `error` (ValueError or a subclass) with the message `"<path>:<line>: ..."` before
the record reaches the caller. A whole JSON file that does not parse raises
`"<path>:<line>:<column>: not valid JSON (...)"`. A missing file, a directory or bytes that
are not UTF-8 raise `"<path>: ..."`. So every loader in the workspace reports bad files the
same way, with the path, and never as a bare `JSONDecodeError`.
"""
from __future__ import annotations

import json
from typing import Any, Iterator


def _open(path: str, error: type[Exception], mode: str = "rb"):
    try:
        return open(path, mode)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, expected a file") from None


def _decode(raw: bytes, where: str, error: type[Exception]) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{where}: not UTF-8 text (invalid byte {raw[e.start]:#04x}); expected JSON") from None


def records(path: str, *, error: type[Exception] = ValueError) -> Iterator[tuple[str, dict]]:
    """Yield `(where, record)` for each non-blank line of the JSONL file `path`.

    where: `"<path>:<line>"` for the caller's own messages. Raises `error` for a line that
    is not valid JSON, not an object or not UTF-8, and for a missing file.
    """
    with _open(path, error) as f:
        for lineno, raw in enumerate(f, 1):
            where = f"{path}:{lineno}"
            line = _decode(raw, where, error)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise error(f"{where}: not valid JSON ({e.msg})") from None
            if not isinstance(record, dict):
                raise error(f"{where}: expected a JSON object, got {type(record).__name__}")
            yield where, record


def read_json(path: str, *, error: type[Exception] = ValueError, expect: type | None = None) -> Any:
    """The parsed content of the JSON file `path`.

    Raises `error` naming `path` (and `line:column` for a syntax error) when the file is
    missing, not UTF-8, not valid JSON, or (with `expect`, e.g. `dict`) of another type.
    """
    with _open(path, error) as f:
        text = _decode(f.read(), path, error)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
    if expect is not None and not isinstance(value, expect):
        names = {dict: "object", list: "array"}
        raise error(f"{path}: expected a JSON {names.get(expect, expect.__name__)}, "
                    f"got {type(value).__name__}")
    return value
