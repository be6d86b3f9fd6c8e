"""The fit of the cost parameters marked "fitted" in :class:`~catlass_py.arch.spec.CostParams`.

Method: every point whose ``role`` is ``fit`` is simulated once with an :class:`EventRecorder`; the cost model then
replays the recorded event streams under candidate parameters (the simulation itself does not depend on them).
The objective is the sum over those points of ln(predicted / published)^2; it is minimised by Nelder-Mead over
the logarithms of the parameters (all positive), from the documented starting values. The held-out points never
enter the objective. Every device variant takes the same values (they are per-cycle or per-chip quantities of the
Atlas A2 core; the variants differ in core count, clock and L2 size only).
"""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np

from catlass_py.arch import get_arch
from catlass_py.calibration.predict import EventRecorder, replay

FITTED = {
    "launch_overhead_us": 4.94,
    "mix_launch_overhead_us": 3.8,
    "gm_read_bytes_per_cycle": 59.0,
    "gm_latency_cycles": 1240.0,
    "l2_bandwidth_gbps": 2640.0,
    "hbm_run_cycles": 0.2866,
    "gm_run_cycles": 0.59,
}
"""The fitted parameters and the starting values of the shipped fit (``python benchmarks/calibrate.py --slow --fit
--max-evaluations 90`` over the 26 modelled points; an earlier fit with the HBM bandwidth also free, from
CATLASS-cited or estimated values, supplied them). The fit's results, rounded, are the defaults of
:class:`~catlass_py.arch.spec.CostParams`."""

INTEGER_FIELDS = ("gm_latency_cycles",)


def with_params(arch, params: dict):
    """``arch`` (a spec or name) with cost parameters ``params`` (integer fields rounded)."""
    spec = get_arch(arch)
    update = {k: (round(v) if k in INTEGER_FIELDS else float(v)) for k, v in params.items()}
    return spec.model_copy(update={"cost": spec.cost.model_copy(update=update)})


def record(point, *, options=None) -> list:
    """Simulate ``point`` once and return its recorded launches (for :func:`replay`)."""
    from catlass_py.calibration.cases import launch_point

    recorder = EventRecorder()
    launch_point(point, observers=(recorder,), options=options)
    return recorder.launches


def load_or_record(point, cache: Path | None, *, options=None) -> list:
    """The point's recording from ``cache`` (a directory) if there, else simulated (and stored there)."""
    path = cache / f"{point.id}.pkl" if cache is not None else None
    if path is not None and path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)
    launches = record(point, options=options)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            pickle.dump(launches, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return launches


def predicted_us(point, launches, params: dict) -> float:
    """The point's predicted time under ``params`` (a replay of its recording on its device variant)."""
    return replay(launches, with_params(point.arch, params)).microseconds


def objective(points, recordings: dict, params: dict) -> float:
    """Sum of ln(predicted / published)^2 over ``points``."""
    return sum(math.log(predicted_us(p, recordings[p.id], params) / p.published_us) ** 2 for p in points)


def nelder_mead(f, x0, *, step: float = 0.2, max_evaluations: int = 200, tolerance: float = 1e-6):
    """Minimise ``f`` from ``x0`` (standard Nelder-Mead: reflection 1, expansion 2, contraction and shrink 1/2).
    Returns (best x, best value, evaluations)."""
    n = len(x0)
    simplex = [np.asarray(x0, float)] + [np.asarray(x0, float) + step * np.eye(n)[i] for i in range(n)]
    values = [f(x) for x in simplex]
    evaluations = n + 1
    while evaluations < max_evaluations:
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        fr = f(reflected)
        evaluations += 1
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - simplex[-1])
            fe = f(expanded)
            evaluations += 1
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(contracted)
            evaluations += 1
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                for i in range(1, n + 1):
                    simplex[i] = simplex[0] + 0.5 * (simplex[i] - simplex[0])
                    values[i] = f(simplex[i])
                    evaluations += 1
    best = int(np.argmin(values))
    return simplex[best], values[best], evaluations


def fit(points, recordings: dict, start: dict | None = None, *, max_evaluations: int = 200, log=None) -> dict:
    """Fit the parameters of ``start`` (default :data:`FITTED`) on ``points`` (their recordings in
    ``recordings``, by id); returns the best values."""
    start = dict(FITTED if start is None else start)
    keys = list(start)

    def f(x):
        params = dict(zip(keys, np.exp(x)))
        value = objective(points, recordings, params)
        if log is not None:
            log(value, params)
        return value

    best, _value, _n = nelder_mead(f, np.log([start[k] for k in keys]), max_evaluations=max_evaluations)
    return {k: (round(float(v)) if k in INTEGER_FIELDS else float(v)) for k, v in zip(keys, np.exp(best))}


__all__ = ["FITTED", "fit", "load_or_record", "nelder_mead", "objective", "predicted_us", "record", "with_params"]
