"""CATLASS example 42: quant_optimized_matmul_tla on simulated Atlas A2 AI cores.

    python examples/42_quant_optimized_matmul_tla.py 256 512 1024
    catlass-py run 42_quant_optimized_matmul_tla 256 512 1024 --cores 20 --json

D[m, n] = bfloat16(float(A @ B) * scale[n] * per_token_scale[m]) with int8 A (row-major) and B (column-major):
``QuantOptimizedMatmulTla`` runs ``BlockMmadTla<MmadAtlasA2Preload<false, true>>`` on the cube cores (after the
vector cores padded an operand whose leading dimension is not a multiple of 256 elements), hands each int32 block
through a 2-stage workspace ring to the vector cores, which dequantise per token
(``EpilogueAtlasA2PerTokenDequantTla``). :mod:`catlass_py.assemblies.quant_optimized_matmul_tla` follows
``quant_optimized_matmul_tla.cpp`` (swizzle ``<3,0>`` when m > n, else ``<3,1>``). The inputs are generated like
the C++ host code (glibc rand: A and B int8 in -5..5, B in its column-major storage order, then the float scales in
0..1).
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.quant_optimized_matmul_tla import assemble, padding_for, swizzle_for
from catlass_py.ops.quant_optimized_matmul_tla import quant_optimized_matmul_tla
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional

NAME = "42_quant_optimized_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("int8 C = A @ B with the TLA preload block and padding prologues, per-token dequant to bf16 on the "
           "vector cores (QuantOptimizedMatmulTla)")

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "layout_a": ((RowMajor, ColumnMajor), "the padding tile copies take A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the padding tile copies take B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int):
    """Host data like the C++: A [m, k] and B (int8, ``FillRandomData(host, -5, 5)``; B filled in its column-major
    storage order), scale [n] and per-token scale [m] (float, ``0.0 .. 1.0``), in that order."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -5, 5, "int8").reshape(m, k)
    b = data.fill_random(rng, k * n, -5, 5, "int8").reshape(n, k).T
    scale = data.fill_random(rng, n, 0.0, 1.0, "float32")
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, "float32")
    return a, b, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.quant_optimized_matmul_tla.assemble` (tile shapes,
    swizzle, padding, stages, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    pad_a, pad_b = padding_for(m, n, k, "RowMajor", "ColumnMajor")
    kernel = ex.assemble(assemble, arch, padding_a=pad_a, padding_b=pad_b, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    pad_a, pad_b = kernel.padding_a is not None, kernel.padding_b is not None
    l1 = kernel.block_mmad.l1_tile_shape
    gm = {"d": ((m, n), "bfloat16")}
    if pad_a:
        gm["wa"] = ((-(-m // l1.m) * l1.m * -(-k // l1.k) * l1.k,), "int8")
    if pad_b:
        gm["wb"] = ((-(-k // l1.k) * l1.k * -(-n // l1.n) * l1.n,), "int8")
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "scale": ((n,), "float32"),
                               "per_token_scale": ((m,), "float32")}, gm=gm,
               golden=golden.peak_bytes("quant_matmul", m=m, n=n, k=k))
    a, b, scale, pts = ex.inputs(make_inputs, m, n, k)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = quant_optimized_matmul_tla(a, b, scale, pts, core_num=ex.core_num, seed=seed,
                                                      observers=obs, kernel=kernel, options=options,
                                                      return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.quant_matmul(a, b, scale, pts)
            result = golden.compare_data(d, expect, k)
    return ex.result(
        d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "swizzle": f"<{swizzle[0]},{swizzle[1]}>",
                 "padding_a": pad_a, "padding_b": pad_b,
                 **({"bit_exact": _bit_exact(d, expect)} if ex.numerics else {})},
    )


def _bit_exact(d, expect) -> bool:
    return bool(np.array_equal(d.view(np.uint16), expect.astype(ml_dtypes.bfloat16).view(np.uint16)))


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
