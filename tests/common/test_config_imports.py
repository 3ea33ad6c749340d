"""Config files and schemas load without JAX, numpy or the other heavy packages, so a typo in
a config or an override is answered before they load; the names a schema copies from a heavy
module (its `MIRRORS`) equal their source."""
import glob
import importlib
import json
import os
import re
import resource
import subprocess
import sys

import pytest

from tests.common import harness_utils as hu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("jax", "jaxlib", "flax", "optax", "orbax", "chex", "diffrax", "equinox", "numpy",
         "scipy", "sklearn", "matplotlib", "torch", "pandas")


def _module_names(pattern: str) -> list[str]:
    return sorted(os.path.relpath(p, ROOT)[:-3].replace(os.sep, ".")
                  for p in glob.glob(os.path.join(ROOT, pattern))
                  if not p.endswith("__init__.py"))


CONFIGS = _module_names("configs/*/*.py")
SCHEMAS = _module_names("lib/*/config_schema.py") + ["lib.pde.data_config"]

# Imports each module in turn (and builds every variant of a config file) and prints the
# heavy top-level packages each one added.
PROBE = r"""
import importlib, json, sys
heavy, added = set(json.loads(sys.argv[1])), {}
for name in sys.argv[2:]:
    before = {m.split(".")[0] for m in sys.modules}
    module = importlib.import_module(name)
    for variant in getattr(module, "VARIANTS", ()) if hasattr(module, "get_config") else ():
        module.get_config(variant)
    added[name] = sorted(({m.split(".")[0] for m in sys.modules} - before) & heavy)
print(json.dumps(added))
"""


def test_config_files_and_schemas_import_nothing_heavy():
    assert len(CONFIGS) >= 19 and len(SCHEMAS) >= 19, (CONFIGS, SCHEMAS)
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY), *SCHEMAS, *CONFIGS],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=hu.clean_env(PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    added = json.loads(proc.stdout.splitlines()[-1])
    assert set(added) == set(SCHEMAS) | set(CONFIGS)
    assert {name: mods for name, mods in added.items() if mods} == {}


def _source_value(ref: str, local):
    """The value at "module:attr", as a schema copies it: a function is called, a dict of
    callables is its tuple of keys."""
    module, _, attr = ref.partition(":")
    value = getattr(importlib.import_module(module), attr)
    if callable(value) and not isinstance(value, type):
        value = value()
    if isinstance(value, dict) and not isinstance(local, dict):
        value = tuple(value)
    return value


MIRRORED = [name for name in SCHEMAS if "MIRRORS" in open(
    os.path.join(ROOT, name.replace(".", os.sep) + ".py")).read()]


@pytest.mark.parametrize("schema_name", MIRRORED)
def test_mirrored_names_equal_their_source(schema_name):
    schema = importlib.import_module(schema_name)
    assert schema.MIRRORS, schema_name
    for name, ref in schema.MIRRORS.items():
        local = getattr(schema, name)
        assert local == _source_value(ref, local), (
            f"{schema_name}.{name} differs from {ref}: copy the source's value")


def test_latent_ate_ridge_grid_is_numpys_logspace():
    import numpy as np

    from lib.latent_ate import config_schema

    assert config_schema.KEYS["dml.ridge_lambdas"].default == tuple(
        float(v) for v in np.logspace(-2, 4, 13))


@pytest.mark.parametrize("args, suggestion", [
    (("--config=configs/multipdenet/burgers.py:quick", "--config.trian.lr=1"), "'optim.lr'"),
    (("--config=configs/multipdenet/burgers.py:quik",), "'quick'"),
])
def test_a_typo_exits_2_with_a_suggestion_before_jax_loads(args, suggestion):
    """One line with a "did you mean", exit 2, no heavy package but numpy (lib.common.guards)
    imported, under 3 s of CPU (about 0.3 s; importing JAX alone takes about 2 s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "experiments/multipdenet/main.py", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env=hu.clean_env(PYTHONPATH=ROOT, PYTHONPROFILEIMPORTTIME="1"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert proc.returncode == 2, proc.stderr[-3000:]
    imported = re.findall(r"^import time:.*\|\s*(\S+)$", proc.stderr, re.M)
    assert imported and not {m.split(".")[0] for m in imported} & (set(HEAVY) - {"numpy"})
    (line,) = hu.non_log_lines(re.sub(r"^import time:.*\n", "", proc.stderr, flags=re.M))
    assert line.startswith("config error: ") and f"did you mean {suggestion}" in line, line
    assert cpu < 3.0, f"{cpu:.2f} s of CPU"
