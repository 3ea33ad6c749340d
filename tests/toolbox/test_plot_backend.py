"""Importing the library never selects a matplotlib backend (a notebook keeps its own) and
loads matplotlib only to draw."""
import os
import subprocess
import sys

MODULES = ["lib.toolbox.plotting", "lib.anova_tpnn.report", "lib.kar_peak.plots",
           "lib.latent_ate.report", "lib.gmflow.plots", "lib.adam_abc.plots"]


def test_importing_plot_modules_keeps_the_callers_backend():
    code = ("import matplotlib, importlib\n"
            f"for m in {MODULES!r}: importlib.import_module(m)\n"
            "import lib.latent_ate.report as r, matplotlib.pyplot as plt\n"
            "print(matplotlib.get_backend())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "MPLBACKEND": "svg"}, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().lower() == "svg"


def test_matplotlib_loads_with_the_first_figure_and_binaries_draw_with_agg(tmp_path):
    """A process that draws nothing never imports matplotlib (about 0.6 s of CPU); a binary
    (`lib.common.cli`) draws with Agg whether matplotlib was loaded before or not."""
    png = tmp_path / "line.png"
    code = ("import importlib, sys\n"
            f"for m in {MODULES + ['experiments.cades.train', 'experiments.multipdenet.train']!r}:\n"
            "    importlib.import_module(m)\n"
            "print('loaded' if 'matplotlib' in sys.modules else 'not loaded')\n"
            "from lib.common import cli\n"
            "from lib.toolbox import plotting\n"
            "cli._agg_backend()\n"
            f"plotting.line_plot({str(png)!r}, {{'a': ([0, 1], [1, 2])}})\n"
            "import matplotlib\n"
            "print(matplotlib.get_backend().lower())\n"
            "matplotlib.use('svg'); cli._agg_backend()\n"
            "print(matplotlib.get_backend().lower())\n")
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["not", "loaded", "agg", "agg"]
    assert png.stat().st_size > 0
