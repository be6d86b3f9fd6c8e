"""Speed of the fp8 / fp4 / e8m0 round-to-nearest casts: :func:`catlass_py.numerics.cast` on fp16, bf16 and fp32
arrays (ml_dtypes' own casts with the NaN cases patched), the exact grid the same values take as float64 input
(what every such cast cost before), and bare ``ndarray.astype`` of ml_dtypes (the floor). Best of N per figure;
the ratio exact / cast is the speed-up. Never asserted in tests (tests/numerics/test_numerics_fast_narrow_casts.py
checks the bits).

    python benchmarks/bench_casts.py [--size N] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time

import ml_dtypes
import numpy as np

from catlass_py.numerics import cast

TARGETS = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn")
SOURCES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32}


def best(fn, repeat: int) -> float:
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="elements per cast")
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    base = rng.standard_normal(ns.size) * 64  # most values in range, some overflowing e4m3 / fp4
    print(f"{ns.size} elements, best of {ns.repeat}; ms per cast (RINT, non-saturating / saturating)")
    print(f"{'source -> target':<26} {'cast':>8} {'exact grid':>11} {'speed-up':>9} {'astype':>8} {'sat cast':>9} "
          f"{'sat exact':>10} {'speed-up':>9}")
    ratios = []
    for (sname, st), dst in ((s, d) for s in SOURCES.items() for d in TARGETS):
        x = base.astype(st)
        wide = x.astype(np.float64)
        dt = getattr(ml_dtypes, dst)
        with np.errstate(all="ignore"):
            fast = best(lambda: cast(x, dst), ns.repeat)
            exact = best(lambda: cast(wide, dst), ns.repeat)
            floor = best(lambda: x.astype(dt), ns.repeat)
            sfast = best(lambda: cast(x, dst, saturate=True), ns.repeat)
            sexact = best(lambda: cast(wide, dst, saturate=True), ns.repeat)
        ratios += [exact / fast, sexact / sfast]
        print(f"{sname + ' -> ' + dst:<26} {fast * 1e3:8.2f} {exact * 1e3:11.2f} {exact / fast:8.1f}x "
              f"{floor * 1e3:8.2f} {sfast * 1e3:9.2f} {sexact * 1e3:10.2f} {sexact / sfast:8.1f}x")
    print(f"speed-up over the exact grid: min {min(ratios):.1f}x, median {float(np.median(ratios)):.1f}x, "
          f"max {max(ratios):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
