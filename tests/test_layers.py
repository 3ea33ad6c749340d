"""Which code may import which, read from the source (AST; nothing imported): the harness
(lib/common) and the toolbox (lib/toolbox) are separate bottom layers, lib/pde's dataset
rules need no harness, and tools import lib only."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def imported_modules(path: str) -> set[str]:
    """Every dotted module name that `path` imports, at any depth (function bodies too); a
    `from a import b` names both `a` and `a.b` (b may be a module)."""
    module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    names: set[str] = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.rsplit(".", node.level)[0]
                base = f"{package}.{base}" if base else package
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return names


def _files(folder: str) -> list[str]:
    out = []
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, folder)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".py")]
    return out


def offending(files: list[str], forbidden: tuple[str, ...]) -> list[str]:
    """'file: module' for each import of a module in (or under) one of `forbidden`."""
    return sorted(f"{os.path.relpath(path, ROOT)}: {name}" for path in files
                  for name in imported_modules(path)
                  if any(name == f or name.startswith(f + ".") for f in forbidden))


def test_imported_modules_reads_every_form(tmp_path):
    folder = tmp_path / "pkg"
    folder.mkdir()
    path = folder / "m.py"
    path.write_text("import lib.toolbox.stats\nfrom lib.common import config as c\n"
                    "def f():\n    from . import sibling\n    from .sub import x\n")
    found = imported_modules(str(path))
    assert {"lib.toolbox.stats", "lib.common", "lib.common.config"} <= found
    assert any(n.endswith("pkg.sibling") for n in found) and any(n.endswith("pkg.sub.x") for n in found)
    assert offending([str(path)], ("lib.common",)) == [
        f"{os.path.relpath(path, ROOT)}: lib.common", f"{os.path.relpath(path, ROOT)}: lib.common.config"]
    assert offending([str(path)], ("lib.comm",)) == []          # a prefix of a name is not it


def test_the_toolbox_imports_nothing_of_lib():
    files = _files("lib/toolbox")
    assert len(files) >= 6
    assert offending(files, ("lib",)) == []


def test_the_harness_imports_only_itself():
    """lib/common imports no other part of lib/: not the toolbox, not a shared layer."""
    found = sorted(f"{os.path.relpath(p, ROOT)}: {n}" for p in _files("lib/common")
                   for n in imported_modules(p)
                   if n.startswith("lib.") and n != "lib.common" and not n.startswith("lib.common."))
    assert found == []


def test_the_helpers_left_the_harness():
    moved = ("plotting", "stats", "sample_metrics", "jsonl", "replicas", "pinning")
    assert [m for m in moved if os.path.exists(os.path.join(ROOT, "lib", "common", m + ".py"))] == []
    code = _files("lib") + _files("experiments") + _files("tools") + _files("tests")
    assert offending(code, tuple(f"lib.common.{m}" for m in moved)) == []


def test_the_dataset_request_rules_need_no_harness():
    assert offending([os.path.join(ROOT, "lib", "pde", "data_config.py")], ("lib.common",)) == []


def test_tools_import_lib_only():
    """A tool takes a config by its file path (`config.load_config`), never as a module."""
    assert offending(_files("tools"), ("configs", "experiments")) == []
