"""`checkpoint.save_params` / `load_params`: the committed-weights file format."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import checkpoint


def _tree():
    return {"dense": {"kernel": jnp.arange(6.0).reshape(2, 3), "bias": jnp.ones(3)},
            "blocks": [jnp.zeros((2,), jnp.int32), jnp.full((1, 1), 2.5, jnp.float16)]}


def test_round_trip_keeps_structure_values_and_dtypes(tmp_path):
    path = str(tmp_path / "params.npz")
    checkpoint.save_params(path, _tree())
    like = jax.eval_shape(_tree)
    back = checkpoint.load_params(path, like)
    assert jax.tree.structure(back) == jax.tree.structure(_tree())
    for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(_tree())):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, np.asarray(b))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp_")]


def test_a_changed_model_is_named_in_one_line(tmp_path):
    path = str(tmp_path / "params.npz")
    checkpoint.save_params(path, _tree())
    changed = _tree()
    changed["dense"]["kernel"] = jnp.zeros((2, 4))
    del changed["dense"]["bias"]
    with pytest.raises(checkpoint.CheckpointMismatch) as err:
        checkpoint.load_params(path, changed)
    msg = str(err.value)
    assert "\n" not in msg and path in msg
    assert "dense.kernel: stored (2, 3) float32, the model has (2, 4) float32" in msg
    assert "dense.bias: stored (3,) float32, not in the model" in msg
    with pytest.raises(FileNotFoundError, match="nope.npz: no such parameter file"):
        checkpoint.load_params(str(tmp_path / "nope.npz"), changed)
