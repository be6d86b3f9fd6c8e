"""Host-side costs of example 10: generating its inputs, the input cache, and the golden.

Measured in this one process with BLAS limited to 1 thread (threadpoolctl), best of ``--repeat`` runs (3):

* host data: :func:`catlass_py.data.example10_inputs` against a reference copy of the previous generator (the
  request in lanes advanced together, raw values transposed into stream order tile by tile, fills applied to
  the transposed values; kept here, not in the package) and, extrapolated, the scalar ``GlibcRand.rand``;
* input cache: generating, generating and storing, and loading the same inputs with
  :func:`catlass_py.data.cached_inputs` (a temporary cache directory);
* golden: :func:`catlass_py.golden.grouped_matmul_slice_m_per_token_dequant` against the fastest exact numpy
  computation written out below (int8 products summed in float32 BLAS on K chunks of at most 1024, int32
  accumulation, float32 dequant), at the README shape and for one 2048^3 group.

Every pair is checked bit for bit. Timings are printed, never asserted.

    python benchmarks/bench_host.py [--repeat N] [--shape G m n k]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import ml_dtypes
import numpy as np
from threadpoolctl import threadpool_limits

from catlass_py import data, golden

# --------------------------------------------------------------------------------------------------
# Reference: the previous generator (glibc TYPE_3 rand(), stdlib/random_r.c), lane-major with tile transposes
# --------------------------------------------------------------------------------------------------

_DEG, _SEP, _MASK32 = 31, 3, 0xFFFFFFFF


def _mulmod32(x, y):
    return np.matmul(x, y) & np.uint64(_MASK32)


def _step_matrix():
    m = np.zeros((_DEG, _DEG), dtype=np.uint64)
    for i in range(_DEG - 1):
        m[i, i + 1] = 1
    m[_DEG - 1, 0] = 1
    m[_DEG - 1, _DEG - _SEP] += 1
    return m


_POW2 = [_step_matrix()]


def _m_pow2(i):
    while len(_POW2) <= i:
        _POW2.append(_mulmod32(_POW2[-1], _POW2[-1]))
    return _POW2[i]


class RefGlibcRand:
    """The previous bulk generator: lanes whose start windows come from jump-ahead, three raw rows per numpy
    add, then a tiled lane-major -> stream-order transpose of the raw values, in chunks of 2^23."""

    def __init__(self):
        self._win = list(data.GlibcRand().state())  # seed 1, 310 values discarded

    def _block(self, n):
        win0 = np.array(self._win, dtype=np.uint64)
        if n <= 1024:
            lane_len, lanes, log_l = n, 1, 0
        else:
            log_l = min(14, max(6, round(math.log2(math.sqrt(2.0 * n)))))
            lane_len = 1 << log_l
            lanes = -(-n // lane_len)
        starts = np.empty((_DEG, lanes), dtype=np.uint64)
        starts[:, 0] = win0
        filled, t = 1, 0
        while filled < lanes:
            take = min(filled, lanes - filled)
            starts[:, filled:filled + take] = _mulmod32(_m_pow2(log_l + t), starts[:, :take])
            filled += take
            t += 1
        y = np.empty((_DEG + lane_len, lanes), dtype=np.uint32)
        y[:_DEG] = starts
        end = _DEG + lane_len
        for j in range(_DEG, end, _SEP):
            h = min(_SEP, end - j)
            np.add(y[j - _DEG:j - _DEG + h], y[j - _SEP:j - _SEP + h], out=y[j:j + h])
        if n >= _DEG:
            idx = np.arange(n - _DEG, n)
            self._win = [int(v) for v in y[_DEG + idx % lane_len, idx // lane_len]]
        else:
            self._win = self._win[n:] + [int(v) for v in y[_DEG:_DEG + n, 0]]
        out = np.empty(n, dtype=np.uint32)
        full = n // lane_len
        grid = out[:full * lane_len].reshape(full, lane_len)
        for c in range(0, full, 64):
            c1 = min(full, c + 64)
            for r in range(0, lane_len, 1024):
                r1 = min(lane_len, r + 1024)
                np.right_shift(y[_DEG + r:_DEG + r1, c:c1].T, 1, out=grid[c:c1, r:r1])
        rest = n - full * lane_len
        if rest:
            np.right_shift(y[_DEG:_DEG + rest, full], 1, out=out[full * lane_len:])
        return out

    def chunks(self, n, chunk=1 << 23):
        done = 0
        while done < n:
            c = min(chunk, n - done)
            yield self._block(c)
            done += c


def ref_fill_int8(rng, n, low, high):
    out = np.empty(n, dtype=np.int8)
    pos = 0
    for u in rng.chunks(n):
        v = np.remainder(u, np.uint32(high - low + 1), out=u).view(np.int32)
        v += np.int32(low)
        out[pos:pos + u.size] = v
        pos += u.size
    return out


def ref_fill_bf16_double(rng, n, low, high):
    out = np.empty(n, dtype=ml_dtypes.bfloat16)
    pos = 0
    for u in rng.chunks(n):
        v = low + (u.astype(np.float64) / float(data.RAND_MAX)) * (high - low)
        out[pos:pos + u.size] = v.astype(np.float32).astype(ml_dtypes.bfloat16)
        pos += u.size
    return out


def ref_example10_inputs(g, m, n, k):
    rng = RefGlibcRand()
    a = ref_fill_int8(rng, m * k, -16, 16).reshape(m, k)
    b = ref_fill_int8(rng, g * k * n, -16, 16).reshape(g, k, n)
    scale = ref_fill_bf16_double(rng, g * n, 0.0, 1.0).reshape(g, n)
    pts = ref_fill_bf16_double(rng, m, 0.0, 1.0)
    group_list = data.generate_group_list(m, g)
    return data.Example10Inputs(a, b, scale, pts, group_list)


# --------------------------------------------------------------------------------------------------
# Reference: the fastest exact numpy computation of example 10's result
# --------------------------------------------------------------------------------------------------


def fastest_exact_gmm(a, b, group_list, scale, pts):
    """int8 products summed in float32 BLAS on K chunks of at most 1024 (exact: |partial sums| <= 2^24),
    accumulated in int32, dequantised in float32 (float(acc) * scale * per-token scale, left to right)."""
    m, k = a.shape
    n = b.shape[2]
    out = np.zeros((m, n), np.float32)
    a32 = a.astype(np.float32)
    start = 0
    for g, end in enumerate(int(v) for v in group_list):
        if end > start:
            b32 = b[g].astype(np.float32)
            acc = np.zeros((end - start, n), np.int32)
            for k0 in range(0, k, 1024):
                acc += (a32[start:end, k0:k0 + 1024] @ b32[k0:k0 + 1024]).astype(np.int32)
            x = acc.astype(np.float32)
            x *= scale[g].astype(np.float32)[None, :]
            x *= pts[start:end].astype(np.float32)[:, None]
            out[start:end] = x
        start = end
    return out


# --------------------------------------------------------------------------------------------------


def _best(fn, repeat):
    """(best wall seconds, best CPU seconds, last result) over ``repeat`` calls."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        out = None
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        cpu = min(cpu, time.process_time() - c)
        wall = min(wall, time.perf_counter() - w)
    return wall, cpu, out


def _same(x, y) -> bool:
    xs = x.as_dict().values() if hasattr(x, "as_dict") else [x]
    ys = y.as_dict().values() if hasattr(y, "as_dict") else [y]
    return all(u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u.view(np.uint8), v.view(np.uint8))
               for u, v in zip(xs, ys))


def _row(label, wall, cpu, extra=""):
    print(f"  {label:<46} {wall * 1e3:9.1f} ms wall {cpu * 1e3:9.1f} ms CPU  {extra}")


def bench_host_data(shape, repeat):
    g, m, n, k = shape
    count = m * k + g * k * n + g * n + m
    print(f"host data: example10_inputs{shape} ({count / 1e6:.1f} M rand() values)")
    new_w, new_c, new = _best(lambda: data.example10_inputs(*shape), repeat)
    ref_w, ref_c, ref = _best(lambda: ref_example10_inputs(*shape), repeat)
    sample = 200_000
    rng = data.GlibcRand()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(sample):
        rng.rand()
    scalar_w = (time.perf_counter() - w0) * count / sample
    scalar_c = (time.process_time() - c0) * count / sample
    _row("current generator", new_w, new_c)
    _row("previous generator (reference copy)", ref_w, ref_c,
         f"-> {ref_c / new_c:.2f}x less CPU, {ref_w / new_w:.2f}x wall; bit-exact {_same(new, ref)}")
    _row("scalar GlibcRand.rand (extrapolated)", scalar_w, scalar_c, f"-> {scalar_c / new_c:.0f}x less CPU")
    return new


def bench_cache(shape, repeat):
    g, m, n, k = shape
    print("input cache (a temporary directory)")
    saved = {v: os.environ.get(v) for v in ("CATLASS_PY_CACHE", "CATLASS_PY_CACHE_DIR")}
    with tempfile.TemporaryDirectory(prefix="catlass_py-bench-cache-") as d:
        os.environ["CATLASS_PY_CACHE"] = "1"
        os.environ["CATLASS_PY_CACHE_DIR"] = d
        try:
            gen_w, gen_c, fresh = _best(lambda: data.example10_inputs(*shape), repeat)
            w, c = time.perf_counter(), time.process_time()
            _, hit = data.cached_inputs("bench", data.example10_inputs, g, m, n, k)
            store_w, store_c = time.perf_counter() - w, time.process_time() - c
            assert not hit
            load_w, load_c, (loaded, hit) = _best(
                lambda: data.cached_inputs("bench", data.example10_inputs, g, m, n, k), repeat)
            assert hit
        finally:
            for v, x in saved.items():
                if x is None:
                    os.environ.pop(v, None)
                else:
                    os.environ[v] = x
    _row("uncached: generate", gen_w, gen_c)
    _row("uncached: generate and store (first run)", store_w, store_c)
    _row("cached: load (repeated run)", load_w, load_c,
         f"-> {gen_c / load_c:.1f}x less CPU, {gen_w / load_w:.1f}x wall than generating; "
         f"bit-exact {_same(loaded, fresh)}")


def bench_golden(name, args, repeat):
    print(f"golden: {name}")
    ref_w, ref_c, ref = _best(lambda: fastest_exact_gmm(*args), repeat)
    gold_w, gold_c, out = _best(lambda: golden.grouped_matmul_slice_m_per_token_dequant(*args), repeat)
    _row("fastest exact numpy (reference)", ref_w, ref_c)
    _row("catlass_py.golden", gold_w, gold_c,
         f"-> {gold_w / ref_w:.2f}x of the reference (wall); bit-exact {_same(out, ref)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shape", type=int, nargs=4, default=(128, 512, 1024, 2048), metavar=("G", "m", "n", "k"))
    ns = parser.parse_args()
    shape = tuple(ns.shape)
    with threadpool_limits(1):
        x = bench_host_data(shape, ns.repeat)
        bench_cache(shape, ns.repeat)
        bench_golden(f"README shape {shape}", (x.a, x.b, x.group_list, x.scale, x.per_token_scale), ns.repeat)
        rng = np.random.default_rng(0)
        s = 2048
        one = (rng.integers(-16, 17, (s, s), dtype=np.int8), rng.integers(-16, 17, (1, s, s), dtype=np.int8),
               np.array([s], np.int64), rng.random((1, s)).astype(ml_dtypes.bfloat16),
               rng.random(s).astype(ml_dtypes.bfloat16))
        bench_golden("one group 2048 x 2048 x 2048", one, ns.repeat)


if __name__ == "__main__":
    main()
