"""Loader for SketchGraphs sequence files (`sg_t16_{train,validation,test}.npy`), notes A.2.

SketchGraphs is not on PyPI and cannot be downloaded here; a user who has the files can
train on them with `--config.data.source=sketchgraphs --config.data.sketchgraphs_path=...`.

File format (SketchGraphs `data/flat_array.py`): a numpy byte array holding a "flat
dictionary" (int64 magic 87374267, version 1, header length, pickled header
{key: (offset, length, kind)}), whose "sequences" entry is a flat array (int64 magic
−2356038617, version 2, count, offsets) of lz4-frame-compressed pickles, one per sketch:
a list of `NodeOp(label: EntityType, parameters: dict)` and `EdgeOp(label, references,
parameters)`. The pickles name classes of the `sketchgraphs` package; `_Unpickler` maps
them onto small local stand-ins, so neither that package nor PyTorch is needed (lz4 is:
`pip install lz4`).

Entity parameters (SketchGraphs' `_entity.py` [unverified against the package]):
    Line    pntX, pntY, dirX, dirY, startParam, endParam      (ends: pnt + param·dir)
    Circle  xCenter, yCenter, xDir, yDir, radius, clockwise
    Arc     the circle's + startParam, endParam (angles in the frame (xDir, yDir), the
            frame's y axis flipped when clockwise)
    Point   x, y;   every entity: isConstruction

Filters and normalisation follow the official `dataset.py`: 7..16 primitives (here
min/max_primitives), #constraints ≥ #primitives and ≤ 208, no degenerate lines or
zero-radius circles/arcs, only line/circle/arc/point entities; bounding box centred, longer
side spanning [-1, 1]; duplicates (slot tensors quantised to 256 levels) removed.
"""
from __future__ import annotations

import io
import math
import pickle
from typing import NamedTuple

import numpy as np

from lib.sketchdnn import sketch as sk
from lib.sketchdnn.sketch import Primitive, SketchError

LIST_MAGIC = -2356038617
DICT_MAGIC = 87374267
ENTITY_KINDS = {"Line": "line", "Circle": "circle", "Arc": "arc", "Point": "point"}
MAX_CONSTRAINTS = 208


class NodeOp(NamedTuple):
    label: object
    parameters: dict = {}


class EdgeOp(NamedTuple):
    label: object
    references: tuple = ()
    parameters: dict = {}


class Label:
    """Stand-in for SketchGraphs enums (EntityType, ConstraintType, ...): keeps the value."""

    def __init__(self, value=None, *args):
        self.value = value

    def __setstate__(self, state):
        self.state = state

    def __repr__(self):
        return f"Label({self.value!r})"


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith("sketchgraphs"):
            if name == "NodeOp":
                return NodeOp
            if name == "EdgeOp":
                return EdgeOp
            return Label
        if module in ("builtins", "collections", "copyreg", "_codecs") or \
                module.startswith("numpy"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a sketch file")


def _loads(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


def _i64(buf: np.ndarray, offset: int, count: int = 1):
    end = offset + 8 * count
    return np.frombuffer(buf[offset:end].tobytes(), "<i8"), end


def read_flat_list(buf: np.ndarray) -> list:
    """A SketchGraphs flat array (bytes) -> list of decompressed, unpickled objects."""
    import lz4.frame
    (magic,), off = _i64(buf, 0)
    if magic != LIST_MAGIC:
        raise ValueError("not a SketchGraphs flat array (magic bytes missing)")
    (version,), off = _i64(buf, off)
    if version != 2:
        raise ValueError(f"unsupported flat-array version {version} (expected 2)")
    (count,), off = _i64(buf, off)
    offsets, off = _i64(buf, off, count + 1)
    data = buf[off:]
    return [_loads(lz4.frame.decompress(data[offsets[i]:offsets[i + 1]].tobytes()))
            for i in range(count)]


def read_sequences(path: str) -> list:
    """The 'sequences' of a SketchGraphs sequence file (a flat dictionary or a flat list)."""
    buf = np.load(path, mmap_mode="r", allow_pickle=False)
    (magic,), off = _i64(buf, 0)
    if magic == LIST_MAGIC:
        return read_flat_list(buf)
    if magic != DICT_MAGIC:
        raise ValueError(f"{path}: not a SketchGraphs sequence file (unknown magic {magic})")
    (version,), off = _i64(buf, off)
    if version != 1:
        raise ValueError(f"{path}: unsupported flat-dictionary version {version}")
    (hlen,), off = _i64(buf, off)
    header = _loads(buf[off:off + hlen].tobytes())
    base = off + hlen
    if "sequences" not in header:
        raise ValueError(f"{path}: no 'sequences' entry (keys {sorted(header)})")
    start, length, kind = header["sequences"]
    if kind != 2:
        raise ValueError(f"{path}: 'sequences' is not a flat array (kind {kind})")
    return read_flat_list(buf[base + start:base + start + length])


def _label_name(label) -> str:
    value = getattr(label, "value", label)
    return str(value)


def entity_to_primitive(kind: str, p: dict) -> Primitive:
    """SketchGraphs entity parameters -> Primitive (raises SketchError if degenerate)."""
    cons = bool(p.get("isConstruction", False))
    if kind == "point":
        return Primitive("point", (p["x"], p["y"]), cons)
    if kind == "line":
        px, py, dx, dy = p["pntX"], p["pntY"], p["dirX"], p["dirY"]
        s, e = p["startParam"], p["endParam"]
        return Primitive("line", (px + s * dx, py + s * dy, px + e * dx, py + e * dy), cons)
    cx, cy, r = p["xCenter"], p["yCenter"], p["radius"]
    if kind == "circle":
        return Primitive("circle", (cx, cy, r), cons)
    base = math.atan2(p["yDir"], p["xDir"])
    s, e = p["startParam"], p["endParam"]
    if p.get("clockwise", False):       # clockwise frame: angles run the other way
        s, e = base - e, base - s
    else:
        s, e = base + s, base + e
    return Primitive("arc", sk.arc_from_center(cx, cy, r, s, e), cons)


def sequence_to_sketch(seq, min_primitives: int, max_primitives: int):
    """One construction sequence -> normalised sketch, or None (with the reason) if filtered."""
    prims, constraints = [], 0
    for op in seq:
        name = _label_name(op.label)
        if isinstance(op, EdgeOp):
            if name != "Stop":
                constraints += 1
            continue
        if name in ("Stop", "External"):
            continue
        if name not in ENTITY_KINDS:
            return None, f"entity {name}"
        try:
            prims.append(entity_to_primitive(ENTITY_KINDS[name], op.parameters))
        except SketchError:
            return None, "degenerate primitive"
    if not min_primitives <= len(prims) <= max_primitives:
        return None, "primitive count"
    if constraints < len(prims) or constraints > MAX_CONSTRAINTS:
        return None, "constraint count"
    try:
        return sk.normalize(prims), None
    except SketchError:
        return None, "degenerate primitive"


def load(path: str, num_slots: int, *, min_primitives: int, max_primitives: int,
         limit: int = 0) -> tuple[np.ndarray, dict]:
    """Encoded sketches (N, num_slots, 21) of a SketchGraphs file and the filter counts."""
    if max_primitives > num_slots:
        raise ValueError(f"max_primitives {max_primitives} exceeds num_slots {num_slots}")
    seqs = read_sequences(path)
    if limit:
        seqs = seqs[:limit]
    rows, dropped = [], {}
    for seq in seqs:
        s, why = sequence_to_sketch(seq, min_primitives, max_primitives)
        if s is None:
            dropped[why] = dropped.get(why, 0) + 1
        else:
            rows.append(sk.encode(s, num_slots))
    if not rows:
        raise ValueError(f"{path}: no sketch passed the filters ({dropped})")
    x = np.stack(rows)
    keys = np.round((x + 1) * 127.5).astype(np.int16).reshape(len(x), -1)
    _, first = np.unique(keys, axis=0, return_index=True)    # dedup at 256 levels (A.2)
    first = np.sort(first)
    dropped["duplicate"] = len(x) - len(first)
    return x[first], {"read": len(seqs), "kept": len(first), "dropped": dropped}
