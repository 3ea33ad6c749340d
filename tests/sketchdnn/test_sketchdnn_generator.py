"""Procedural sketches: sizes, determinism, the regularities they promise, errors."""
import numpy as np
import pytest

from lib.sketchdnn import generator, metrics
from lib.sketchdnn import sketch as sk


def test_generated_sketches_are_normalised_closed_and_deterministic():
    x, fam = generator.generate([1, 2], 120, 12, min_primitives=5, max_primitives=12)
    x2, fam2 = generator.generate([1, 2], 120, 12, min_primitives=5, max_primitives=12)
    assert np.array_equal(x, x2) and np.array_equal(fam, fam2)
    assert set(fam) == set(range(len(generator.FAMILIES)))
    sketches = [sk.decode(r) for r in x]
    counts = [len(s) for s in sketches]
    assert min(counts) >= 5 and max(counts) <= 12
    for s in sketches:
        lo, hi = sk.bounding_box(s)
        assert max(hi - lo) == pytest.approx(2.0, abs=1e-4)
        np.testing.assert_allclose(lo + hi, 0, atol=1e-4)
    val = metrics.validity(sketches)
    assert val["dangling_fraction"] == 0.0 and val["closed_rate"] == 1.0
    assert val["construction_share"] > 0 and min(val["type_shares"]) > 0
    # none slots are spread over the slots (sets: the order carries no information)
    none_at = np.argmax(x[..., sk.TYPE_SLICE], -1) == sk.NONE
    assert none_at[:, 0].any() and none_at[:, -1].any()


def test_families_have_their_structure():
    rng = np.random.default_rng(0)
    bolt = generator.sample_sketch(rng, "bolt_circle", 5, 15)
    circles = [q for q in bolt if q.kind == "circle"]
    holes = [q for q in circles if not q.construction]
    pitch = [q for q in circles if q.construction]
    assert len(pitch) == 1
    c = np.array(pitch[0].params[:2])
    small = min(q.params[2] for q in holes)
    on_pitch = [q for q in holes if q.params[2] == pytest.approx(small)
                and np.linalg.norm(np.array(q.params[:2]) - c) == pytest.approx(pitch[0].params[2])]
    assert len(on_pitch) >= 3
    rr = generator.sample_sketch(rng, "rounded_rectangle", 8, 8)
    arcs = [q for q in rr if q.kind == "arc"]
    assert len(arcs) == 4 and all(q.params[4] > 0 for q in arcs)        # quarter (minor) arcs
    for q in rr:                                                         # axis-aligned lines
        if q.kind == "line":
            assert min(abs(q.params[2] - q.params[0]), abs(q.params[3] - q.params[1])) < 1e-9


def test_bad_generator_requests_are_refused():
    with pytest.raises(ValueError, match="min_primitives"):
        generator.generate(0, 2, 6, min_primitives=5, max_primitives=8)
    with pytest.raises(ValueError, match="unknown family"):
        generator.sample_sketch(np.random.default_rng(0), "gear", 4, 8)
    with pytest.raises(ValueError, match="cannot produce"):
        generator.sample_sketch(np.random.default_rng(0), "rounded_rectangle", 4, 6)
