"""Speed and memory of example 10 (GMM sliceM per-token dequant) against its numpy golden.

Prints simulation time / golden time measured in this one process (best of a few runs each), and the memory
a simulation needs (its resident inputs plus the peak of everything a run allocates, traced with
tracemalloc) against the size of its inputs + output + workspace. Targets: at most
10x for the README shape and at most 4x for the large single group; peak memory under
2 x (inputs + outputs + workspace) + 200 MiB. Nothing here is asserted by the test suite.

    python benchmarks/bench_gmm.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import ml_dtypes
import numpy as np

from catlass_py import golden
from catlass_py.data import example10_inputs
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant as gmm

MIB = 1 << 20


def _best(fn, repeat):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench(name, a, b, gl, scale, pts, cores, repeat):
    run = lambda: gmm(a, b, gl, scale, pts, core_num=cores)  # noqa: E731
    gold = lambda: golden.grouped_matmul_slice_m_per_token_dequant(a, b, gl, scale, pts)  # noqa: E731
    run()  # warm caches (kernel assembly, layouts)
    t_gold, expect = _best(gold, repeat)
    t_sim, d = _best(run, repeat)
    exact = np.array_equal(d.view(np.uint16), expect.astype(d.dtype).view(np.uint16))
    input_bytes = sum(x.nbytes for x in (a, b, gl, scale, pts))
    data_bytes = input_bytes + d.nbytes + 128 * 256 * cores * 2 * 4
    peak = _peak_bytes(run)  # everything a run allocates: output, workspace, core arenas, temporaries
    footprint = input_bytes + peak  # the inputs are resident (wrapped, never copied) while it runs
    budget = 2 * data_bytes + 200 * MIB
    print(f"{name}")
    print(f"  golden {t_gold * 1e3:8.1f} ms   simulation {t_sim * 1e3:8.1f} ms   ratio {t_sim / t_gold:6.2f}x   bit-exact {exact}")
    print(f"  memory: inputs {input_bytes / MIB:.1f} MiB + run peak {peak / MIB:.1f} MiB = {footprint / MIB:.1f} MiB "
          f"(budget 2 x (inputs+outputs+workspace) + 200 MiB = {budget / MIB:.1f} MiB; "
          f"{'within' if footprint <= budget else 'OVER'} budget)")
    return t_sim / t_gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args()

    x = example10_inputs(128, 512, 1024, 2048)
    bench("README shape: 128 groups, m 512, n 1024, k 2048, 24 cores (target <= 10x)",
          x.a, x.b, x.group_list, x.scale, x.per_token_scale, 24, ns.repeat)

    rng = np.random.default_rng(0)
    m = n = k = 2048
    a = rng.integers(-16, 17, (m, k), dtype=np.int8)
    b = rng.integers(-16, 17, (1, k, n), dtype=np.int8)
    scale = rng.random((1, n)).astype(ml_dtypes.bfloat16)
    pts = rng.random(m).astype(ml_dtypes.bfloat16)
    bench("single group 2048 x 2048 x 2048, 24 cores (target <= 4x)",
          a, b, np.array([m], np.int64), scale, pts, 24, ns.repeat)


if __name__ == "__main__":
    main()
