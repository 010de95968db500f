"""A model whose module imports where the campaign runs but fails to on the Dask workers, as
one that reads a file present only on the submitting machine would."""

from __future__ import annotations

import multiprocessing

import numpy as np

if multiprocessing.parent_process() is not None:  # a worker process, started by its nanny
    open("/nonexistent/calibration.dat")


def run(params, seed):
    return {"value": float(np.random.default_rng(seed).random())}
