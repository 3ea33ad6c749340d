"""lib.common.jsonl: records with their `path:line`, and errors that name the bad line."""
import pytest

from lib.common import jsonl


class CustomError(ValueError):
    pass


def test_records_skip_blank_lines_and_name_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n  \n{"b": [2, 3]}\n')
    got = list(jsonl.records(str(path)))
    assert got == [(f"{path}:1", {"a": 1}), (f"{path}:4", {"b": [2, 3]})]


@pytest.mark.parametrize("text, message", [
    ('{"a": 1}\n{not json\n', r"r.jsonl:2: not valid JSON \(Expecting property name"),
    ('{"a": 1}\n[1, 2]\n', r"r.jsonl:2: expected a JSON object, got list"),
])
def test_bad_lines_raise_the_callers_error(tmp_path, text, message):
    path = tmp_path / "r.jsonl"
    path.write_text(text)
    records = jsonl.records(str(path), error=CustomError)
    assert next(records) == (f"{path}:1", {"a": 1})   # good lines before it still arrive
    with pytest.raises(CustomError, match=message):
        next(records)


def test_missing_file(tmp_path):
    with pytest.raises(CustomError, match=r"nope.jsonl: no such file"):
        list(jsonl.records(str(tmp_path / "nope.jsonl"), error=CustomError))
