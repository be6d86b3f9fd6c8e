"""Speed of the tuner: timing-only (predict-only) runs against full numerical runs, and sweep throughput
(configurations predicted per second) in-process, on a local process pool and as Ray tasks.

Predict-only vs full: the same example and shape, best of ``--repeat`` runs each (wall and CPU time of the launch
and the whole ``run()``, inputs included: the full run draws its inputs through the input cache, turned off here;
the timing-only run draws none) and the peak memory (tracemalloc), for a few shapes growing in K. Sweep
throughput: ``--configs`` configurations of example 00's CATLASS space at 256 x 512 x 1024 (the tuner README case),
no cache, pool and Ray with ``--jobs`` workers (the first wave includes starting the workers; Ray's own start-up
is reported separately). Nothing here is asserted by the test suite.

    python benchmarks/bench_tune.py [--repeat N] [--configs N] [--jobs N] [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

os.environ.setdefault("CATLASS_PY_CACHE", "0")

from catlass_py.analysis import CostModel  # noqa: E402
from catlass_py.arch import LaunchParams  # noqa: E402
from catlass_py.runner import load_script  # noqa: E402
from catlass_py.tune import LocalExecutor, RayExecutor, SerialExecutor, SweepStats, space_of, sweep  # noqa: E402

MIB = 1 << 20


def _timed(fn, repeat):
    best = (float("inf"), float("inf"), None)
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, (time.perf_counter() - w, time.process_time() - c, out), key=lambda t: t[0])
    return best


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def predict_vs_full(repeat: int) -> None:
    print("predict-only vs full run (00_basic_matmul, 24 cores; wall / CPU seconds, best of "
          f"{repeat}; peak traced memory)")
    example = load_script("00_basic_matmul")
    for args in (["256", "512", "1024"], ["1024", "1024", "1024"], ["1024", "1024", "4096"]):
        def run(numerics, args=args):
            cost = CostModel()
            result = example.run(args, observers=(cost,), options=LaunchParams(numerics=numerics))
            return cost.report.cycles, result.seconds

        full_w, full_c, (full_cycles, full_launch) = _timed(lambda: run(True), repeat)
        pred_w, pred_c, (pred_cycles, pred_launch) = _timed(lambda: run(False), repeat)
        full_mem, pred_mem = _peak(lambda: run(True)), _peak(lambda: run(False))
        same = "same prediction" if full_cycles == pred_cycles else f"DIFFERENT: {full_cycles} vs {pred_cycles}"
        print(f"  {'x'.join(args):>16}  full {full_w:7.2f} s wall {full_c:7.2f} s CPU (launch {full_launch:6.2f} s)  "
              f"predict-only {pred_w:7.2f} s wall {pred_c:7.2f} s CPU (launch {pred_launch:6.2f} s)  "
              f"speed-up {full_w / pred_w:4.1f}x wall {full_c / pred_c:4.1f}x CPU  "
              f"memory {full_mem / MIB:7.1f} -> {pred_mem / MIB:6.1f} MiB  ({same})")


def throughput(configs: int, jobs: int, use_ray: bool) -> None:
    example = load_script("00_basic_matmul")
    space = space_of("00_basic_matmul", "catlass")
    shape = [["256", "512", "1024"]]
    print(f"sweep throughput: {configs} configurations of {space.name!r} at 256x512x1024, 24 cores, no cache, "
          "no pruning")

    def one(label, executor, setup=0.0):
        stats = SweepStats()
        t0 = time.perf_counter()
        rows = list(sweep(example, shape, space, arch="AtlasA2", cores=24, executor=executor, prune=False,
                          limit=configs, stats=stats))
        wall = time.perf_counter() - t0
        executor.close()
        best = min((r for r in rows if r.ok), key=lambda r: r.time_us)
        extra = f" (+ {setup:.1f} s start-up)" if setup else ""
        print(f"  {label:<28} {stats.evaluated / wall:6.2f} configurations/s  ({stats.evaluated} in {wall:.1f} s"
              f"{extra}; best {best.time_us:.2f} us {best.key})")
        return rows

    one("in-process (1 core)", SerialExecutor())
    one(f"process pool ({jobs} workers)", LocalExecutor(jobs))
    if use_ray:
        try:
            t0 = time.perf_counter()
            executor = RayExecutor(None, num_cpus=jobs)
            setup = time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"  Ray: not available ({exc})")
            return
        one(f"Ray tasks ({executor.workers} CPUs, local)", executor, setup)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--configs", type=int, default=48)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--no-ray", action="store_true")
    ns = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    predict_vs_full(ns.repeat)
    throughput(ns.configs, ns.jobs, not ns.no_ray)


if __name__ == "__main__":
    main()
