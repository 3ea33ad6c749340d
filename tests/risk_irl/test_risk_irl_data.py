"""Environments and experts: the participants' file format, policy filling, the
non-Markovianity test, simulated experts."""
import os
import shutil

import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import data, returns

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "participants_fixture")


@pytest.fixture(scope="module")
def people():
    return data.load_participants(FIXTURE, n=100, horizon=5)


def test_fixture_participants_load(people):
    assert people.answers.shape == (3, 37) and people.policies.shape == (3, 5, 4, 501)
    assert people.checkpoints[0] == data.Checkpoint(0, 1, 0)
    assert people.checkpoints[-1] == data.Checkpoint(3, 3, 100)          # MDP_4_T_1000: 1000 €
    assert np.all(people.answers[0] == data.ACTIONS.index("a+"))


def test_policies_follow_the_filling_rules(people):
    pi = people.policies[2]
    assert np.all(pi[4] == data.ACTIONS.index("a-"))                  # last step: cash out
    assert np.all(pi[1:4, 0] == data.ACTIONS.index("a+"))            # state L: a+
    # step 3, state M answered at y = 0, 3, 6, 20 (columns 5..8): nearest, ties to the lower
    a = people.answers[2, 5:9]
    np.testing.assert_array_equal(pi[2, 1, [0, 1, 2, 3, 4, 5, 13, 14, 20, 300]],
                                  [a[0], a[0], a[1], a[1], a[1], a[2], a[2], a[3], a[3], a[3]])


def test_no_reachable_state_is_left_without_an_action(people):
    env = data.investment_mdp(100)
    for pi in people.policies:
        occ = returns.occupancy(env, jnp.asarray(np.maximum(pi, 0)), 100)
        assert float(np.asarray(occ[:-1])[pi < 0].sum()) == 0.0


def test_non_markovian_count(people):
    counts = data.non_markovian(people.answers, people.checkpoints)
    assert counts[0] == 0 and counts[1] == 0 and counts[2] > 0
    # (h, state) groups with several answers: M@2, M@3, H@3, M@4, H@4, T@4
    assert counts[2] == 6


def test_standard_gamble_utilities(people):
    u = people.sg_utilities
    assert u.shape == (3, 501) and np.all(u[:, 0] == 0) and np.allclose(u[:, -1], 5)
    assert np.all(np.diff(u, axis=1) >= 0)
    assert u[0, 10] == pytest.approx(5 * 0.1)                          # SG_100: 100 € = 0.1
    np.testing.assert_allclose(u[2], np.linspace(0, 5, 501), atol=1e-9)   # p(x) = x/5000: linear


@pytest.mark.parametrize("edit,message", [
    (lambda m, s: (m.replace("a0", "a1", 1), s), r"action 'a1' is not one of"),
    (lambda m, s: (m.replace("MDP_1_M_0", "MDP_1_X_0"), s), r"not of the form MDP_"),
    (lambda m, s: (m.replace("MDP_2_M_30", "MDP_2_M_35"), s), r"not a reachable checkpoint"),
    (lambda m, s: (m, s.replace("0.7", "1.7")), r"is not a probability"),
    (lambda m, s: (m, s.replace("SG_30", "SG_5")), r"must increase"),
])
def test_bad_participant_files_get_clear_errors(tmp_path, edit, message):
    mdp_text = open(os.path.join(FIXTURE, data.MDP_FILE)).read()
    sg_text = open(os.path.join(FIXTURE, data.SG_FILE)).read()
    mdp_text, sg_text = edit(mdp_text, sg_text)
    (tmp_path / data.MDP_FILE).write_text(mdp_text)
    (tmp_path / data.SG_FILE).write_text(sg_text)
    with pytest.raises(ValueError, match=message):
        data.load_participants(str(tmp_path))


def test_missing_files_name_the_config_key(tmp_path):
    shutil.copy(os.path.join(FIXTURE, data.MDP_FILE), tmp_path)
    with pytest.raises(FileNotFoundError, match="participants.data_dir"):
        data.load_participants(str(tmp_path))


def test_noisy_expert_changes_about_the_requested_fraction():
    pi = np.random.default_rng(0).integers(0, 3, size=(5, 10, 200))
    noisy = data.noisy_policy(pi, np.random.default_rng(1), 0.25, 3)
    changed = noisy != pi
    assert 0.22 < changed.mean() < 0.28
    np.testing.assert_array_equal(noisy[changed], np.where(pi[changed] == 0, 1, pi[changed] - 1))


def test_random_mdp_is_valid_and_seeded():
    a, b = data.random_mdp(3, 7, 2, 4, 10), data.random_mdp(3, 7, 2, 4, 10)
    np.testing.assert_array_equal(np.asarray(a.p), np.asarray(b.p))
    np.testing.assert_allclose(np.asarray(a.p).sum(-1), 1.0, atol=1e-5)
    assert int(a.s0) == 1 and np.all(np.asarray(a.k) <= 10)
