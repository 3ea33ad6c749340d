"""Importing the library never selects a matplotlib backend (a notebook keeps its own)."""
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
