"""`corrector_every` (Corr once per RK stage, micro step or macro step): each option is the
classical FD + RK4 solver when the networks output zero, and with a nonzero corrector each one
is the RK4 step it claims to be; the config key, and old workdirs without it."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import config as config_lib, workdir as wd
from lib.common.config import ConfigError
from lib.multipdenet import config_schema, model as mp
from lib.multipdenet.runs import run_config

N, DT = 16, 0.02
NET = {"arch": "fno", "modes": 4, "width": 6, "depth": 1, "projection_width": 8}


def _state(batch=2):
    g = np.arange(N) * 2 * np.pi / N
    x, y = np.meshgrid(g, g, indexing="xy")
    u = np.stack([np.sin(x) * np.cos(y) + 0.3, np.cos(x + 2 * y)], -1)
    return jnp.asarray(np.stack([u * (1 + 0.5 * b) for b in range(batch)]), jnp.float32)


def _model(every, **kw):
    return mp.make_model("navier_stokes", 2 * np.pi / N, DT, n_micro=2, corrector=NET,
                         micro_net=NET, macro_net=NET, corrector_every=every, **kw)


@pytest.mark.parametrize("every", mp.CORRECTOR_EVERY)
def test_every_option_is_classical_solver_when_networks_output_zero(every):
    u0 = _state()
    classical = mp.make_model("navier_stokes", 2 * np.pi / N, DT, n_micro=2, filter_mode="frozen",
                              corrector=None, micro_net=None, macro_net=None)
    want = jax.jit(lambda p, u: mp.rollout(classical, p, u, 2))(classical.init(jax.random.key(0), u0), u0)
    model = _model(every)  # zero-initialised output layers, symmetric filters at θ = 0
    got = jax.jit(lambda p, u: mp.rollout(model, p, u, 2))(model.init(jax.random.key(0), u0), u0)
    assert float(jnp.abs(want[-1] - u0).max()) > 1e-2  # the state moves well past the tolerance
    np.testing.assert_allclose(got, want, atol=1e-5)


def _corrector_on(model, u0):
    """Parameters with a nonzero corrector output (its last layer no longer zero)."""
    params = model.init(jax.random.key(0), u0)
    out = params["params"]["corrector"]["project_out"]
    out["kernel"] = 0.05 * jax.random.normal(jax.random.key(7), out["kernel"].shape)
    return params


def _rk4_held(model, params, u, c, dt):
    f = lambda v: model.apply(params, v, c, method=mp.MultiPDENet.rhs_corrected_by)  # noqa: E731
    k1 = f(u)
    k2 = f(u + dt / 2 * k1)
    k3 = f(u + dt / 2 * k2)
    k4 = f(u + dt * k3)
    return u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _minn(model, params, u):
    return model.apply(params, u, method=mp.MultiPDENet.micro_correction)


def test_micro_and_macro_hold_the_correction_as_documented():
    u0 = _state()
    dt = DT / 2
    model_micro, model_macro, model_stage = _model("micro"), _model("macro"), _model("stage")
    params = _corrector_on(model_micro, u0)
    corr = lambda p, u: model_micro.apply(p, u, method=mp.MultiPDENet.correction)  # noqa: E731
    step = {m.corrector_every: jax.jit(lambda p, u, m=m: mp.macro_step(m, p, u))
            for m in (model_stage, model_micro, model_macro)}

    @jax.jit
    def by_hand(p, u0):
        # micro: Corr at the start of each micro step, held over its four stages
        u = u0
        for _ in range(2):
            u = _rk4_held(model_micro, p, u, corr(p, u), dt) + dt * _minn(model_micro, p, u)
        # macro: Corr(u_k) for both micro steps
        c, v = corr(p, u0), u0
        for _ in range(2):
            v = _rk4_held(model_macro, p, v, c, dt) + dt * _minn(model_macro, p, v)
        return u, v

    want_micro, want_macro = by_hand(params, u0)
    np.testing.assert_allclose(step["micro"](params, u0), want_micro, atol=2e-5)
    np.testing.assert_allclose(step["macro"](params, u0), want_macro, atol=2e-5)
    # and the three options differ once the corrector is on
    steps = [step[every](params, u0) for every in ("stage", "micro", "macro")]
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert float(jnp.abs(steps[a] - steps[b]).max()) > 1e-5


def test_corrector_every_errors():
    with pytest.raises(ValueError, match="corrector_every = 'rk_stage'"):
        _model("rk_stage")
    with pytest.raises(ValueError, match="stencil_impl = 'fft'"):
        _model("stage", stencil_impl="fft")
    config = config_lib.load_config("configs/multipdenet/navier_stokes.py:tiny")
    assert config.model.corrector_every == "stage"  # the paper's stays the default
    bad = config_lib.apply_overrides(config, {"model.corrector_every": "always"})
    with pytest.raises(ConfigError, match="model.corrector_every"):
        config_schema.validate(bad)


def test_workdir_written_before_the_key_resumes_and_loads(tmp_path):
    config = config_lib.load_config("configs/multipdenet/navier_stokes.py:tiny")
    old = config_lib.to_json_dict(config)
    del old["model"]["corrector_every"]
    workdir = str(tmp_path)
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(workdir, wd.CONFIG), "w") as f:
        json.dump(old, f)
    loaded = run_config(workdir)
    assert loaded.model.corrector_every == "stage"
    config_schema.validate(loaded)
    wd.prepare(workdir, config_lib.to_json_dict(config), added=config_schema.ADDED_KEYS)  # resumes
    micro = config_lib.apply_overrides(config, {"model.corrector_every": "micro"})
    with pytest.raises(ValueError, match="corrector_every"):
        wd.prepare(workdir, config_lib.to_json_dict(micro), added=config_schema.ADDED_KEYS)
