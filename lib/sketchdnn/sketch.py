"""CAD sketch representation: a set of primitive slots (notes A.2), text format, rendering.

A sketch is a tuple of `Primitive`s. Each primitive has a kind in
{line, circle, arc, point}, a construction flag and its own parameters:

    line    (x1, y1, x2, y2)             start and end point
    circle  (cx, cy, r)                  r > 0
    arc     (x1, y1, x2, y2, r_s)        "isosceles" form: start a, end b, signed radius;
                                         the arc runs counter-clockwise from a to b,
                                         |r_s| ≥ |b − a| / 2; r_s > 0 puts the centre left of
                                         a→b (the minor arc), r_s < 0 right (the major arc)
    point   (x, y)

Slot tensor (one row per slot, `SLOT_DIM` = 21 columns, the official code's layout):

    [0:2]   construction flag, one-hot (0 regular, 1 construction)
    [2:7]   type one-hot over TYPES = (line, circle, arc, point, none); empty slots are none
    [7:21]  parameters: line [7:11], circle [11:14], arc [14:19], point [19:21]
            (columns of the other types are 0; `param_mask` marks the active ones)

Text format (one primitive a line, '#' comments allowed):

    sketch 3
    line 0.1 0.2 0.3 0.4
    circle 0 0 0.5 construction
    arc -1 0 1 0 1

Every constructor checks its domain and raises `SketchError` (a ValueError) naming the
primitive, the value and the rule.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

TYPES = ("line", "circle", "arc", "point", "none")
NUM_TYPES = len(TYPES)
NONE = TYPES.index("none")
NUM_FLAGS = 2
PARAM_SIZES = {"line": 4, "circle": 3, "arc": 5, "point": 2}
NUM_PARAMS = sum(PARAM_SIZES.values())          # 14
SLOT_DIM = NUM_FLAGS + NUM_TYPES + NUM_PARAMS   # 21
FLAG_SLICE = slice(0, NUM_FLAGS)
TYPE_SLICE = slice(NUM_FLAGS, NUM_FLAGS + NUM_TYPES)
PARAM_SLICE = slice(NUM_FLAGS + NUM_TYPES, SLOT_DIM)


def _param_offsets() -> dict[str, tuple[int, int]]:
    out, start = {}, 0
    for kind, size in PARAM_SIZES.items():
        out[kind] = (start, start + size)
        start += size
    return out


PARAM_OFFSETS = _param_offsets()                # offsets inside the 14 parameter columns
# (NUM_TYPES, NUM_PARAMS) 0/1: which parameter columns belong to each type (none: no column)
TYPE_PARAM_MASK = np.zeros((NUM_TYPES, NUM_PARAMS), np.float32)
for _i, _kind in enumerate(TYPES[:-1]):
    TYPE_PARAM_MASK[_i, slice(*PARAM_OFFSETS[_kind])] = 1.0

MIN_LENGTH = 1e-6   # shortest line / arc chord and smallest radius accepted


class SketchError(ValueError):
    """A primitive outside its domain, a malformed text line, or too many primitives."""


@dataclasses.dataclass(frozen=True)
class Primitive:
    kind: str
    params: tuple[float, ...]
    construction: bool = False

    def __post_init__(self):
        check_primitive(self.kind, self.params)
        object.__setattr__(self, "params", tuple(float(p) for p in self.params))


def check_primitive(kind: str, params) -> None:
    """Raise `SketchError` unless `params` lie in the domain of primitive `kind`."""
    if kind not in PARAM_SIZES:
        raise SketchError(f"unknown primitive type {kind!r}; expected one of "
                          f"{tuple(PARAM_SIZES)}")
    p = tuple(params)
    if len(p) != PARAM_SIZES[kind]:
        raise SketchError(f"{kind} takes {PARAM_SIZES[kind]} parameters, got {len(p)}: {p}")
    if not all(math.isfinite(float(v)) for v in p):
        raise SketchError(f"{kind} has a non-finite parameter: {p}")
    if kind == "line" and math.hypot(p[2] - p[0], p[3] - p[1]) < MIN_LENGTH:
        raise SketchError(f"line {p} is degenerate: its end points coincide")
    if kind == "circle" and p[2] < MIN_LENGTH:
        raise SketchError(f"circle {p} has radius {p[2]}; the radius must be > 0")
    if kind == "arc":
        chord = math.hypot(p[2] - p[0], p[3] - p[1])
        if chord < MIN_LENGTH:
            raise SketchError(f"arc {p} is degenerate: its end points coincide")
        if abs(p[4]) < chord / 2 * (1 - 1e-9):
            raise SketchError(f"arc {p} has |radius| {abs(p[4]):.6g} below half its chord "
                              f"{chord / 2:.6g}; no circle passes through both ends")


# ----------------------------------------------------------------------------- arcs


def arc_center(p) -> tuple[np.ndarray, float, float, float]:
    """Isosceles arc (x1, y1, x2, y2, r_s) -> (centre (2,), radius, start angle, sweep > 0)."""
    a, b, rs = np.array(p[:2], float), np.array(p[2:4], float), float(p[4])
    mid, d = (a + b) / 2, b - a
    half = np.linalg.norm(d) / 2
    r = abs(rs)
    h = math.sqrt(max(r * r - half * half, 0.0))
    left = np.array([-d[1], d[0]]) / (2 * half)
    c = mid + math.copysign(h, rs) * left
    t0 = math.atan2(a[1] - c[1], a[0] - c[0])
    t1 = math.atan2(b[1] - c[1], b[0] - c[0])
    sweep = (t1 - t0) % (2 * math.pi)
    return c, r, t0, sweep


def arc_from_center(cx: float, cy: float, r: float, start: float, end: float) -> tuple:
    """Counter-clockwise arc from angle `start` to `end` (radians) -> isosceles parameters."""
    sweep = (end - start) % (2 * math.pi)
    a = (cx + r * math.cos(start), cy + r * math.sin(start))
    b = (cx + r * math.cos(end), cy + r * math.sin(end))
    return (*a, *b, r if sweep <= math.pi else -r)


def endpoints(prim: Primitive) -> list[tuple[float, float]]:
    """End points of a line or an arc (none for circles and points)."""
    if prim.kind in ("line", "arc"):
        return [tuple(prim.params[:2]), tuple(prim.params[2:4])]
    return []


def curve_points(prim: Primitive, n: int = 64) -> np.ndarray:
    """(n, 2) points along the primitive (a point primitive repeats its location)."""
    s = np.linspace(0.0, 1.0, n)
    p = prim.params
    if prim.kind == "line":
        return np.stack([p[0] + s * (p[2] - p[0]), p[1] + s * (p[3] - p[1])], -1)
    if prim.kind == "circle":
        ang = 2 * np.pi * s
        return np.stack([p[0] + p[2] * np.cos(ang), p[1] + p[2] * np.sin(ang)], -1)
    if prim.kind == "arc":
        c, r, t0, sweep = arc_center(p)
        ang = t0 + sweep * s
        return np.stack([c[0] + r * np.cos(ang), c[1] + r * np.sin(ang)], -1)
    return np.tile(np.array(p, float), (n, 1))


# ----------------------------------------------------------------------------- geometry


def bounding_box(sketch) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned (lo (2,), hi (2,)) of the sketch, arc and circle extents included."""
    pts = np.concatenate([curve_points(q, 181) for q in sketch], 0)
    return pts.min(0), pts.max(0)


def transform(sketch, scale: float, shift) -> tuple[Primitive, ...]:
    """x -> scale·x + shift for every primitive (scale > 0 keeps arc orientation)."""
    if not scale > 0:
        raise SketchError(f"scale must be > 0, got {scale}")
    sx, sy = float(shift[0]), float(shift[1])
    out = []
    for q in sketch:
        p = list(q.params)
        if q.kind == "line":
            p = [scale * p[0] + sx, scale * p[1] + sy, scale * p[2] + sx, scale * p[3] + sy]
        elif q.kind == "circle":
            p = [scale * p[0] + sx, scale * p[1] + sy, scale * p[2]]
        elif q.kind == "arc":
            p = [scale * p[0] + sx, scale * p[1] + sy, scale * p[2] + sx, scale * p[3] + sy,
                 scale * p[4]]
        else:
            p = [scale * p[0] + sx, scale * p[1] + sy]
        out.append(Primitive(q.kind, tuple(p), q.construction))
    return tuple(out)


def normalize(sketch) -> tuple[Primitive, ...]:
    """Centre the bounding box at 0 and scale its longer side to span [-1, 1] (notes A.2)."""
    if not sketch:
        raise SketchError("cannot normalise an empty sketch")
    lo, hi = bounding_box(sketch)
    side = float(np.max(hi - lo))
    if side < MIN_LENGTH:
        raise SketchError("cannot normalise a sketch whose bounding box is a point")
    s = 2.0 / side
    return transform(sketch, s, -s * (lo + hi) / 2)


# ----------------------------------------------------------------------------- slot tensor


def encode(sketch, num_slots: int) -> np.ndarray:
    """Sketch -> (num_slots, SLOT_DIM) float32; empty slots are type none, flag regular."""
    if len(sketch) > num_slots:
        raise SketchError(f"sketch has {len(sketch)} primitives but only {num_slots} slots")
    x = np.zeros((num_slots, SLOT_DIM), np.float32)
    x[:, 0] = 1.0
    x[:, NUM_FLAGS + NONE] = 1.0
    for i, q in enumerate(sketch):
        if not isinstance(q, Primitive):
            raise SketchError(f"slot {i}: expected a Primitive, got {type(q).__name__}")
        t = TYPES.index(q.kind)
        x[i, FLAG_SLICE] = (0.0, 1.0) if q.construction else (1.0, 0.0)
        x[i, TYPE_SLICE] = 0.0
        x[i, NUM_FLAGS + t] = 1.0
        lo, hi = PARAM_OFFSETS[q.kind]
        x[i, PARAM_SLICE.start + lo:PARAM_SLICE.start + hi] = q.params
    return x


def param_mask(x: np.ndarray) -> np.ndarray:
    """(..., S, SLOT_DIM) with one-hot types -> (..., S, NUM_PARAMS) active-parameter mask."""
    return np.asarray(x)[..., TYPE_SLICE] @ TYPE_PARAM_MASK


def repair_params(kind: str, p) -> tuple[tuple[float, ...], bool]:
    """Project generated parameters into the domain of `kind`: (params, changed?).

    Lines/arc chords shorter than MIN_LENGTH are lengthened along x, radii clipped to
    ≥ MIN_LENGTH, arc |r_s| raised to half the chord. Used only on model samples, and every
    change is counted by `decode(..., repair=True)`.
    """
    p = [float(v) if math.isfinite(float(v)) else 0.0 for v in p]
    changed = False
    if kind in ("line", "arc") and math.hypot(p[2] - p[0], p[3] - p[1]) < MIN_LENGTH:
        p[2] = p[0] + 2 * MIN_LENGTH
        changed = True
    if kind == "circle" and p[2] < MIN_LENGTH:
        p[2], changed = max(abs(p[2]), MIN_LENGTH), True
    if kind == "arc":
        half = math.hypot(p[2] - p[0], p[3] - p[1]) / 2
        if abs(p[4]) < half:
            p[4], changed = math.copysign(half, p[4] if p[4] != 0 else 1.0), True
    return tuple(p), changed


def decode(x: np.ndarray, *, repair: bool = False):
    """(S, SLOT_DIM) slot tensor (one-hots or probabilities) -> tuple of Primitives.

    Type = argmax, construction iff p(construction) > 0.5, parameters from the type's
    columns. With repair=False a parameter outside its domain raises `SketchError`; with
    repair=True it is projected (`repair_params`) and the result is (sketch, num_repaired).
    """
    x = np.asarray(x, np.float64)
    if x.ndim != 2 or x.shape[1] != SLOT_DIM:
        raise SketchError(f"slot tensor must have shape (S, {SLOT_DIM}), got {x.shape}")
    out, fixed = [], 0
    for row in x:
        t = int(np.argmax(row[TYPE_SLICE]))
        if t == NONE:
            continue
        kind = TYPES[t]
        lo, hi = PARAM_OFFSETS[kind]
        p = row[PARAM_SLICE][lo:hi]
        if repair:
            p, changed = repair_params(kind, p)
            fixed += changed
        out.append(Primitive(kind, tuple(p), bool(row[1] > row[0])))
    return (tuple(out), fixed) if repair else tuple(out)


# ----------------------------------------------------------------------------- text format


def to_text(sketch, digits: int | None = None) -> str:
    """Human-readable text (see module docstring). Values are written with `digits`
    significant digits, or (None) in Python's shortest exact form, so parsing gives back
    the identical sketch."""
    lines = [f"sketch {len(sketch)}"]
    for q in sketch:
        vals = " ".join(repr(float(v)) if digits is None else f"{v:.{digits}g}"
                        for v in q.params)
        lines.append(f"{q.kind} {vals}" + (" construction" if q.construction else ""))
    return "\n".join(lines) + "\n"


def parse_text(text: str) -> tuple[Primitive, ...]:
    """Inverse of `to_text`; errors name the line number and the problem."""
    rows = []
    for num, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            rows.append((num, line.split()))
    if not rows or rows[0][1][0] != "sketch" or len(rows[0][1]) != 2:
        raise SketchError("text must start with a header line 'sketch N'")
    try:
        count = int(rows[0][1][1])
    except ValueError as e:
        raise SketchError(f"line {rows[0][0]}: bad primitive count {rows[0][1][1]!r}") from e
    prims = []
    for num, tok in rows[1:]:
        construction = tok[-1] == "construction"
        if construction:
            tok = tok[:-1]
        try:
            vals = tuple(float(v) for v in tok[1:])
        except ValueError as e:
            raise SketchError(f"line {num}: non-numeric parameter in {' '.join(tok)!r}") from e
        try:
            prims.append(Primitive(tok[0], vals, construction))
        except SketchError as e:
            raise SketchError(f"line {num}: {e}") from e
    if len(prims) != count:
        raise SketchError(f"header announces {count} primitives, found {len(prims)}")
    return tuple(prims)


# ----------------------------------------------------------------------------- rendering


def draw(ax, sketch, *, color: str = "k", lw: float = 1.2) -> None:
    """Draw a sketch on a matplotlib axis (construction geometry dashed, points as dots)."""
    for q in sketch:
        style = {"color": "tab:blue" if q.construction else color,
                 "lw": lw * 0.8 if q.construction else lw, "ls": "--" if q.construction else "-"}
        if q.kind == "point":
            ax.plot([q.params[0]], [q.params[1]], "o", ms=2.5, color=style["color"])
        else:
            pts = curve_points(q, 96)
            ax.plot(pts[:, 0], pts[:, 1], **style)
    ax.set_aspect("equal")
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xticks([])
    ax.set_yticks([])


def render_png(path: str, sketches, *, titles=(), cols: int = 8, title: str = "") -> str:
    """Save a grid of sketches as a PNG through `lib.toolbox.plotting.save`; returns path."""
    import matplotlib.pyplot as plt

    from lib.toolbox import plotting
    n = len(sketches)
    if n == 0:
        raise SketchError("nothing to render")
    cols = min(cols, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols, 1.6 * rows + (0.3 if title else 0)),
                             squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i < n:
            draw(ax, sketches[i])
            if i < len(titles):
                ax.set_title(titles[i], fontsize=7)
        else:
            ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return plotting.save(fig, path)
