"""Procedural CAD-like sketches with the regularities of real ones (notes A.10).

Six families, each a closed or symmetric core plus optional groups of extras:

    rectangle          4 lines, closed; extras: corner holes, centre circle (+ concentric
                       ring), construction centre lines, centre point
    rounded_rectangle  4 lines + 4 tangent quarter arcs sharing end points; extras: holes
                       concentric with the fillets, construction centre lines, centre point
    slot               obround: 2 lines + 2 tangent half arcs; extras: concentric holes,
                       construction centre line, centre points
    bolt_circle        outer circle, construction pitch circle, N = 3..8 equal holes on it;
                       extras: bore (+ concentric ring), construction axes, centre point
    l_bracket          6 axis-aligned lines, closed; extras: holes, construction lines, points
    arch               3 lines + a half arc tangent to both sides (a tab); extras: concentric
                       hole, construction symmetry axis, centre point, base holes

Each sketch is optionally rotated by a multiple of 90° (stays axis-aligned), normalised
(bounding box centred, longer side spanning [-1, 1]), its primitives are placed in random
slots (the data are sets: the slot order carries no information) and encoded (`sketch.encode`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from lib.sketchdnn import sketch as sk
from lib.sketchdnn.sketch import Primitive

Group = list[Primitive]


def _line(a, b, cons=False) -> Primitive:
    return Primitive("line", (a[0], a[1], b[0], b[1]), cons)


def _circle(c, r, cons=False) -> Primitive:
    return Primitive("circle", (c[0], c[1], r), cons)


def _arc(c, r, start, end) -> Primitive:
    return Primitive("arc", sk.arc_from_center(c[0], c[1], r, start, end))


def _point(c) -> Primitive:
    return Primitive("point", (c[0], c[1]))


def _axes(cx, cy, w, h) -> Group:
    """Horizontal and vertical construction centre lines a little beyond the part."""
    return [_line((cx - 0.6 * w, cy), (cx + 0.6 * w, cy), True),
            _line((cx, cy - 0.6 * h), (cx, cy + 0.6 * h), True)]


def rectangle(rng) -> tuple[Group, list[Group]]:
    w, h = rng.uniform(1.0, 3.0), rng.uniform(0.6, 2.0)
    c = [(0, 0), (w, 0), (w, h), (0, h)]
    core = [_line(c[i], c[(i + 1) % 4]) for i in range(4)]
    m, r = 0.15 * min(w, h), 0.06 * min(w, h) * rng.uniform(0.8, 1.5)
    holes = [_circle((x, y), r) for x, y in ((m, m), (w - m, m), (w - m, h - m), (m, h - m))]
    rb = 0.2 * min(w, h)
    return core, [holes, [_circle((w / 2, h / 2), rb)], [_circle((w / 2, h / 2), 1.5 * rb)],
                  _axes(w / 2, h / 2, w, h), [_point((w / 2, h / 2))]]


def rounded_rectangle(rng) -> tuple[Group, list[Group]]:
    w, h = rng.uniform(1.0, 3.0), rng.uniform(0.8, 2.0)
    f = rng.uniform(0.1, 0.35) * min(w, h)
    core = [_line((f, 0), (w - f, 0)), _line((w, f), (w, h - f)),
            _line((w - f, h), (f, h)), _line((0, h - f), (0, f))]
    centres = [(w - f, f), (w - f, h - f), (f, h - f), (f, f)]
    for k, cc in enumerate(centres):          # tangent fillets sharing the lines' end points
        start = -math.pi / 2 + k * math.pi / 2
        core.append(_arc(cc, f, start, start + math.pi / 2))
    holes = [_circle(cc, 0.45 * f) for cc in centres]
    return core, [holes, _axes(w / 2, h / 2, w, h), [_point((w / 2, h / 2))]]


def slot(rng) -> tuple[Group, list[Group]]:
    length, r = rng.uniform(1.0, 3.0), rng.uniform(0.25, 0.6)
    a, b = (0.0, 0.0), (length, 0.0)
    core = [_line((0, -r), (length, -r)), _arc(b, r, -math.pi / 2, math.pi / 2),
            _line((length, r), (0, r)), _arc(a, r, math.pi / 2, 3 * math.pi / 2)]
    hr = r * rng.uniform(0.3, 0.6)
    return core, [[_circle(a, hr), _circle(b, hr)], [_line(a, b, True)],
                  [_point(a), _point(b)], [_line((length / 2, -1.4 * r), (length / 2, 1.4 * r),
                                                 True)]]


def bolt_circle(rng) -> tuple[Group, list[Group]]:
    big = rng.uniform(1.0, 2.0)
    pitch = big * rng.uniform(0.6, 0.75)
    n = int(rng.integers(3, 9))
    hole = min(0.1 * big, 0.8 * pitch * math.sin(math.pi / n))
    phase = rng.choice([0.0, math.pi / n])
    core = [_circle((0, 0), big), _circle((0, 0), pitch, True)]
    core += [_circle((pitch * math.cos(phase + 2 * math.pi * i / n),
                      pitch * math.sin(phase + 2 * math.pi * i / n)), hole) for i in range(n)]
    bore = big * rng.uniform(0.2, 0.35)
    return core, [[_circle((0, 0), bore)], [_circle((0, 0), 1.3 * bore)],
                  _axes(0, 0, 2 * big, 2 * big), [_point((0, 0))]]


def l_bracket(rng) -> tuple[Group, list[Group]]:
    w, h = rng.uniform(1.5, 3.0), rng.uniform(1.5, 3.0)
    t1, t2 = rng.uniform(0.25, 0.45) * h, rng.uniform(0.25, 0.45) * w
    p = [(0, 0), (w, 0), (w, t1), (t2, t1), (t2, h), (0, h)]
    core = [_line(p[i], p[(i + 1) % 6]) for i in range(6)]
    r = 0.25 * min(t1, t2)
    holes = [_circle(((w + t2) / 2, t1 / 2), r), _circle((t2 / 2, (h + t1) / 2), r)]
    return core, [holes, [_circle((t2 / 2, t1 / 2), r)],
                  [_line((0, t1 / 2), (w, t1 / 2), True), _line((t2 / 2, 0), (t2 / 2, h), True)],
                  [_point((t2, t1))]]


def arch(rng) -> tuple[Group, list[Group]]:
    r, h = rng.uniform(0.5, 1.0), rng.uniform(0.5, 2.0)
    core = [_line((-r, h), (-r, 0)), _line((-r, 0), (r, 0)), _line((r, 0), (r, h)),
            _arc((0, h), r, 0.0, math.pi)]
    hr = r * rng.uniform(0.3, 0.6)
    return core, [[_circle((0, h), hr)], [_line((0, -0.2 * h), (0, h + 1.2 * r), True)],
                  [_point((0, h))], [_circle((-r / 2, 0.25 * h), 0.12 * r),
                                     _circle((r / 2, 0.25 * h), 0.12 * r)]]


FAMILIES: dict[str, Callable] = {
    "rectangle": rectangle, "rounded_rectangle": rounded_rectangle, "slot": slot,
    "bolt_circle": bolt_circle, "l_bracket": l_bracket, "arch": arch}
# fewest primitives of a family's core (its smallest draw) and most with every extra group
# (its largest draw); checked by the config before any data are generated
FAMILY_SIZES = {"rectangle": (4, 13), "rounded_rectangle": (8, 15), "slot": (4, 10),
                "bolt_circle": (5, 15), "l_bracket": (6, 12), "arch": (4, 9)}


def _rotate90(sketch, k: int):
    """Rotate by k·90° about the origin (exact for k ∈ {0,1,2,3}; keeps orientation)."""
    out = []
    for q in sketch:
        p = list(q.params)
        pts = [(0, 1), (2, 3)] if q.kind in ("line", "arc") else [(0, 1)]
        for i, j in pts:
            x, y = p[i], p[j]
            for _ in range(k):
                x, y = -y, x
            p[i], p[j] = x, y
        out.append(Primitive(q.kind, tuple(p), q.construction))
    return tuple(out)


def sample_sketch(rng: np.random.Generator, family: str, min_primitives: int,
                  max_primitives: int, max_tries: int = 50) -> tuple[Primitive, ...]:
    """One normalised sketch of `family` with min..max primitives (groups of extras added
    in random order while they fit a uniformly drawn target count)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; expected one of {tuple(FAMILIES)}")
    for _ in range(max_tries):
        core, extras = FAMILIES[family](rng)
        if len(core) > max_primitives:
            continue
        target = int(rng.integers(min_primitives, max_primitives + 1))
        prims = list(core)
        for g in rng.permutation(len(extras)):
            if len(prims) + len(extras[g]) <= target:
                prims += extras[g]
        if len(prims) < min_primitives:
            continue
        return sk.normalize(_rotate90(prims, int(rng.integers(0, 4))))
    raise ValueError(f"family {family!r} cannot produce {min_primitives}..{max_primitives} "
                     f"primitives")


def generate(seed, num: int, num_slots: int, *, min_primitives: int, max_primitives: int,
             families: Sequence[str] = tuple(FAMILIES)) -> tuple[np.ndarray, np.ndarray]:
    """`num` encoded sketches -> (x (num, num_slots, SLOT_DIM) float32, family (num,) int32).

    Families are drawn uniformly; primitives go to random slots. Deterministic in `seed`
    (an int or a sequence of ints for np.random.default_rng).
    """
    if not 1 <= min_primitives <= max_primitives <= num_slots:
        raise ValueError(f"need 1 <= min_primitives ({min_primitives}) <= max_primitives "
                         f"({max_primitives}) <= num_slots ({num_slots})")
    rng = np.random.default_rng(seed)
    fam = rng.integers(0, len(families), num).astype(np.int32)
    x = np.empty((num, num_slots, sk.SLOT_DIM), np.float32)
    for i in range(num):
        s = sample_sketch(rng, families[fam[i]], min_primitives, max_primitives)
        x[i] = sk.encode(s, num_slots)[rng.permutation(num_slots)]
    return x, fam
