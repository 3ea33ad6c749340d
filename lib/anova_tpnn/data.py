"""Tabular data for ANOVA-TPNN: synthetic sets with known ANOVA components, sklearn sets.

Every loader returns a `Dataset`: a train/validation/test split (the test split is
`test_fraction` of all rows; the validation split is `val_fraction` of the rest — 0.125
gives the official code's ≈ 70/10/20), features checked (`check_features`) and
quantile-transformed to [−1, 1] (fitted on the training rows only), regression targets
standardised with the training mean/std, binary labels as 0/1 floats. The validation rows
are used only to select each replica's parameters (best validation loss); the test rows
only for the reported metrics.

Data sets (`NAMES`):
  synth_reg   y = f(x) + N(0, noise²), x ~ U(−1, 1)^p, f = `SYNTH_MAINS` + `SYNTH_PAIRS`
  synth_clf   y ~ Bernoulli(sigmoid(f(x))), the same f (the logit)
  diabetes    sklearn diabetes, 442 × 10, regression
  breast_cancer  sklearn WDBC, 569 × 30, classification (the first `breast_features`
              columns: 10 = the ten per-nucleus means)
  madelon     sklearn make_classification (the Madelon generator): few informative,
              some redundant, many pure-noise features

Known components. For the synthetic sets the "true" components are the functional ANOVA
decomposition of f under the product of the training sample's empirical marginals — the
same measure μ_n on which ANOVA-TPNN's constraint holds — computed exactly
(`true_components`), in standardised target units, at the test rows.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

NAMES = ("synth_reg", "synth_clf", "diabetes", "breast_cancer", "madelon")
TASKS = {"synth_reg": "regression", "synth_clf": "classification", "diabetes": "regression",
         "breast_cancer": "classification", "madelon": "classification"}

SYNTH_FEATURES = 8
# salt of the replica-subsample stream: a run's draws are rng(seed + RESAMPLE_STREAM)
RESAMPLE_STREAM = 101
SYNTH_MAINS: dict[int, Callable] = {
    0: lambda a: 1.5 * np.sin(np.pi * a),
    1: lambda a: 2.0 * a ** 2,
    2: lambda a: np.exp(a),
    3: lambda a: 1.5 * a,
}
SYNTH_PAIRS: dict[tuple[int, int], Callable] = {
    (0, 1): lambda a, b: 2.0 * a * b,
    (2, 3): lambda a, b: 1.5 * np.sin(np.pi * (a + b) / 2),
    (4, 5): lambda a, b: 2.0 * np.maximum(a, 0.0) * b,
}   # features 6 and 7 are pure noise


@dataclasses.dataclass(frozen=True)
class Dataset:
    """x_*: (n, p) float32 in [−1, 1]; y_*: (n,) float32; `truth` for synthetic sets only:
    {feature tuple: (n_test,) true component at the test rows, standardised units}.
    x_val/y_val have 0 rows when no validation split was asked for (val_fraction = 0)."""

    name: str
    task: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple
    y_mean: float = 0.0
    y_std: float = 1.0
    truth: dict | None = None
    x_train_raw: np.ndarray | None = None   # synthetic sets: training rows before the
                                            # quantile transform (the true f's inputs)

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]


def check_features(x: np.ndarray, names) -> None:
    """ValueError naming the offending features for NaN/inf values or a constant column."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"features must be a 2-D array with at least 2 rows, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        cols = [str(names[j]) for j in np.flatnonzero(bad.any(axis=0))]
        raise ValueError(f"feature(s) {cols} contain NaN or infinite values "
                         f"({int(bad.sum())} entries); impute or drop them first")
    const = np.flatnonzero(np.ptp(x, axis=0) == 0)
    if len(const):
        cols = [str(names[j]) for j in const]
        raise ValueError(f"feature(s) {cols} are constant on the training sample; drop them "
                         "(a constant feature has no ANOVA component: its sum-to-zero factor "
                         "is identically zero)")


def quantile_transform(x_train: np.ndarray, *others: np.ndarray, seed: int = 0
                       ) -> tuple[np.ndarray, ...]:
    """sklearn QuantileTransformer (uniform output) fitted on x_train, mapped to [−1, 1];
    returns x_train and every array of `others` transformed (an empty array stays empty)."""
    from sklearn.preprocessing import QuantileTransformer
    qt = QuantileTransformer(n_quantiles=min(1000, len(x_train)),
                             output_distribution="uniform", random_state=seed)
    qt.fit(x_train)
    return tuple((2 * qt.transform(x) - 1).astype(np.float32) if len(x)
                 else np.zeros((0, x_train.shape[1]), np.float32) for x in (x_train, *others))


# ----------------------------------------------------------------------------- synthetic


def synth_function(x: np.ndarray) -> np.ndarray:
    """f(x) = Σ_j g_j(x_j) + Σ_{jk} g_jk(x_j, x_k), (n,)."""
    out = np.zeros(len(x))
    for j, g in SYNTH_MAINS.items():
        out += g(x[:, j])
    for (j, k), g in SYNTH_PAIRS.items():
        out += g(x[:, j], x[:, k])
    return out


def true_components(x_eval: np.ndarray, x_train: np.ndarray) -> tuple[float, dict]:
    """Exact functional ANOVA of f under μ_n = ∏_j (empirical marginal of x_train[:, j]).

    For a pair term g(x_j, x_k): with E_j = mean over training x_j values (x_k fixed) etc.,
    the pair component is g − E_j g − E_k g + E_jk g, main j gains E_k g − E_jk g, main k
    gains E_j g − E_jk g and the intercept E_jk g. Main terms are centred the same way.
    Returns (intercept, {feature tuple: (n_eval,)}).
    """
    comps: dict = {}
    intercept = 0.0

    def add(key, v):
        comps[key] = comps.get(key, 0.0) + v

    for j, g in SYNTH_MAINS.items():
        mean = float(np.mean(g(x_train[:, j])))
        add((j,), g(x_eval[:, j]) - mean)
        intercept += mean
    for (j, k), g in SYNTH_PAIRS.items():
        tj, tk = x_train[:, j], x_train[:, k]
        e_j = np.mean(g(tj[None, :], x_eval[:, k][:, None]), axis=1)     # integrate x_j
        e_k = np.mean(g(x_eval[:, j][:, None], tk[None, :]), axis=1)     # integrate x_k
        e_jk = float(np.mean(g(tj[:, None], tk[None, :])))
        add((j, k), g(x_eval[:, j], x_eval[:, k]) - e_j - e_k + e_jk)
        add((j,), e_k - e_jk)
        add((k,), e_j - e_jk)
        intercept += e_jk
    return intercept, comps


def _synthetic(name: str, n: int, noise: float, test_fraction: float, val_fraction: float,
               seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, SYNTH_FEATURES))
    f = synth_function(x)
    if name == "synth_reg":
        y = f + noise * rng.standard_normal(n)
    else:
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-f))).astype(np.float64)
    n_test = int(round(test_fraction * n))
    n_val = int(round(val_fraction * (n - n_test)))          # rows are i.i.d.: cut in order
    x_te, x_va, x_tr = x[:n_test], x[n_test:n_test + n_val], x[n_test + n_val:]
    y_te, y_va, y_tr = y[:n_test], y[n_test:n_test + n_val], y[n_test + n_val:]
    names = tuple(f"x{j}" for j in range(SYNTH_FEATURES))
    ds = _finish(name, (x_tr, y_tr), (x_va, y_va), (x_te, y_te), names, seed)
    _, comps = true_components(x_te, x_tr)
    truth = {key: (v / ds.y_std).astype(np.float32) for key, v in comps.items()}
    return dataclasses.replace(ds, truth=truth, x_train_raw=x_tr)


# ----------------------------------------------------------------------------- sklearn


def _finish(name, train, val, test, names, seed) -> Dataset:
    """train/val/test: (x, y) raw pairs -> Dataset (checks, transform, standardisation)."""
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = train, val, test
    check_features(x_tr, names)
    check_features(x_te, names)
    task = TASKS[name]
    if task == "classification" and not set(np.unique(y_tr)) <= {0.0, 1.0}:
        raise ValueError(f"{name}: classification labels must be 0/1, got {np.unique(y_tr)}")
    xq_tr, xq_va, xq_te = quantile_transform(x_tr, x_va, x_te, seed=seed)
    y_mean, y_std = 0.0, 1.0
    if task == "regression":
        y_mean, y_std = float(np.mean(y_tr)), float(np.std(y_tr))

    def std(y):
        return ((np.asarray(y, np.float64) - y_mean) / y_std).astype(np.float32)

    return Dataset(name, task, xq_tr, std(y_tr), xq_va, std(y_va), xq_te, std(y_te),
                   tuple(names), y_mean, y_std)


def _split(name, x, y, names, test_fraction, val_fraction, seed) -> Dataset:
    """Stratified (classification) random test split, then the validation split out of
    the rest."""
    from sklearn.model_selection import train_test_split
    check_features(x, names)
    y = np.asarray(y, np.float64)
    classification = TASKS[name] == "classification"
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_fraction, random_state=seed,
                                              stratify=y if classification else None)
    x_va, y_va = np.zeros((0, x.shape[1])), np.zeros(0)
    if val_fraction > 0:
        x_tr, x_va, y_tr, y_va = train_test_split(
            x_tr, y_tr, test_size=val_fraction, random_state=seed + 1,
            stratify=y_tr if classification else None)
    return _finish(name, (x_tr, y_tr), (x_va, y_va), (x_te, y_te), names, seed)


def load(name: str, cfg, seed: int = 0) -> Dataset:
    """The data set `name` ∈ NAMES with the sizes in the config block `cfg` (config.data)."""
    if name in ("synth_reg", "synth_clf"):
        return _synthetic(name, cfg.synth_n, cfg.synth_noise, cfg.test_fraction,
                          cfg.val_fraction, seed)
    if name == "diabetes":
        from sklearn.datasets import load_diabetes
        raw = load_diabetes()
        return _split(name, raw.data, raw.target, raw.feature_names, cfg.test_fraction,
                      cfg.val_fraction, seed)
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer
        raw = load_breast_cancer()
        k = cfg.breast_features                       # WDBC columns: 10 means, 10 SEs, 10 worsts
        return _split(name, raw.data[:, :k], raw.target, raw.feature_names[:k],
                      cfg.test_fraction, cfg.val_fraction, seed)
    if name == "madelon":
        from sklearn.datasets import make_classification
        x, y = make_classification(
            n_samples=cfg.madelon_n, n_features=cfg.madelon_features,
            n_informative=cfg.madelon_informative, n_redundant=cfg.madelon_redundant,
            n_repeated=0, n_clusters_per_class=2, flip_y=0.01, class_sep=1.0,
            hypercube=True, random_state=seed)
        names = tuple(f"f{j}" for j in range(x.shape[1]))
        return _split(name, x, y, names, cfg.test_fraction, cfg.val_fraction, seed)
    raise ValueError(f"unknown data set {name!r}; expected one of {NAMES}")


def resample_weights(n: int, replicas: int, mode: str, fraction: float, seed: int
                     ) -> np.ndarray:
    """(n, replicas) float32 row weights of each replica's training sample.

    mode "seed": all ones (replicas differ only by initialisation and the seed);
    mode "resample": each replica keeps a random subset of round(fraction·n) rows (weight
    1, others 0), i.e. subsampling without replacement.
    """
    if mode == "seed":
        return np.ones((n, replicas), np.float32)
    if mode != "resample":
        raise ValueError(f"unknown replica mode {mode!r}; expected 'seed' or 'resample'")
    rng = np.random.default_rng(seed)
    keep = int(round(fraction * n))
    w = np.zeros((n, replicas), np.float32)
    for r in range(replicas):
        w[rng.choice(n, keep, replace=False), r] = 1.0
    return w
