"""Figures drawn from Python leave the session's matplotlib as it was: its backend (a
notebook's inline figures), pyplot's list of figures and its settings."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPOSITORY

SESSION = """
import matplotlib
matplotlib.use("svg")  # a session's own backend, as a notebook's inline one
import matplotlib.pyplot as plt
plt.rcParams["pdf.fonttype"] = 3
import numpy as np, xarray as xr
import campaign, campaign.render.figures, campaign.render.sample_ecdf
values = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 9.0]])
ok = np.ones((2, 4), "i1")
dataset = xr.Dataset(
    {"y": (("s", "replicate"), values), "status": (("s", "replicate"), ok)},
    {"s": ["a", "b"], "replicate": np.arange(4)},
    attrs={"confidence": 0.95},
)
figure = campaign.plot(dataset, "y", x="s")
campaign.plot(dataset, "y", x="s", out=OUT)
print(matplotlib.get_backend(), plt.get_fignums(), plt.rcParams["pdf.fonttype"])
print(type(figure).__name__, len(figure.axes[0].lines) > 0)
"""


def test_plotting_keeps_the_sessions_backend_figures_and_settings(tmp_path):
    pdf = tmp_path / "y.pdf"
    script = f"OUT = {str(pdf)!r}\n{SESSION}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPOSITORY, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["svg [] 3", "Figure True"]
    assert b"/FontFile2" in pdf.read_bytes()  # the file written still embeds TrueType fonts
