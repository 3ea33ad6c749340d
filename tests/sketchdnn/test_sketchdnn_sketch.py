"""Sketch representation: domains, slot codec, isosceles arcs, text and PNG round trips."""
import math
import os

import numpy as np
import pytest

from lib.sketchdnn import generator
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.sketch import Primitive, SketchError

SAMPLE = (Primitive("line", (0.1, 0.2, 0.3, 0.4)),
          Primitive("circle", (0.0, 0.0, 0.5), construction=True),
          Primitive("arc", (-1.0, 0.0, 1.0, 0.0, -1.25)),
          Primitive("point", (0.3, -0.7)))


def test_text_round_trip_is_exact_on_generated_sketches():
    x, _ = generator.generate(3, 20, 12, min_primitives=4, max_primitives=12)
    for row in x:
        s = sk.decode(row)
        assert sk.parse_text(sk.to_text(s)) == s
    assert sk.parse_text(sk.to_text(SAMPLE)) == SAMPLE
    text = "# a comment\nsketch 1\n  point 1 2   # trailing\n"
    assert sk.parse_text(text) == (Primitive("point", (1.0, 2.0)),)


def test_slot_encoding_round_trip_and_layout():
    x = sk.encode(SAMPLE, 6)
    assert x.shape == (6, sk.SLOT_DIM) == (6, 21)
    assert np.all(x[4:, sk.NUM_FLAGS + sk.NONE] == 1) and np.all(x[4:, sk.PARAM_SLICE] == 0)
    assert x[1, 1] == 1 and x[0, 0] == 1                       # construction flag one-hot
    assert np.array_equal(x[2, 7 + 7:7 + 12], np.float32([-1, 0, 1, 0, -1.25]))
    np.testing.assert_array_equal(sk.param_mask(x).sum(1), [4, 3, 5, 2, 0, 0])
    assert sk.decode(x) == tuple(Primitive(q.kind, tuple(np.float32(q.params)), q.construction)
                                 for q in SAMPLE)


@pytest.mark.parametrize("start,end", [(0.3, 1.2), (2.0, 0.5), (-3.0, 2.9), (1.0, 1.0 + math.pi)])
def test_isosceles_arc_round_trip(start, end):
    p = sk.arc_from_center(0.2, -0.1, 0.7, start, end)
    c, r, t0, sweep = sk.arc_center(p)
    np.testing.assert_allclose(c, [0.2, -0.1], atol=1e-12)
    assert r == pytest.approx(0.7)
    assert math.cos(t0) == pytest.approx(math.cos(start)) and \
        math.sin(t0) == pytest.approx(math.sin(start))
    assert sweep == pytest.approx((end - start) % (2 * math.pi))
    # the sign of the radius tells minor (> 0) from major (< 0) arcs
    assert (p[4] > 0) == (sweep <= math.pi)


def test_normalize_centres_and_scales_the_bounding_box():
    s = sk.normalize((Primitive("circle", (5.0, 5.0, 2.0)), Primitive("line", (3, 5, 11, 5))))
    lo, hi = sk.bounding_box(s)
    np.testing.assert_allclose(lo + hi, 0, atol=1e-6)
    assert max(hi - lo) == pytest.approx(2.0, abs=1e-6)


@pytest.mark.parametrize("kind,params,match", [
    ("circle", (0, 0, -0.1), "radius must be > 0"),
    ("circle", (0, 0, 0.0), "radius must be > 0"),
    ("arc", (0, 0, 1, 0, 0.3), "below half its chord"),
    ("line", (0.5, 0.5, 0.5, 0.5), "degenerate"),
    ("point", (0.0, float("nan")), "non-finite"),
    ("circle", (0, 0), "takes 3 parameters"),
    ("spline", (0, 0), "unknown primitive type"),
])
def test_primitives_outside_their_domain_are_refused(kind, params, match):
    with pytest.raises(SketchError, match=match):
        Primitive(kind, params)


def test_bad_inputs_get_clear_errors():
    with pytest.raises(SketchError, match="4 primitives but only 3 slots"):
        sk.encode(SAMPLE, 3)
    with pytest.raises(SketchError, match="line 3: circle .* radius must be > 0"):
        sk.parse_text("sketch 2\npoint 0 0\ncircle 0 0 -1\n")
    with pytest.raises(SketchError, match="announces 3 primitives, found 1"):
        sk.parse_text("sketch 3\npoint 0 0\n")
    with pytest.raises(SketchError, match="header line"):
        sk.parse_text("point 0 0\n")
    with pytest.raises(SketchError, match="non-numeric"):
        sk.parse_text("sketch 1\npoint 0 x\n")
    with pytest.raises(SketchError, match="shape"):
        sk.decode(np.zeros((3, 20)))


def test_decode_repairs_model_output_only_when_asked():
    x = sk.encode((Primitive("arc", (-1.0, 0.0, 1.0, 0.0, 1.0)),), 2)
    x[0, 7 + 11] = 0.2                                        # |r_s| below half the chord
    with pytest.raises(SketchError, match="below half its chord"):
        sk.decode(x)
    s, fixed = sk.decode(x, repair=True)
    assert fixed == 1 and s[0].params[4] == pytest.approx(1.0)


def test_render_png_writes_an_image(tmp_path):
    path = sk.render_png(str(tmp_path / "grid.png"), [SAMPLE, SAMPLE[:2]], titles=["a", "b"])
    assert os.path.getsize(path) > 1000
    with pytest.raises(SketchError, match="nothing to render"):
        sk.render_png(str(tmp_path / "empty.png"), [])
