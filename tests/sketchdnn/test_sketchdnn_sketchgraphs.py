"""SketchGraphs loader on a tiny fixture written here in the file format of the data set."""
import enum
import math
import pickle
import sys
import types
from typing import NamedTuple

import numpy as np
import pytest

from lib.sketchdnn import sketch as sk
from lib.sketchdnn import sketchgraphs as sg

lz4_frame = pytest.importorskip("lz4.frame")


def _fake_sketchgraphs_module():
    """Classes pickled under SketchGraphs' module names, as in the real files."""
    mod = types.ModuleType("sketchgraphs.data.sequence")

    class EntityType(enum.Enum):
        Point, Line, Circle, Arc, Spline, Stop = ("Point", "Line", "Circle", "Arc", "Spline",
                                                  "Stop")

    class ConstraintType(enum.Enum):
        Coincident, Horizontal, Stop = "Coincident", "Horizontal", "Stop"

    class NodeOp(NamedTuple):
        label: object
        parameters: dict = {}

    class EdgeOp(NamedTuple):
        label: object
        references: tuple
        parameters: dict = {}

    for cls in (EntityType, ConstraintType, NodeOp, EdgeOp):
        cls.__module__ = mod.__name__
        cls.__qualname__ = cls.__name__
        setattr(mod, cls.__name__, cls)
    return mod


def _flat_list(objects) -> np.ndarray:
    blobs = [lz4_frame.compress(pickle.dumps(o, protocol=4)) for o in objects]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in blobs])]).astype("<i8")
    head = np.array([sg.LIST_MAGIC, 2, len(blobs)], "<i8")
    return np.frombuffer(head.tobytes() + offsets.tobytes() + b"".join(blobs), np.int8)


def _flat_dict(entries: dict) -> np.ndarray:
    header, data, off = {}, b"", 0
    for key, arr in entries.items():
        header[key] = (off, len(arr), 2)
        data += arr.tobytes()
        off += len(arr)
    hbytes = pickle.dumps(header, protocol=4)
    head = np.array([sg.DICT_MAGIC, 1, len(hbytes)], "<i8").tobytes()
    return np.frombuffer(head + hbytes + data, np.int8)


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    mod = _fake_sketchgraphs_module()
    for name in ("sketchgraphs", "sketchgraphs.data", "sketchgraphs.data.sequence"):
        monkeypatch.setitem(sys.modules, name, mod if name.endswith("sequence")
                            else types.ModuleType(name))
    E, C, N, Ed = mod.EntityType, mod.ConstraintType, mod.NodeOp, mod.EdgeOp

    def line(x0, y0, x1, y1, cons=False):
        L = math.hypot(x1 - x0, y1 - y0)
        return N(E.Line, {"isConstruction": cons, "pntX": x0, "pntY": y0, "dirX": (x1 - x0) / L,
                          "dirY": (y1 - y0) / L, "startParam": 0.0, "endParam": L})

    square = [line(0, 0, 2, 0), line(2, 0, 2, 2), line(2, 2, 0, 2), line(0, 2, 0, 0),
              N(E.Circle, {"isConstruction": False, "xCenter": 1.0, "yCenter": 1.0, "xDir": 1.0,
                           "yDir": 0.0, "radius": 0.5, "clockwise": False}),
              N(E.Arc, {"isConstruction": True, "xCenter": 1.0, "yCenter": 1.0, "xDir": 0.0,
                        "yDir": 1.0, "radius": 0.8, "clockwise": False, "startParam": 0.0,
                        "endParam": math.pi / 2}),
              N(E.Point, {"isConstruction": False, "x": 1.0, "y": 1.0})]
    edges = [Ed(C.Coincident, (i, (i + 1) % 4)) for i in range(4)] + \
        [Ed(C.Horizontal, (0,)) for _ in range(4)]
    good = square + edges + [N(E.Stop)]
    few_constraints = square + edges[:2] + [N(E.Stop)]
    spline = square + [N(E.Spline, {})] + edges + [N(E.Stop)]
    seqs = [good, few_constraints, spline, good]                 # the last one: a duplicate
    path = tmp_path / "sg_t16_test.npy"
    np.save(path, _flat_dict({"sequences": _flat_list(seqs)}))
    monkeypatch.delitem(sys.modules, "sketchgraphs.data.sequence")   # the loader needs none
    return str(path)


def test_loader_reads_filters_normalises_and_deduplicates(fixture_file):
    x, info = sg.load(fixture_file, 10, min_primitives=4, max_primitives=10)
    assert info["read"] == 4 and info["kept"] == 1
    assert info["dropped"] == {"constraint count": 1, "entity Spline": 1, "duplicate": 1}
    s = sk.decode(x[0])
    kinds = sorted(q.kind for q in s)
    assert kinds == ["arc", "circle", "line", "line", "line", "line", "point"]
    lo, hi = sk.bounding_box(s)
    np.testing.assert_allclose([lo, hi], [[-1, -1], [1, 1]], atol=1e-6)
    circle = next(q for q in s if q.kind == "circle")
    assert circle.params == pytest.approx((0.0, 0.0, 0.5))
    arc = next(q for q in s if q.kind == "arc")                  # quarter arc from +y to −x
    assert arc.construction
    _, r, t0, sweep = sk.arc_center(arc.params)
    assert r == pytest.approx(0.8) and sweep == pytest.approx(math.pi / 2)
    assert math.sin(t0) == pytest.approx(1.0)


def test_loader_errors_are_clear(fixture_file, tmp_path):
    with pytest.raises(ValueError, match="no sketch passed the filters"):
        sg.load(fixture_file, 10, min_primitives=9, max_primitives=10)
    with pytest.raises(ValueError, match="exceeds num_slots"):
        sg.load(fixture_file, 5, min_primitives=4, max_primitives=8)
    bad = tmp_path / "other.npy"
    np.save(bad, np.zeros(64, np.int8))
    with pytest.raises(ValueError, match="not a SketchGraphs sequence file"):
        sg.load(str(bad), 10, min_primitives=4, max_primitives=10)
