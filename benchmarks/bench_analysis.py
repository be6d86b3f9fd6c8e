"""Overhead of the analyses on example 10 (README shape by default), measured in one process.

    python benchmarks/bench_analysis.py [G m n k] [--cores N] [--repeat R] [--profile]

Runs the example plain (no analysis observer), with an observer that asks for every event and ignores them
(what building every event costs the machine; a cost model alone takes tile templates instead, see
``ObserverBus.templates``), with the cost model, with the race detector (``--detect-races``),
with both (what the CLI's ``--detect-races`` adds to its plain run, which always costs the launch), and with
everything the CLI can switch on (cost model recording a timeline, race detector, Chrome trace written to a
temporary file). Each of ``--repeat`` rounds runs every configuration once, back to back. It prints the best
CPU time of the launch (the simulated launch alone, ``time.process_time`` from launch start to end: unlike wall
time it does not grow when other processes share the machine), its wall time, and the end-to-end wall time
(input generation, launch, golden, compare), each with the median over the rounds of its ratio to the plain run
of the same round.

Memory: the peak of the memory Python and numpy allocate, traced with ``tracemalloc`` in separate runs (tracing
slows allocation-heavy code, so the timed runs are untraced). The peak is taken from the launch's start (the
inputs, the output and the workspace already resident) to its end; ``footprint`` is that peak, ``launch`` the
part the launch itself added on top of what was resident when it started. Process RSS cannot compare two
configurations in one process (its peak only grows, and freed memory is not always returned), hence tracemalloc.

Targets: ``--detect-races`` at most 2x the time and 1.5x the memory of a plain run; the cost
model at most +15 % of a launch. ``--profile`` adds a cProfile of a launch with the cost model and the race
detector (the functions of the pipe model, the detector and the cost model, by own time). Never asserted in the
test suite.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import tempfile
import time
import tracemalloc

from catlass_py.analysis import CostModel, write_chrome_trace
from catlass_py.arch import LaunchParams, Observer
from catlass_py.cli import load_script

MIB = 1 << 20
MODES = ("plain", "events", "cost", "races", "cost+races", "full")
LABELS = {
    "plain": "plain run (no analysis)",
    "events": "every event built, none used",
    "cost": "cost model",
    "races": "--detect-races (race detector alone)",
    "cost+races": "cost model + race detector",
    "full": "cost model recording + --trace + --detect-races",
}


class _Everything(Observer):
    """Asks for every event and does nothing with them: the machine's cost of building them."""

    interests = None


class LaunchClock(Observer):
    """CPU time of the launch (all threads of the process), from its start to its end. Put it last among the
    launch's observers: the bus tells them of the launch's end in order, so an observer after the clock (a cost
    model's end-of-launch timing pass) would run after the clock stopped."""

    interests = frozenset()

    def __init__(self):
        self.cpu = 0.0

    def on_launch_start(self, info) -> None:
        self._t0 = time.process_time()

    def on_launch_end(self, info, error) -> None:
        self.cpu = time.process_time() - self._t0


class _LaunchMemory(Observer):
    """Traced memory at the launch's start and its peak until the launch's end (tracemalloc must be running)."""

    interests = frozenset()

    def __init__(self):
        self.resident = self.peak = 0

    def on_launch_start(self, info) -> None:
        tracemalloc.reset_peak()
        self.resident = tracemalloc.get_traced_memory()[0]

    def on_launch_end(self, info, error) -> None:
        self.peak = max(self.peak, tracemalloc.get_traced_memory()[1])


def _run(example, argv, cores, mode, tmpdir, extra_observers=()):
    clock = LaunchClock()
    observers, options, cost = [*extra_observers], None, None
    if mode == "events":
        observers.append(_Everything())
    if mode in ("cost", "cost+races", "full"):
        cost = CostModel(record=mode == "full")
        observers.append(cost)
    if mode in ("races", "cost+races", "full"):
        options = LaunchParams(detect_races=True)
    observers.append(clock)  # last: its end follows every other observer's end-of-launch work
    t0 = time.perf_counter()
    result = example.run(argv, cores=cores, observers=tuple(observers), options=options)
    extra = 0.0
    if mode == "full":
        t1 = time.perf_counter()
        write_chrome_trace(cost, os.path.join(tmpdir, "trace.json"))
        extra = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    assert result.passed
    return clock.cpu + extra, result.seconds + extra, wall, cost


def _memory(example, argv, cores, mode, tmpdir) -> tuple[int, int]:
    probe = _LaunchMemory()
    tracemalloc.start()
    try:
        _run(example, argv, cores, mode, tmpdir, extra_observers=(probe,))
    finally:
        tracemalloc.stop()
    return probe.peak, probe.peak - probe.resident


def _profile(example, argv, cores, top: int = 25) -> str:
    """cProfile of a launch with the cost model and the race detector (the simulated cores are greenlets on this
    thread, so one profiler sees them all)."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        example.run(argv, cores=cores, observers=(CostModel(),), options=LaunchParams(detect_races=True))
    finally:
        prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(r"hazards|pipe_order|cost\.py|events\.py", top)
    return out.getvalue()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", nargs="*", default=["128", "512", "1024", "2048"])
    ap.add_argument("--cores", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true",
                    help="also print a cProfile of a launch with the cost model and the race detector")
    ns = ap.parse_args(argv)
    example = load_script("10")
    runs: dict[str, list[tuple[float, float, float]]] = {m: [] for m in MODES}
    predicted = None
    with tempfile.TemporaryDirectory() as tmp:
        _run(example, ns.shape, ns.cores, "plain", tmp)  # warm caches (kernel assembly, index maps)
        for _ in range(ns.repeat):
            for m in MODES:
                *times, cost = _run(example, ns.shape, ns.cores, m, tmp)
                runs[m].append(tuple(times))
                if m == "full":
                    predicted = cost.report.microseconds
        memory = {m: _memory(example, ns.shape, ns.cores, m, tmp) for m in ("plain", "races", "cost", "cost+races")}
    # Times: the best of the repeats. Ratios: the median over the repeats of each run against the plain run of the
    # same round (the modes of a round run back to back, so a load that drifts over minutes cancels out).
    best = {m: tuple(min(col) for col in zip(*runs[m])) for m in MODES}
    ratio = {m: tuple(statistics.median(t[i] / p[i] for t, p in zip(runs[m], runs["plain"])) for i in range(3))
             for m in MODES}
    print(f"example 10, shape {' '.join(ns.shape)}, {ns.repeat} rounds: best time, median ratio to the plain run")
    print(f"{'configuration':<50} {'launch cpu s':>12} {'ratio':>6} {'launch s':>9} {'ratio':>6} {'end-to-end s':>13} "
          f"{'ratio':>6}")
    for m in MODES:
        row = "".join(f" {t:>{w}.3f} {r:>6.2f}" for t, r, w in zip(best[m], ratio[m], (12, 9, 13)))
        print(f"{LABELS[m]:<50}{row}")
    print(f"predicted device time: {predicted:.1f} us")
    print()
    print("memory (tracemalloc, launch start to end; separate untimed runs)")
    print(f"{'configuration':<50} {'footprint MiB':>13} {'ratio':>6} {'launch MiB':>11} {'ratio':>6}")
    for m in ("plain", "races", "cost", "cost+races"):
        peak, added = memory[m]
        print(f"{LABELS[m]:<50} {peak / MIB:>13.1f} {peak / memory['plain'][0]:>6.2f} {added / MIB:>11.1f} "
              f"{added / max(1, memory['plain'][1]):>6.2f}")
    print()
    cpu = {m: ratio[m][0] for m in MODES}
    races_t = cpu["races"]
    cli_t = statistics.median(a[0] / b[0] for a, b in zip(runs["cost+races"], runs["cost"]))
    races_m = memory["races"][0] / memory["plain"][0]
    cli_m = memory["cost+races"][0] / memory["cost"][0]
    share = cpu["cost"] - 1
    build = cpu["events"] - 1
    print("limits (launch CPU time, memory footprint)")
    print(f"  --detect-races / plain, time:   {races_t:.2f}x with the race detector alone, {cli_t:.2f}x as the CLI runs "
          f"it (both runs with the cost model)   limit 2x")
    print(f"  --detect-races / plain, memory: {races_m:.2f}x, {cli_m:.2f}x with the cost model   limit 1.5x")
    print(f"  cost model's share of a launch: {share:+.1%} (alone it takes tile templates and keeps the plain run's "
          f"shortcuts; building every event for an observer that takes none costs {build:+.1%})   limit +15%")
    if ns.profile:
        print()
        print("cProfile of a launch with the cost model and the race detector (pipe model, detector, cost model and "
              "event functions, by own time):")
        print(_profile(example, ns.shape, ns.cores))


if __name__ == "__main__":
    main()
