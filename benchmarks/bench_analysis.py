"""Overhead of the analyses on example 10 (README shape by default), measured in one process.

    python benchmarks/bench_analysis.py [G m n k] [--cores N] [--repeat R]

Runs the example plain (no analysis observer), with the cost model, and with everything the CLI can switch on
(cost model recording a timeline, race detector, Chrome trace written to a temporary file), and prints the
launch time and the end-to-end time of each, relative to the plain run. The issue's target: the full
configuration under 3x the plain run. Never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from catlass_py.analysis import CostModel, write_chrome_trace
from catlass_py.arch import LaunchParams
from catlass_py.cli import load_script


def _run(example, argv, cores, mode, tmpdir):
    observers, options = (), None
    cost = None
    if mode in ("cost", "full"):
        cost = CostModel(record=mode == "full")
        observers = (cost,)
    if mode == "full":
        options = LaunchParams(detect_races=True)
    t0 = time.perf_counter()
    result = example.run(argv, cores=cores, observers=observers, options=options)
    extra = 0.0
    if mode == "full":
        t1 = time.perf_counter()
        write_chrome_trace(cost, os.path.join(tmpdir, "trace.json"))
        extra = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    assert result.passed
    return result.seconds + extra, wall, cost


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", nargs="*", default=["128", "512", "1024", "2048"])
    ap.add_argument("--cores", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ns = ap.parse_args(argv)
    example = load_script("10")
    modes = ("plain", "cost", "full")
    best = {m: (float("inf"), float("inf")) for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        _run(example, ns.shape, ns.cores, "plain", tmp)  # warm caches (kernel assembly, index maps)
        for _ in range(ns.repeat):
            for m in modes:
                launch_s, wall, cost = _run(example, ns.shape, ns.cores, m, tmp)
                best[m] = (min(best[m][0], launch_s), min(best[m][1], wall))
                if cost is not None and m == "full":
                    predicted = cost.report.microseconds
    base_launch, base_wall = best["plain"]
    print(f"example 10, shape {' '.join(ns.shape)}, best of {ns.repeat}")
    print(f"{'configuration':<44} {'launch s':>9} {'ratio':>6} {'end-to-end s':>13} {'ratio':>6}")
    labels = {"plain": "plain run (no analysis)", "cost": "cost model",
              "full": "cost model + --trace + --detect-races"}
    for m in modes:
        launch_s, wall = best[m]
        print(f"{labels[m]:<44} {launch_s:>9.3f} {launch_s / base_launch:>6.2f} {wall:>13.3f} {wall / base_wall:>6.2f}")
    print(f"predicted device time: {predicted:.1f} us")


if __name__ == "__main__":
    main()
