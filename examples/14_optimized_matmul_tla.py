"""CATLASS example 14: optimized_matmul_tla on simulated Atlas A2 AI cores.

    python examples/14_optimized_matmul_tla.py 256 512 1024
    catlass-py run 14_optimized_matmul_tla 256 512 1024 --cores 20 --json

C[m, n] = A[m, k] @ B[k, n], fp16, A row-major and B column-major, through ``OptimizedMatmulTla``: the cube cores
run ``BlockMmadTla<MmadAtlasA2Preload<true, true>>`` (shuffle-K, the next block's first K tile prefetched during the
last one); an operand whose leading dimension is not a multiple of 256 elements is first copied by the vector cores
into a padded workspace (``PaddingMatrixBlockND``, one L1 tile per block). The four padding cases and the swizzle
(``<3,0>`` when m > n, else ``<3,1>``) are chosen at run time like ``optimized_matmul_tla.cpp``
(:mod:`catlass_py.assemblies.optimized_matmul_tla`). The inputs are generated like the C++ host code (glibc rand,
``-5.0f..5.0f``, A then B in its column-major storage order).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.optimized_matmul_tla import assemble, padding_for, swizzle_for
from catlass_py.ops.optimized_matmul_tla import optimized_matmul_tla
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional

NAME = "14_optimized_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("C = A @ B, fp16, A row-major and B column-major, on TLA tensors (OptimizedMatmulTla + "
           "BlockMmadTla<MmadAtlasA2Preload>, PaddingMatrixBlockND prologues when needed)")


def make_inputs(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A [m, k] and B [k, n], fp16, as the C++ fills them: ``FillRandomData<fp16_t>(host, -5.0f, 5.0f)`` from glibc's
    default stream, A first, B in its column-major storage order."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, np.float32(-5.0), np.float32(5.0), "float16").reshape(m, k)
    b = data.fill_random(rng, k * n, np.float32(-5.0), np.float32(5.0), "float16").reshape(n, k).T
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.optimized_matmul_tla.assemble` (tile shapes,
    swizzle, padding, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    pad_a, pad_b = padding_for(m, n, k, "RowMajor", "ColumnMajor")
    kernel = ex.assemble(assemble, arch, padding_a=pad_a, padding_b=pad_b, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    pad_a, pad_b = kernel.padding_a is not None, kernel.padding_b is not None
    l1 = kernel.block_mmad.l1_tile_shape
    gm = {"c": ((m, n), "float16")}
    if pad_a:
        gm["wa"] = ((-(-m // l1.m) * l1.m * -(-k // l1.k) * l1.k,), "float16")
    if pad_b:
        gm["wb"] = ((-(-k // l1.k) * l1.k * -(-n // l1.n) * l1.n,), "float16")
    ex.reserve(kernel, inputs={"a": ((m, k), "float16"), "b": ((k, n), "float16")}, gm=gm,
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k))
    a, b = ex.inputs(make_inputs, m, n, k)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        c, launch_result = optimized_matmul_tla(a, b, core_num=ex.core_num, seed=seed, observers=obs, kernel=kernel,
                                                options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = golden.compare_data(c, expect, k)
    return ex.result(
        c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "swizzle": f"<{swizzle[0]},{swizzle[1]}>",
                 "padding_a": pad_a, "padding_b": pad_b},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
