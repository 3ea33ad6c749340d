"""Shared fixtures of the SWE-Gym tests: one small generated repository and its instances."""
import pytest

from lib.swe_gym import generate, repos, runtime

SPEC = repos.RepoSpec("testkit", {"numeric": ("clamp", "normalize", "safe_div", "mean")})


@pytest.fixture(scope="session")
def gym(tmp_path_factory):
    """(store, cache, instances): a repository with validated flip / swap instances."""
    store = str(tmp_path_factory.mktemp("store"))
    cache = runtime.TestCache()
    stats = generate.GenStats()
    insts = generate.generate_repo(SPEC, store, num_candidates=3,
                                   kinds=("flip_comparison", "swapped_arguments"), seed=3,
                                   cache=cache, stats=stats)
    assert insts, stats
    return store, cache, insts
