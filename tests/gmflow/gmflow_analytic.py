"""The analytic test case shared by the GMFlow tests: a 2-D Gaussian-mixture data set."""
import jax.numpy as jnp
import numpy as np

from lib.gmflow.mixture import GM

CENTRES = np.array([[-1.5, -1.5], [-1.5, 1.5], [1.5, -1.5], [1.5, 1.5], [0.0, 0.0]], np.float32)
WEIGHTS = np.array([0.3, 0.1, 0.2, 0.15, 0.25], np.float32)
STD = 0.2


def data_gm() -> GM:
    """5 components, unequal weights, std 0.2, as a GM with G = 1, C = 2 and no batch dims."""
    return GM(jnp.asarray(CENTRES[:, None, :]), jnp.log(jnp.asarray(WEIGHTS))[:, None],
              jnp.asarray(np.log(STD), jnp.float32))


def data_samples(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(WEIGHTS), size=n, p=WEIGHTS / WEIGHTS.sum())
    return (CENTRES[idx] + STD * rng.standard_normal((n, 2))).astype(np.float32)
