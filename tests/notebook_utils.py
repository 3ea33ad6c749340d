"""Execute a notebook through a real Jupyter kernel, as Jupyter would, and read its outputs.

    nb, probe = execute("experiments/gmflow/notebook.ipynb", probe="{'swd': swd}")
    image_count(nb)       # image/png outputs of display_data (inline figures)
    error_outputs(nb)     # [] when every cell ran

The kernel is `python3` from a kernelspec written to a temporary folder for this
interpreter (`sys.executable`, via `ipykernel.kernelspec.install(prefix=...)`), and its
working directory is the notebook's own folder (Jupyter's default), not the repository
root. MPLBACKEND is removed from the kernel's environment, so matplotlib uses the inline
backend there, as in a notebook server. `probe` is a Python expression evaluated in the
kernel after the last cell (in an extra cell that is not saved, with `os` imported); its
value comes back via `repr` / `ast.literal_eval`, so it must be built of literals (floats,
lists, dicts).

A test module shares one execution through a module-scoped fixture:

    NOTEBOOK = notebook_path("gmflow")
    run = module_run(NOTEBOOK, PROBE)        # run -> (nb, probe)

The kernel inherits the test session's environment, so it compiles as the tests do
(`tests.fast_compile`: backend optimisation off), unless `optimise=True`: a notebook whose
kernel spends its time running a training loop, not compiling it, runs faster with XLA's
optimisation on (measured on one core, kernel start excluded: GMFlow 57.6 -> 46.6 s CPU,
CADES 33.6 -> 21.1 s; MultiPDENet, all compiles, 27.5 -> 106 s, keeps it off).

Run as a script, it re-executes notebooks and writes them back with their outputs and
without execution timing metadata (how the committed notebooks were produced):

    python3 tests/notebook_utils.py experiments/gmflow/notebook.ipynb
"""
from __future__ import annotations

import ast
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_NAME = "python3"
OPTIMISATIONS_OFF_ENV = "JAX_DISABLE_MOST_OPTIMIZATIONS"   # tests.fast_compile.DISABLE_ENV
PROBE_MARKER = "__notebook_probe__="
# user + system CPU seconds of the kernel process and its children (a load-independent cost)
KERNEL_CPU_S = "sum(__import__('os').times()[:4])"


def _kernel_manager(kernel_dir: str):
    """A KernelManager for `python3` = this interpreter, from a kernelspec in kernel_dir."""
    from ipykernel import kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    prefix = kernelspec.install(kernel_name=KERNEL_NAME, prefix=kernel_dir)
    ksm = KernelSpecManager(kernel_dirs=[os.path.dirname(prefix)], ensure_native_kernel=False)
    return KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=ksm)


def strip_timing(nb) -> None:
    """Drop execution timing metadata (the `execution` entries nbclient records) in place."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)


def notebook_path(experiment: str) -> str:
    """experiments/<experiment>/notebook.ipynb under the repository root (absolute)."""
    return os.path.join(ROOT, "experiments", experiment, "notebook.ipynb")


def module_run(path: str, probe: str, optimise: bool = False):
    """A module-scoped pytest fixture `run`: (executed notebook, probe value) of one
    `execute(path, probe, optimise=optimise)`, shared by the module's tests."""
    import pytest

    @pytest.fixture(scope="module", name="run")
    def run():
        return execute(path, probe=probe, optimise=optimise)

    return run


def kernel_env(optimise: bool = False) -> dict:
    """The kernel's environment: this process's, without MPLBACKEND (the kernel's inline
    backend draws the figures), with JAX_DISABLE_MOST_OPTIMIZATIONS=0 when `optimise`."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    if optimise:
        env[OPTIMISATIONS_OFF_ENV] = "0"
    return env


def execute(path: str, probe: str | None = None, timeout: int = 900, optimise: bool = False):
    """Run the notebook at `path` top to bottom; returns (executed notebook, probe value).
    `optimise`: the kernel compiles with XLA's backend optimisation on
    (JAX_DISABLE_MOST_OPTIMIZATIONS=0), whatever the session's setting.

    Cell errors are recorded as outputs (allow_errors), so a failing notebook comes back
    with its traceback for `error_outputs`; `timeout` (s per cell) only catches hangs.
    """
    import nbformat
    from nbclient import NotebookClient

    path = os.path.abspath(path)
    nb = nbformat.read(path, as_version=4)
    if probe is not None:
        nb.cells.append(nbformat.v4.new_code_cell(
            f"import os\nprint({PROBE_MARKER!r} + repr({probe}))"))
    env = kernel_env(optimise)
    with tempfile.TemporaryDirectory(prefix="nb_kernel_") as kernel_dir:
        km = _kernel_manager(kernel_dir)
        client = NotebookClient(nb, km=km, timeout=timeout,
                                allow_errors=True, record_timing=False,
                                resources={"metadata": {"path": os.path.dirname(path)}})
        try:
            client.execute(env=env)
        finally:   # nbclient stops only kernels it made itself; this one would outlive the test
            if km.has_kernel:
                km.shutdown_kernel(now=True)
    value = None
    if probe is not None:
        cell = nb.cells.pop()
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        if PROBE_MARKER not in text:
            errors = error_outputs(nb) + [f"probe: {o.ename}: {o.evalue}" for o in cell.outputs
                                          if o.output_type == "error"]
            raise AssertionError(f"{path}: the probe printed nothing; errors: {errors}")
        value = ast.literal_eval(text.split(PROBE_MARKER, 1)[1].strip())
    strip_timing(nb)
    return nb, value


def error_outputs(nb) -> list[str]:
    """'cell i: Name: message' for every error output of an executed notebook."""
    return [f"cell {i}: {o.ename}: {o.evalue}" for i, c in enumerate(nb.cells)
            if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def image_count(nb) -> int:
    """Number of display_data outputs carrying an image/png (inline figures)."""
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "display_data" and "image/png" in o.get("data", {}))


def main(paths: list[str]) -> int:
    import nbformat

    for path in paths:
        t0 = time.time()
        nb, cpu = execute(path, probe=KERNEL_CPU_S)
        errors = error_outputs(nb)
        if errors:
            print(f"{path}: not written, errors: {errors}", file=sys.stderr)
            return 1
        nbformat.write(nb, path)
        print(f"{path}: {time.time() - t0:.0f} s wall (kernel start included), kernel CPU "
              f"{cpu:.0f} s, {image_count(nb)} images, {os.path.getsize(path) / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
