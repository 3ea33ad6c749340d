"""The layout rules of the code trees, read as text or parsed (nothing imported)."""
import ast
import functools
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HISTORY = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def _code_files():
    """Every source file of lib/, configs/ and tools/, and the Python files of experiments/."""
    for tree, suffixes in (("lib", (".py", ".sh")), ("configs", (".py", ".sh")),
                           ("tools", (".py", ".sh")), ("experiments", (".py",))):
        for dirpath, dirs, files in os.walk(os.path.join(ROOT, tree)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in sorted(files):
                if name.endswith(suffixes):
                    yield os.path.join(dirpath, name)


def issue_references(paths) -> list[str]:
    """'path:line: text' of every line naming an issue by number."""
    hits = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if HISTORY.search(line):
                    hits.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    return hits


def test_issue_references_match_the_forms_they_take(tmp_path):
    path = tmp_path / "a.py"
    path.write_text('"""Targets (Issue 13):"""\n# issues 3 and 4\nx = 1  # see issue #7\n'
                    "tissue 5\nissue: none\n")
    assert [h.split(": ", 1)[0] for h in issue_references([str(path)])] == [
        f"{os.path.relpath(path, ROOT)}:{n}" for n in (1, 2, 3)]


def test_code_names_no_issue_numbers():
    """Issue numbers and how the code came to be belong in git and NOTES.md, not in code."""
    hits = issue_references(_code_files())
    assert not hits, "issue numbers in code (history goes to git / NOTES.md):\n" + "\n".join(hits)


# ----------------------------------------------------------------------------- per-paper files
# The shared layers of lib/ (the harness, its shelf, the layers several papers use); every
# other lib/<p> is a paper with experiments/<p>.
SHARED_LAYERS = ("common", "data", "detection", "lm", "nn", "pde", "sandbox", "toolbox", "tpp")
REQUIRED = ("lib/{p}/config_schema.py", "lib/{p}/report.py", "experiments/{p}/main.py",
            "experiments/{p}/train.py", "experiments/{p}/README.md")
CAPS = {"train.py": 250, "main.py": 20, "README.md": 200}   # lines, per experiments/<name>/
OUT_OF_PLACE = "builds a train_loop.Task (the paper's lib/<p>/training.py is the one place)"
# tools/ importing neither configs/ nor experiments/ is tests/test_layers.py's check
NO_IMPORTS = {"lib": ("experiments", "configs", "tools"), "configs": ("experiments", "tools")}


def _rel(root, path) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def _python_files(root, tree) -> list[str]:
    out = []
    for dirpath, dirs, files in os.walk(os.path.join(root, tree)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".py")]
    return out


def _tree(path) -> ast.Module:
    """The parsed file, parsed again only when it changed (the checks only read it)."""
    stat = os.stat(path)
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=None)
def _parse(path, mtime_ns, size) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def _walk(tree: ast.AST) -> list[ast.AST]:
    """`ast.walk(tree)` as a list, made once per tree and kept on it (each file is walked by
    several checks)."""
    nodes = getattr(tree, "_walked", None)
    if nodes is None:
        nodes = tree._walked = list(ast.walk(tree))
    return nodes


def _imports(tree: ast.Module) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names taken from it) of every absolute import of the file, those inside
    functions too; `import a.b` is (line, "a.b", ())."""
    out = []
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module, tuple(a.name for a in node.names)))
    return sorted(out)


def papers(root) -> list[str]:
    """The papers: the folders of experiments/ that are not a shared layer's."""
    base = os.path.join(root, "experiments")
    return sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d))
                  and d not in SHARED_LAYERS and not d.startswith(("_", ".")))


def call_lines(tree: ast.Module, module: str, name: str) -> list[int]:
    """Lines of the calls of `name` from the module whose dotted name ends in `module`:
    `<module or its alias>.name(...)`, or `name(...)` (any alias) imported from it."""
    mods, bare = {module}, set()
    for node in _walk(tree):
        if isinstance(node, ast.ImportFrom):
            from_module = (node.module or "").endswith(module)
            bare |= {a.asname or a.name for a in node.names if from_module and a.name == name}
            mods |= {a.asname or a.name for a in node.names if a.name == module}
        elif isinstance(node, ast.Import):
            mods |= {a.asname for a in node.names if a.asname and a.name.endswith(module)}
    return sorted(node.lineno for node in _walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == name
         and ast.unparse(node.func.value).split(".")[-1] in mods)
        or (isinstance(node.func, ast.Name) and node.func.id in bare)))


def builds_task(tree: ast.Module) -> bool:
    """Whether the file calls `train_loop.Task(...)` (or `Task` imported from the loop)."""
    return bool(call_lines(tree, "train_loop", "Task"))


def contract_breaks(root) -> list[str]:
    """'path: problem' for each break of the per-paper file contract (WORKSPACE.md,
    "Adding a paper"): the required files; `train_loop.Task` built only in lib/<p>/training.py;
    every lib/<name> a paper or a shared layer."""
    found = papers(root)
    out = [f"{f.format(p=p)}: missing" for p in found for f in REQUIRED
           if not os.path.isfile(os.path.join(root, f.format(p=p)))]
    for name in sorted(os.listdir(os.path.join(root, "lib"))):
        if os.path.isdir(os.path.join(root, "lib", name)) and name != "__pycache__" \
                and name not in found and name not in SHARED_LAYERS:
            out.append(f"lib/{name}: neither a paper (no experiments/{name}) nor a shared layer")
    allowed = {f"lib/{p}/training.py" for p in found}
    for path in [f for p in found for f in _python_files(root, f"lib/{p}")] + \
            _python_files(root, "experiments"):
        if _rel(root, path) not in allowed and builds_task(_tree(path)):
            out.append(f"{_rel(root, path)}: {OUT_OF_PLACE}")
    return out


ORCHESTRATION = (("train_loop", "train"), ("stages", "Stages"))   # (module, callable)
TASK_NAME = re.compile(r"_?make_(?:[a-z0-9]+_)*task")


def orchestration_breaks(root) -> list[str]:
    """'path:line: module.name' for each sub-run a paper's lib/<p> starts outside
    lib/<p>/runs.py: a `train_loop.train(...)` call or a `Stages(...)` built."""
    out = []
    for p in papers(root):
        for path in _python_files(root, f"lib/{p}"):
            if _rel(root, path) != f"lib/{p}/runs.py":
                tree = _tree(path)
                out += [f"{_rel(root, path)}:{line}: {module}.{name}" for module, name in
                        ORCHESTRATION for line in call_lines(tree, module, name)]
    return out


def _returns_task(fn: ast.FunctionDef) -> bool:
    """Whether `fn` returns a `...Task(...)` call or names Task in its return annotation."""
    annotated = fn.returns is not None and "Task" in re.findall(r"\w+", ast.unparse(fn.returns))
    return annotated or any(isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
                            and ast.unparse(node.value.func).split(".")[-1] == "Task"
                            for node in ast.walk(fn))


def task_name_breaks(root) -> list[str]:
    """'path:line: name' for each top-level function of a lib/<p>/training.py that builds a
    Task (returns `train_loop.Task(...)`, says Task in its return annotation, or has a name
    ending in `task`) and is not named `make_task` or `make_<what>_task` (`_` in front
    for a private one)."""
    out = []
    for p in papers(root):
        path = os.path.join(root, "lib", p, "training.py")
        if os.path.isfile(path):
            out += [f"{_rel(root, path)}:{fn.lineno}: {fn.name}" for fn in _tree(path).body
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and (fn.name.endswith("task") or _returns_task(fn))
                    and not TASK_NAME.fullmatch(fn.name)]
    return out


def train_py_breaks(root) -> list[str]:
    """'path:line: what' for each piece of paper logic in an experiments/<name>/train.py:
    gradients, optax, Flax Module classes, a train_loop.Task built there."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "experiments", "*", "train.py"))):
        tree, rel = _tree(path), _rel(root, path)
        for node in _walk(tree):
            what = None
            if isinstance(node, ast.Attribute) and node.attr in ("grad", "value_and_grad") \
                    and ast.unparse(node.value) == "jax":
                what = f"jax.{node.attr}"
            elif isinstance(node, ast.ImportFrom) and node.module == "jax" and \
                    {a.name for a in node.names} & {"grad", "value_and_grad"}:
                what = "a gradient imported from jax"
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    m.split(".")[0] == "optax" for _, m, _ in _imports(ast.Module([node], []))):
                what = "optax"
            elif isinstance(node, ast.ClassDef) and any(
                    ast.unparse(b).split(".")[-1] == "Module" for b in node.bases):
                what = f"model class {node.name}"
            if what:
                out.append(f"{rel}:{node.lineno}: {what}")
        if builds_task(tree):
            out.append(f"{rel}: builds a train_loop.Task")
    return out


ALLOWED_NUMBERS = (0, 1, -1)   # -1 parses as -(1); a number beyond these comes from the config


def train_py_numbers(root) -> list[str]:
    """'path:line: N' for each number in an experiments/<name>/train.py other than 0, 1 and -1:
    a setting belongs in the config (a schema key), a seed salt is a named constant of the
    paper's lib module that owns the stream."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "experiments", "*", "train.py"))):
        out += [f"{_rel(root, path)}:{node.lineno}: {node.value!r}"
                for node in _walk(_tree(path)) if isinstance(node, ast.Constant)
                and type(node.value) in (int, float, complex)
                and node.value not in ALLOWED_NUMBERS]
    return sorted(out, key=lambda s: (s.split(":")[0], int(s.split(":")[1])))
def import_breaks(root) -> list[str]:
    """'path:line: imports X' for each import across the whiteboard's lines: lib imports no
    experiments, configs or tools; configs no experiments or tools."""
    out = []
    for tree, banned in NO_IMPORTS.items():
        for path in _python_files(root, tree):
            out += [f"{_rel(root, path)}:{line}: imports {module}"
                    for line, module, _ in _imports(_tree(path)) if module.split(".")[0] in banned]
    return out


def import_cycles(root) -> list[list[str]]:
    """The cycles (strongly connected sets of two or more modules) of lib/'s import graph,
    function-level imports included."""
    modules = {}
    for path in _python_files(root, "lib"):
        name = _rel(root, path)[:-3].replace("/", ".")
        modules[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        named = [n for _, m, names in _imports(_tree(path))
                 for n in (m, *(f"{m}.{a}" for a in names))]
        for dep in named:
            while dep and dep not in modules:
                dep = dep.rpartition(".")[0]
            if dep and dep != name:
                deps.add(dep)
        graph[name] = sorted(deps)
    index, low, stack, cycles = {}, {}, [], []

    def visit(v):   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(part) > 1:
                cycles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def cap_breaks(root) -> list[str]:
    """'path: N lines > cap' for each experiments/<name>/ file over its cap."""
    out = []
    for name, cap in CAPS.items():
        for path in sorted(glob.glob(os.path.join(root, "experiments", "*", name))):
            with open(path, encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > cap:
                out.append(f"{_rel(root, path)}: {lines} lines > {cap}")
    return out


def test_the_workspace_keeps_the_per_paper_contract():
    assert len(papers(ROOT)) >= 19, papers(ROOT)
    breaks = contract_breaks(ROOT) + train_py_breaks(ROOT) + train_py_numbers(ROOT) + \
        orchestration_breaks(ROOT) + task_name_breaks(ROOT)
    assert not breaks, "per-paper file contract (WORKSPACE.md, Adding a paper):\n" + \
        "\n".join(breaks)


def test_the_workspace_keeps_the_import_rules():
    assert not import_breaks(ROOT), "\n".join(import_breaks(ROOT))
    assert not import_cycles(ROOT), import_cycles(ROOT)


def test_the_experiment_files_keep_their_caps():
    assert not cap_breaks(ROOT), "\n".join(cap_breaks(ROOT))


def _write(root, files: dict):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _paper(p="toy", **extra) -> dict:
    files = {f.format(p=p): "" for f in REQUIRED}
    files[f"lib/{p}/training.py"] = "from lib.common import train_loop\ntrain_loop.Task(1, 2)\n"
    return {**files, **extra}


def test_contract_breaks_name_each_file_out_of_place(tmp_path):
    _write(tmp_path, _paper(**{"lib/toy/fit.py": "from lib.common.train_loop import Task as T\nT()",
                               "lib/toy/runs.py": "import lib.common.train_loop\n",
                               "lib/stray/__init__.py": "", "lib/nn/layers.py": "",
                               "lib/common/loop.py": "train_loop.Task()\n",
                               "experiments/lm/train.py": "train_loop.Task()\n"}))
    _write(tmp_path, {"experiments/bare/train.py": "", "lib/bare/config_schema.py": ""})
    assert contract_breaks(str(tmp_path)) == [
        "lib/bare/report.py: missing", "experiments/bare/main.py: missing",
        "experiments/bare/README.md: missing",
        "lib/stray: neither a paper (no experiments/stray) nor a shared layer",
        f"lib/toy/fit.py: {OUT_OF_PLACE}", f"experiments/lm/train.py: {OUT_OF_PLACE}"]


def test_train_py_breaks_name_gradients_optax_models_and_tasks(tmp_path):
    _write(tmp_path, {"experiments/toy/train.py": (
        "import jax\nimport optax.contrib\nfrom jax import value_and_grad\n"
        "import flax.linen as nn\nclass Net(nn.Module):\n    pass\n"
        "class Clock:\n    pass\n"
        "g = jax.grad(f)\nr = result.grad\nt = lib.common.train_loop.Task(1, 2, 3, 4)\n"),
        "experiments/ok/train.py": "from lib.toy import training\ntask = training.make_task(c)\n"})
    assert sorted(train_py_breaks(str(tmp_path))) == sorted([
        "experiments/toy/train.py:2: optax",
        "experiments/toy/train.py:3: a gradient imported from jax",
        "experiments/toy/train.py:5: model class Net", "experiments/toy/train.py:9: jax.grad",
        "experiments/toy/train.py: builds a train_loop.Task"])


def test_train_py_numbers_name_each_literal_but_0_1_and_minus_1(tmp_path):
    _write(tmp_path, {"experiments/toy/train.py": (
        '"""Runs 3 seeds of 2 models."""\nimport jax\n'
        "k = jax.random.key(config.seed + 101)\nlr = 1e-3\nx = a[-1] + b[0] * c[1]\n"
        "flag = True\nname = f'{v:.4f}'\nhalf = n // 2.0\n"),
        "experiments/ok/train.py": "seed = config.seed + training.STREAM\nx = y[-1]\n"})
    assert train_py_numbers(str(tmp_path)) == [
        "experiments/toy/train.py:3: 101", "experiments/toy/train.py:4: 0.001",
        "experiments/toy/train.py:8: 2.0"]
def test_import_breaks_and_cycles_are_named(tmp_path):
    _write(tmp_path, {"lib/toy/a.py": "from lib.toy import b\n",
                      "lib/toy/b.py": "def f():\n    import lib.toy.a\n",
                      "lib/toy/c.py": "from configs.toy import base\nfrom lib.toy import a\n",
                      "configs/toy/base.py": "from lib.toy import config_schema\n",
                      "configs/toy/toy.py": "from configs.toy import base\nimport tools.bench\n",
                      "experiments/toy/train.py": "from configs.toy import base\n"})
    assert import_breaks(str(tmp_path)) == [
        "lib/toy/c.py:1: imports configs.toy", "configs/toy/toy.py:2: imports tools.bench"]
    assert import_cycles(str(tmp_path)) == [["lib.toy.a", "lib.toy.b"]]


def test_cap_breaks_name_the_file_and_its_length(tmp_path):
    _write(tmp_path, {"experiments/toy/train.py": "x\n" * 251, "experiments/toy/main.py": "x\n" * 20,
                      "experiments/toy/README.md": "x\n" * 201,
                      "experiments/ok/train.py": "x\n" * 250})
    assert cap_breaks(str(tmp_path)) == ["experiments/toy/train.py: 251 lines > 250",
                                         "experiments/toy/README.md: 201 lines > 200"]



def test_orchestration_breaks_name_each_sub_run_outside_runs_py(tmp_path):
    _write(tmp_path, _paper(**{
        "lib/toy/fit.py": ('"""Calls train_loop.train(task, loop) once."""\n'
                           "from lib.common import train_loop\nr = result.train(x)\n"
                           "r = train_loop.train(t, c, workdir=w, mesh=m)\n"),
        "lib/toy/cache.py": "from lib.common.stages import Stages\nimport os\ns = Stages(w)\n",
        "lib/toy/alias.py": ("from lib.common import train_loop as tl, stages\n"
                             "from lib.common.train_loop import train as fit\n"
                             "tl.train(t)\nfit(t)\nstages.Stages(w)\n"),
        "lib/toy/runs.py": ("from lib.common import train_loop\n"
                            "from lib.common.stages import Stages\n"
                            "train_loop.train(t)\nStages(w)\n"),
        "lib/nn/loop.py": "from lib.common import train_loop\ntrain_loop.train(t)\n",
        "experiments/toy/train.py": "from lib.common import train_loop\ntrain_loop.train(t)\n"}))
    assert orchestration_breaks(str(tmp_path)) == [
        "lib/toy/alias.py:3: train_loop.train", "lib/toy/alias.py:4: train_loop.train",
        "lib/toy/alias.py:5: stages.Stages", "lib/toy/cache.py:3: stages.Stages",
        "lib/toy/fit.py:4: train_loop.train"]


def test_task_name_breaks_name_each_builder_off_the_rule(tmp_path):
    training = (
        "from lib.common import train_loop\nfrom lib.common.train_loop import Task\n"
        "def make_task(c) -> train_loop.Task:\n    return build(c)\n"                  # 3
        "def make_cnn_task(c):\n    return model, _make_adam_task(c)\n"               # 5
        "def _make_adam_task(c):\n    return train_loop.Task(1, 2, 3, 4)\n"           # 7
        "def classifier_task(c):\n    return None\n"                                  # 9
        "def build(c) -> tuple[train_loop.Task, int]:\n    return t, 1\n"             # 11
        "def fit(c):\n    return Task(1, 2, 3, 4)\n"                                  # 13
        "def make_fit(c) -> Fit:\n    task = train_loop.Task(1)\n    return Fit(task)\n"
        "def loop(c) -> train_loop.LoopConfig:\n    return c\n"
        "def make_tasks(c):\n    return []\n")
    _write(tmp_path, _paper(**{"lib/toy/training.py": training,
                               "lib/nn/training.py": "def fit(c) -> Task:\n    return c\n"}))
    assert task_name_breaks(str(tmp_path)) == [
        "lib/toy/training.py:9: classifier_task", "lib/toy/training.py:11: build",
        "lib/toy/training.py:13: fit"]
