"""Procedural point-cloud classes: primitives and composite objects sampled on their surfaces.

    pts = sample_class("chair", rng, num_points=512)     # (512, 3) float32, unit sphere
    CLASSES                                              # the 25 class names, in a fixed order

Every class is a function `rng -> list[Part]` that draws its own shape parameters (a table's
leg length, a lamp's shade angle, ...); a `Part` is a surface patch with its area and a
sampler `(rng, m) -> (m, 3)`. `sample_surface` spreads the points over the parts in
proportion to their areas (multinomial), so the density is uniform over the whole surface.
`sample_class` then applies a random anisotropic scale (each axis in [1 - s, 1 + s]), a
random rotation about the up axis z and a small tilt (|tilt| ≤ `tilt_deg` about x and y),
and normalises the cloud to zero centroid and unit maximum radius (the ModelNet/ShapeNet
convention). An unknown class name is a ValueError listing the known ones.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np


class Part(NamedTuple):
    area: float
    sample: Callable[[np.random.Generator, int], np.ndarray]   # (rng, m) -> (m, 3)


# ----------------------------------------------------------------------------- primitives

def _axis(points: np.ndarray, axis: str) -> np.ndarray:
    """Points built along z, re-oriented so that their axis is `axis` (x, y or z)."""
    return {"z": points, "x": points[:, [2, 1, 0]], "y": points[:, [0, 2, 1]]}[axis]


def box(center, size) -> Part:
    """Surface of an axis-aligned box with side lengths `size` = (sx, sy, sz)."""
    c, s = np.asarray(center, float), np.asarray(size, float)
    faces = np.array([s[1] * s[2], s[1] * s[2], s[0] * s[2], s[0] * s[2], s[0] * s[1], s[0] * s[1]])

    def sample(rng, m):
        f = rng.choice(6, size=m, p=faces / faces.sum())
        u = rng.uniform(-0.5, 0.5, size=(m, 3))
        ax = f // 2
        u[np.arange(m), ax] = np.where(f % 2 == 0, -0.5, 0.5)
        return c + u * s
    return Part(float(faces.sum()), sample)


def triangle(a, b, c) -> Part:
    """A flat triangle with corners a, b, c (uniform by the square-root rule)."""
    a, b, c = (np.asarray(v, float) for v in (a, b, c))
    area = 0.5 * float(np.linalg.norm(np.cross(b - a, c - a)))

    def sample(rng, m):
        r1, r2 = np.sqrt(rng.uniform(size=(m, 1))), rng.uniform(size=(m, 1))
        return (1 - r1) * a + r1 * (1 - r2) * b + r1 * r2 * c
    return Part(area, sample)


def disk(center, radius, axis="z") -> Part:
    c = np.asarray(center, float)

    def sample(rng, m):
        r, t = radius * np.sqrt(rng.uniform(size=m)), rng.uniform(0, 2 * np.pi, m)
        return c + _axis(np.stack([r * np.cos(t), r * np.sin(t), np.zeros(m)], 1), axis)
    return Part(math.pi * radius ** 2, sample)


def frustum(center, r_bottom, r_top, height, axis="z") -> Part:
    """Open lateral surface of a cone frustum (a cylinder when r_bottom = r_top, a cone when
    r_top = 0), bottom at center - height/2 along `axis`. Heights are drawn with density
    proportional to the radius (rejection), which makes the surface density uniform."""
    c = np.asarray(center, float)
    slant = math.hypot(height, r_bottom - r_top)
    rmax = max(r_bottom, r_top)

    def sample(rng, m):
        out = np.empty((0, 3))
        while len(out) < m:
            t = rng.uniform(size=2 * m + 8)
            t = t[rng.uniform(size=t.size) * rmax <= r_bottom + (r_top - r_bottom) * t]
            r = r_bottom + (r_top - r_bottom) * t
            phi = rng.uniform(0, 2 * np.pi, t.size)
            z = (t - 0.5) * height
            out = np.concatenate([out, np.stack([r * np.cos(phi), r * np.sin(phi), z], 1)])
        return c + _axis(out[:m], axis)
    return Part(math.pi * (r_bottom + r_top) * slant, sample)


def cylinder(center, radius, height, axis="z", caps=True) -> list[Part]:
    c = np.asarray(center, float)
    parts = [frustum(c, radius, radius, height, axis)]
    if caps:
        off = _axis(np.array([[0.0, 0.0, height / 2]]), axis)[0]
        parts += [disk(c - off, radius, axis), disk(c + off, radius, axis)]
    return parts


def ellipsoid(center, radii, z_range=(-1.0, 1.0)) -> Part:
    """Ellipsoid surface (directions uniform on the sphere, then scaled; a near-uniform
    density for moderate aspect ratios); `z_range` keeps a band of the unit sphere's z
    (e.g. (-1, 0) for a bowl). Area by Knud Thomsen's formula times the band fraction."""
    c, a = np.asarray(center, float), np.asarray(radii, float)
    p = 1.6075
    full = 4 * math.pi * (((a[0] * a[1]) ** p + (a[0] * a[2]) ** p + (a[1] * a[2]) ** p) / 3) ** (1 / p)
    lo, hi = z_range

    def sample(rng, m):
        z = rng.uniform(lo, hi, m)                      # Archimedes: z uniform on the sphere
        phi = rng.uniform(0, 2 * np.pi, m)
        r = np.sqrt(np.clip(1 - z ** 2, 0, None))
        return c + np.stack([r * np.cos(phi), r * np.sin(phi), z], 1) * a
    return Part(full * (hi - lo) / 2, sample)


def torus(center, major, minor, axis="z") -> Part:
    c = np.asarray(center, float)

    def sample(rng, m):
        out = np.empty((0, 3))
        while len(out) < m:
            th, ph = rng.uniform(0, 2 * np.pi, (2, 2 * m + 8))
            keep = rng.uniform(size=th.size) * (major + minor) <= major + minor * np.cos(ph)
            th, ph = th[keep], ph[keep]
            rr = major + minor * np.cos(ph)
            out = np.concatenate([out, np.stack([rr * np.cos(th), rr * np.sin(th),
                                                 minor * np.sin(ph)], 1)])
        return c + _axis(out[:m], axis)
    return Part(4 * math.pi ** 2 * major * minor, sample)


def _flat(*groups) -> list[Part]:
    out = []
    for g in groups:
        out += g if isinstance(g, list) else [g]
    return out


# ----------------------------------------------------------------------------- classes

def _sphere(r):
    return [ellipsoid((0, 0, 0), (1, 1, 1))]


def _ellipsoid_cls(r):
    return [ellipsoid((0, 0, 0), (1.0, r.uniform(0.45, 0.7), r.uniform(0.25, 0.45)))]


def _cube(r):
    return [box((0, 0, 0), (1, 1, 1) * r.uniform(0.9, 1.1, 3))]


def _cylinder(r):
    return cylinder((0, 0, 0), r.uniform(0.3, 0.5), r.uniform(1.2, 2.0))


def _cone(r):
    rad, h = r.uniform(0.4, 0.7), r.uniform(1.0, 1.6)
    return [frustum((0, 0, 0), rad, 0.0, h), disk((0, 0, -h / 2), rad)]


def _torus(r):
    return [torus((0, 0, 0), 1.0, r.uniform(0.2, 0.35))]


def _capsule(r):
    rad, h = r.uniform(0.25, 0.4), r.uniform(1.0, 1.6)
    return _flat(cylinder((0, 0, 0), rad, h, caps=False),
                 ellipsoid((0, 0, h / 2), (rad,) * 3, (0, 1)),
                 ellipsoid((0, 0, -h / 2), (rad,) * 3, (-1, 0)))


def _pyramid(r):
    b, h = r.uniform(0.8, 1.2), r.uniform(0.8, 1.4)
    corners = [(-b / 2, -b / 2, 0), (b / 2, -b / 2, 0), (b / 2, b / 2, 0), (-b / 2, b / 2, 0)]
    apex = (0, 0, h)
    return [box((0, 0, 0), (b, b, 1e-3))] + [triangle(corners[i], corners[(i + 1) % 4], apex)
                                              for i in range(4)]


def _legs(r, w, d, h, thick, z0=0.0):
    return [box((sx * (w / 2 - thick), sy * (d / 2 - thick), z0 + h / 2), (thick, thick, h))
            for sx in (-1, 1) for sy in (-1, 1)]


def _table(r):
    w, d, h = r.uniform(1.2, 2.0), r.uniform(0.7, 1.1), r.uniform(0.6, 0.9)
    t = r.uniform(0.04, 0.08)
    return [box((0, 0, h), (w, d, t))] + _legs(r, w, d, h, r.uniform(0.05, 0.09))


def _stool(r):
    rad, h = r.uniform(0.25, 0.35), r.uniform(0.6, 0.9)
    legs = [cylinder((0.7 * rad * np.cos(a), 0.7 * rad * np.sin(a), h / 2), 0.03, h, caps=False)
            for a in np.linspace(0, 2 * np.pi, 4)[:3] + r.uniform(0, 1)]
    return _flat(cylinder((0, 0, h), rad, 0.06), *legs)


def _chair(r):
    w, h = r.uniform(0.5, 0.7), r.uniform(0.4, 0.55)
    back = r.uniform(0.5, 0.8)
    return ([box((0, 0, h), (w, w, 0.06)), box((0, -w / 2 + 0.03, h + back / 2), (w, 0.05, back))]
            + _legs(r, w, w, h, 0.05))


def _bench(r):
    w, d, h = r.uniform(1.6, 2.4), r.uniform(0.35, 0.5), r.uniform(0.4, 0.5)
    return [box((0, 0, h), (w, d, 0.06)), box((-w / 2 + 0.05, 0, h / 2), (0.06, d, h)),
            box((w / 2 - 0.05, 0, h / 2), (0.06, d, h))]


def _sofa(r):
    w, d = r.uniform(1.6, 2.2), r.uniform(0.8, 1.0)
    return [box((0, 0, 0.25), (w, d, 0.4)), box((0, -d / 2 + 0.1, 0.6), (w, 0.2, 0.7)),
            box((-w / 2 + 0.1, 0, 0.45), (0.2, d, 0.5)), box((w / 2 - 0.1, 0, 0.45), (0.2, d, 0.5))]


def _bed(r):
    w, d = r.uniform(1.8, 2.2), r.uniform(1.2, 1.6)
    head = r.uniform(0.5, 0.8)
    return [box((0, 0, 0.3), (w, d, 0.3)), box((-w / 2, 0, head / 2), (0.08, d, head))]


def _shelf(r):
    w, d, h = r.uniform(0.8, 1.2), r.uniform(0.3, 0.4), r.uniform(1.6, 2.0)
    n = int(r.integers(3, 6))
    parts = [box((-w / 2, 0, h / 2), (0.04, d, h)), box((w / 2, 0, h / 2), (0.04, d, h)),
             box((0, d / 2, h / 2), (w, 0.02, h))]
    return parts + [box((0, 0, z), (w, d, 0.03)) for z in np.linspace(0.02, h, n)]


def _lamp(r):
    h = r.uniform(1.0, 1.5)
    shade_r0, shade_r1 = r.uniform(0.3, 0.45), r.uniform(0.12, 0.2)
    return _flat(cylinder((0, 0, 0.02), r.uniform(0.2, 0.3), 0.04), cylinder((0, 0, h / 2), 0.025, h, caps=False),
                 frustum((0, 0, h), shade_r0, shade_r1, r.uniform(0.25, 0.4)))


def _mug(r):
    rad, h = r.uniform(0.3, 0.4), r.uniform(0.6, 0.9)
    return _flat(frustum((0, 0, h / 2), rad, rad, h), disk((0, 0, 0), rad),
                 torus((rad + 0.12, 0, h / 2), 0.16, 0.035, axis="y"))


def _bottle(r):
    rad, h, neck = r.uniform(0.25, 0.35), r.uniform(0.9, 1.3), r.uniform(0.3, 0.5)
    nr = r.uniform(0.07, 0.11)
    return _flat(cylinder((0, 0, h / 2), rad, h), frustum((0, 0, h + 0.1), rad, nr, 0.2),
                 cylinder((0, 0, h + 0.2 + neck / 2), nr, neck, caps=False))


def _bowl(r):
    rad = r.uniform(0.8, 1.0)
    return [ellipsoid((0, 0, 0), (rad, rad, rad * r.uniform(0.5, 0.8)), (-1.0, 0.0)),
            disk((0, 0, -rad * 0.5), rad * 0.3)]


def _airplane(r):
    length, span = r.uniform(2.0, 2.6), r.uniform(1.8, 2.6)
    fr = r.uniform(0.12, 0.18)
    return _flat(cylinder((0, 0, 0), fr, length, axis="x"),
                 frustum((length / 2 + 0.15, 0, 0), fr, 0.02, 0.3, axis="x"),
                 box((r.uniform(-0.1, 0.2), 0, 0), (0.4, span, 0.04)),
                 box((-length / 2 + 0.15, 0, 0), (0.2, 0.7, 0.03)),
                 box((-length / 2 + 0.15, 0, 0.2), (0.2, 0.03, 0.4)))


def _rocket(r):
    rad, h = r.uniform(0.18, 0.25), r.uniform(1.6, 2.2)
    fins = [box((rad * np.cos(a), rad * np.sin(a), -h / 2 + 0.15),
                (0.3 * abs(np.cos(a)) + 0.02, 0.3 * abs(np.sin(a)) + 0.02, 0.3))
            for a in (0, np.pi / 2, np.pi, 3 * np.pi / 2)]
    return _flat(cylinder((0, 0, 0), rad, h), frustum((0, 0, h / 2 + 0.25), rad, 0.0, 0.5), *fins)


def _dumbbell(r):
    bar, w = r.uniform(1.0, 1.4), r.uniform(0.3, 0.45)
    return _flat(cylinder((0, 0, 0), 0.05, bar, axis="x", caps=False),
                 cylinder((-bar / 2, 0, 0), w, 0.2, axis="x"), cylinder((bar / 2, 0, 0), w, 0.2, axis="x"))


def _car(r):
    w, d, h = r.uniform(1.8, 2.4), r.uniform(0.8, 1.0), r.uniform(0.35, 0.5)
    wr = r.uniform(0.18, 0.24)
    wheels = [cylinder((sx * w / 3, sy * d / 2, wr), wr, 0.12, axis="y")
              for sx in (-1, 1) for sy in (-1, 1)]
    return _flat(box((0, 0, wr + h / 2), (w, d, h)),
                 box((-0.1 * w, 0, wr + h + 0.17), (0.5 * w, 0.9 * d, 0.35)), *wheels)


def _house(r):
    w, d, h = r.uniform(1.2, 1.6), r.uniform(1.0, 1.3), r.uniform(0.8, 1.1)
    roof = r.uniform(0.4, 0.7)
    a, b = (-w / 2, -d / 2, h), (w / 2, -d / 2, h)
    c, e = (w / 2, d / 2, h), (-w / 2, d / 2, h)
    top1, top2 = (-w / 2, 0, h + roof), (w / 2, 0, h + roof)
    return [box((0, 0, h / 2), (w, d, h)), triangle(a, b, top2), triangle(a, top2, top1),
            triangle(e, c, top2), triangle(e, top2, top1), triangle(a, e, top1), triangle(b, c, top2)]


def _umbrella(r):
    rad, h = r.uniform(0.9, 1.2), r.uniform(1.2, 1.6)
    return _flat(frustum((0, 0, h), rad, 0.0, r.uniform(0.25, 0.4)),
                 cylinder((0, 0, h / 2), 0.025, h, caps=False),
                 torus((0.1, 0, 0.05), 0.1, 0.02, axis="y"))


def _ladder(r):
    w, h = r.uniform(0.4, 0.6), r.uniform(1.8, 2.4)
    n = int(r.integers(5, 9))
    rails = [box((sx * w / 2, 0, h / 2), (0.05, 0.05, h)) for sx in (-1, 1)]
    return rails + [cylinder((0, 0, z), 0.02, w, axis="x", caps=False)[0]
                    for z in np.linspace(0.2, h - 0.1, n)]


_BUILDERS: dict[str, Callable[[np.random.Generator], list[Part]]] = {
    "sphere": _sphere, "cube": _cube, "cylinder": _cylinder, "cone": _cone, "torus": _torus,
    "table": _table, "chair": _chair, "lamp": _lamp, "airplane": _airplane, "bottle": _bottle,
    "mug": _mug, "bed": _bed, "stool": _stool, "dumbbell": _dumbbell, "car": _car,
    "bench": _bench, "house": _house, "rocket": _rocket, "bowl": _bowl, "capsule": _capsule,
    "bookshelf": _shelf, "umbrella": _umbrella, "ladder": _ladder, "pyramid": _pyramid,
    "sofa": _sofa, "ellipsoid": _ellipsoid_cls,
}
CLASSES: tuple[str, ...] = tuple(_BUILDERS)


def check_class(name: str) -> None:
    if name not in _BUILDERS:
        raise ValueError(f"unknown point-cloud class {name!r}; known classes: {', '.join(CLASSES)}")


def sample_surface(parts: list[Part], rng: np.random.Generator, num_points: int) -> np.ndarray:
    """(num_points, 3): a multinomial split of the points over parts by area, then each
    part's sampler; shuffled so that the point order carries no part information."""
    areas = np.array([p.area for p in parts], float)
    counts = rng.multinomial(num_points, areas / areas.sum())
    pts = np.concatenate([p.sample(rng, m) for p, m in zip(parts, counts) if m > 0])
    return pts[rng.permutation(num_points)]


def rotation(rng: np.random.Generator, tilt_deg: float) -> np.ndarray:
    """(3, 3): rotation about z by a uniform angle, then tilts about x and y in ±tilt_deg."""
    a = rng.uniform(0, 2 * np.pi)
    tx, ty = np.deg2rad(rng.uniform(-tilt_deg, tilt_deg, 2))
    rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, np.cos(tx), -np.sin(tx)], [0, np.sin(tx), np.cos(tx)]])
    ry = np.array([[np.cos(ty), 0, np.sin(ty)], [0, 1, 0], [-np.sin(ty), 0, np.cos(ty)]])
    return ry @ rx @ rz


def normalise(points: np.ndarray) -> np.ndarray:
    """Zero centroid, maximum distance to the centroid 1."""
    p = points - points.mean(axis=0)
    return p / max(float(np.linalg.norm(p, axis=1).max()), 1e-12)


def sample_class(name: str, rng: np.random.Generator, num_points: int, *,
                 scale_jitter: float = 0.2, tilt_deg: float = 10.0) -> np.ndarray:
    """(num_points, 3) float32: one random instance of class `name` (see module docstring)."""
    check_class(name)
    pts = sample_surface(_BUILDERS[name](rng), rng, num_points)
    pts = pts * rng.uniform(1 - scale_jitter, 1 + scale_jitter, 3)
    pts = pts @ rotation(rng, tilt_deg).T
    return normalise(pts).astype(np.float32)
