"""`model.stencil_init` and `train.freeze_stencils`: the fd4_taps stencils start at given knobs
(the classical `fd4_tuned` program) and stay there while only the networks train."""
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from lib.common.config import ConfigError
from lib.multipdenet import classical, model as mpn_model, training


def _model():
    return mpn_model.make_model("navier_stokes", h=2 * np.pi / 16, macro_dt=0.05, n_micro=2,
                                filter_layout="fd4_taps", corrector=None, micro_net=None,
                                macro_net={"arch": "unet", "features": (4,)})


def _u():
    rng = np.random.default_rng(0)
    return jnp.asarray(rng.normal(size=(2, 16, 16, 2)), jnp.float32)


def test_stencil_init_sets_the_knobs_and_reproduces_the_classical_stencils():
    model, u = _model(), _u()
    params = model.init(jax.random.PRNGKey(0), u)
    cfg = ml_collections.ConfigDict({"stencil_init": (0.04, -1.0)})
    started = training.initial_stencils(params, cfg)
    f = started["params"]["filters"]
    np.testing.assert_array_equal(f["first_order"], np.float32([0.04]))
    np.testing.assert_array_equal(f["second_order"], np.float32([-1.0]))
    # the same filters as fd4_tuned's at (θ, φ) = (−1, 0.04): one program
    expect = classical.stencil_params(-1.0, 0.04)["params"]["filters"]
    for k in ("first_order", "second_order"):
        np.testing.assert_allclose(f[k], expect[k])
    # the networks' parameters are untouched; None leaves everything as it was
    assert jax.tree.all(jax.tree.map(lambda a, b: bool(jnp.all(a == b)),
                                     params["params"]["macro_net"], started["params"]["macro_net"]))
    none = training.initial_stencils(params, ml_collections.ConfigDict({"stencil_init": None}))
    assert none is params


def test_frozen_stencils_get_zero_gradient_and_the_networks_keep_theirs():
    model, u = _model(), _u()
    params = training.initial_stencils(model.init(jax.random.PRNGKey(0), u),
                                       ml_collections.ConfigDict({"stencil_init": (0.04, -1.0)}))
    target = u[:, None] * 0.9

    def loss(p):
        return jnp.mean((mpn_model.rollout(model, p, u, 1)[0] - target[:, 0]) ** 2)

    grads = jax.grad(loss)(params)
    assert float(jnp.abs(grads["params"]["filters"]["second_order"]).sum()) > 0
    frozen = training.freeze_stencils(grads)
    for v in jax.tree.leaves(frozen["params"]["filters"]):
        assert float(jnp.abs(v).sum()) == 0.0
    out = frozen["params"]["macro_net"]
    assert sum(float(jnp.abs(v).sum()) for v in jax.tree.leaves(out)) > 0


def test_stencil_init_needs_the_fd4_taps_layout():
    from configs.multipdenet import navier_stokes
    from lib.multipdenet.config_schema import validate
    from lib.common import config as config_lib
    cfg = config_lib.apply_overrides(navier_stokes.get_config("tiny"), {"model.stencil_init": (0.04, -1.0)})
    with pytest.raises(ConfigError, match="model.stencil_init"):
        validate(cfg)
    ok = config_lib.apply_overrides(cfg, {"model.filter_layout": "fd4_taps"})
    validate(ok)
    bad = config_lib.apply_overrides(ok, {"model.stencil_init": (0.04,)})
    with pytest.raises(ConfigError, match="model.stencil_init"):
        validate(bad)
