"""JSON-lines event files: round trip, and errors that name the bad sequence."""
import json

import numpy as np
import pytest

from lib.cades import io
from lib.tpp.events import SequenceError, from_lists, to_lists


def _write(tmp_path, records):
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return str(path)


def test_round_trip(tmp_path):
    ev = from_lists([[0.5, 1.0, 3.0], [2.0]], [[0, 2, 1], [1]], [4.0, 5.0], num_marks=3)
    path = str(tmp_path / "x.jsonl")
    io.save_jsonl(path, ev, ["a", "b"])
    back, ids = io.load_jsonl(path, num_marks=3)
    assert ids == ["a", "b"]
    for x, y in zip(to_lists(ev), to_lists(back)):
        for u, v in zip(x, y):
            np.testing.assert_allclose(u, v)
    np.testing.assert_allclose(np.asarray(back.t_max), [4.0, 5.0])


GOOD = {"id": "ok", "t_max": 10.0, "times": [1.0, 2.0], "marks": [0, 1]}


@pytest.mark.parametrize("bad,message", [
    ({"id": "s7", "t_max": 10.0, "times": [1.0, 3.0, 2.0]}, r"sequence 's7'.*not sorted \(event 1"),
    ({"id": "neg", "t_max": 10.0, "times": [-0.5, 1.0]}, r"sequence 'neg'.*negative time -0.5"),
    ({"id": "void", "t_max": 10.0, "times": []}, r"sequence 'void'.*empty sequence"),
    ({"id": "mk", "t_max": 10.0, "times": [1.0, 2.0], "marks": [0, 5]},
     r"sequence 'mk'.*mark 5.* out of range \[0, 1\]"),
    ({"id": "late", "t_max": 1.5, "times": [1.0, 2.0]}, r"sequence 'late'.*exceeds t_max"),
    ({"id": "nm", "times": [1.0]}, r"sequence 'nm'.*missing field 't_max'"),
    ({"id": "few", "t_max": 3.0, "times": [1.0, 2.0], "marks": [0]}, r"sequence 'few'.*1 marks for 2"),
    ({"t_max": 3.0, "times": [1.0], "colour": 1}, r"sequence 'line 2'.*unknown field"),
    ("{not json", r"events.jsonl:2: not valid JSON"),
])
def test_bad_sequences_are_named(tmp_path, bad, message):
    path = _write(tmp_path, [GOOD, bad])
    with pytest.raises(SequenceError, match=message):
        io.load_jsonl(path, num_marks=2)


def test_from_lists_names_the_sequence_too():
    with pytest.raises(SequenceError, match=r"sequence #1: times are not sorted"):
        from_lists([[1.0], [2.0, 1.0]], None, 5.0)
