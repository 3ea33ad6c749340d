"""lib.toolbox.jsonl: records with their `path:line`, and errors that name the bad line."""
import pytest

from lib.toolbox import jsonl


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


def test_records_name_a_line_that_is_not_utf8(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff\xfe"}\n')
    with pytest.raises(CustomError, match=r"r.jsonl:2: not UTF-8 text \(invalid byte 0xff\)"):
        list(jsonl.records(str(path), error=CustomError))


def test_read_json_round_trip_and_type_check(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"a": [1, 2], "b": {"c": null}}')
    assert jsonl.read_json(str(path), expect=dict) == {"a": [1, 2], "b": {"c": None}}
    path.write_text("[1, 2]")
    assert jsonl.read_json(str(path)) == [1, 2]
    with pytest.raises(CustomError, match=r"m.json: expected a JSON object, got list"):
        jsonl.read_json(str(path), error=CustomError, expect=dict)


@pytest.mark.parametrize("content, message", [
    (b'{"a": 1,\n "b": ', r"m.json:2:7: not valid JSON \(Expecting value\)"),      # truncated
    (b"", r"m.json:1:1: not valid JSON \(Expecting value\)"),                        # empty
    (b"PK\x03\x04\xff\x00garbage", r"m.json: not UTF-8 text \(invalid byte 0xff\)"),  # binary
])
def test_read_json_names_the_path_of_a_broken_file(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(CustomError, match=message) as info:
        jsonl.read_json(str(path), error=CustomError)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_read_json_missing_file_and_directory(tmp_path):
    with pytest.raises(CustomError, match=r"nope.json: no such file"):
        jsonl.read_json(str(tmp_path / "nope.json"), error=CustomError)
    with pytest.raises(CustomError, match=r": is a directory, expected a file"):
        jsonl.read_json(str(tmp_path), error=CustomError)
