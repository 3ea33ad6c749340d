"""AST mutations and the Pass@K / Best@K estimator."""
import numpy as np
import pytest

from lib.swe_gym import mutations, scaling, templates

SRC = '''def f(items, k=2, name="a"):
    if k > 3:
        return items[k - 1:]
    elif k < 0:
        return []
    total = g(k, 1)
    return total
'''


def _by_kind(kind):
    return [m for m in mutations.sites(SRC, "m.py") if m.kind == kind]


def test_each_kind_has_the_expected_edit():
    assert {m.new for m in _by_kind("flip_comparison")} == {"k >= 3", "k <= 0"}
    assert {m.new for m in _by_kind("swapped_arguments")} == {"g(1, k)"}
    assert {m.new for m in _by_kind("wrong_default")} == {"3", "1", "''", "'-'"}
    assert {m.old for m in _by_kind("off_by_one")} == {"3", "1", "0"}
    dropped = _by_kind("dropped_branch")
    assert len(dropped) == 1 and dropped[0].old.startswith("    elif k < 0:")
    out = mutations.apply(SRC, dropped)
    assert "elif" not in out and mutations.compiles(out)


def test_apply_is_reversible_and_checks_spans():
    for m in mutations.sites(SRC, "m.py"):
        bug = mutations.apply(SRC, [m])
        assert mutations.compiles(bug)
        inverse = mutations.Mutation(m.kind, m.path, m.func, m.lineno, m.col,
                                     m.lineno + m.new.count("\n") if m.new else m.lineno,
                                     m.end_col, m.new, m.old)
        if m.kind != "dropped_branch" and "\n" not in m.new:
            inverse = mutations.Mutation(m.kind, m.path, m.func, m.lineno, m.col, m.lineno,
                                         m.col + len(m.new), m.new, m.old)
            assert mutations.apply(bug, [inverse]) == SRC
    a, b = _by_kind("flip_comparison")
    assert mutations.apply(mutations.apply(SRC, [a, b]), []) == mutations.apply(SRC, [b, a])
    with pytest.raises(ValueError, match="does not match"):
        mutations.apply(SRC.replace("k > 3", "k > 4"), [a])


def test_every_template_function_has_sites_and_runs():
    for theme, funcs in templates.THEMES.items():
        src = "\n\n".join(f.source for f in funcs)
        found = mutations.sites(src, f"{theme}.py")
        assert {m.func for m in found} == {f.name for f in funcs}


def test_pass_at_k_subsampling_matches_closed_form_and_best_at_k():
    rng = np.random.default_rng(0)
    resolved = rng.random((40, 16)) < 0.2
    for k in (1, 4, 16):
        est = scaling.subsample_at_k(resolved, resolved.astype(float), k, num_subsamples=300)
        assert abs(est["pass_mean"] - scaling.pass_at_k_exact(resolved, k)) < 0.02
        assert est["best_mean"] == pytest.approx(est["pass_mean"])   # a perfect verifier
    const = scaling.subsample_at_k(resolved, np.zeros_like(resolved, float), 16)
    assert const["best_mean"] == pytest.approx(resolved[:, 0].mean()) and const["best_std"] < 1e-12
    assert scaling.pass_at_k_exact(np.array([[True, False]]), 1) == 0.5
    with pytest.raises(ValueError, match="K = 17"):
        scaling.subsample_at_k(resolved, resolved, 17)
