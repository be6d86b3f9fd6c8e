"""CATLASS example 52: quant_multi_core_splitk_matmul_tla on simulated Atlas A2 AI cores.

    python examples/52_quant_multi_core_splitk_matmul_tla.py 256 512 1024
    catlass-py run 52_quant_multi_core_splitk_matmul_tla 256 512 1024 --cores 20 --json

D[m, n] = bfloat16(float(A @ B) * scale[n] * per_token_scale[m]) with int8 A (row-major) and B (column-major): the
cube cores split K (``SplitkGemmIdentityBlockSwizzle<3, 0>``, factor ``aicCoreNum / blocks``) and store int32
partial sums through ``BlockMmadTla<MmadPingpong>``, the vector cores add the slices (``SplitkReduceAdd``) and
dequantise per token (``EpilogueAtlasA2PerTokenDequantTla``): :mod:`catlass_py.assemblies.quant_multi_core_splitk_matmul_tla`
follows ``quant_multi_core_splitk_matmul_tla.cpp``. The inputs are generated like the C++ host code (glibc rand:
A and B int8 in -16..16, B in its column-major storage order, then the float scales in 0..1).
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.quant_multi_core_splitk_matmul_tla import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.quant_multi_core_splitk_matmul_tla import quant_multi_core_splitk_matmul_tla
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tla import make_layout_tag

NAME = "52_quant_multi_core_splitk_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("int8 C = A @ B split over cube cores along K, int32 reduction and per-token dequant to bf16 on the "
           "vector cores (QuantMultiCoreSplitkMatmulTla + BlockMmadTla<MmadPingpong>)")

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "layout_a": ((RowMajor, ColumnMajor), "the operator stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the operator stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int):
    """Host data like the C++: A [m, k] and B (int8, ``FillRandomData(host, -16, 16)``; B filled in its
    column-major storage order), scale [n] and per-token scale [m] (float, ``0.0 .. 1.0``), in that order.
    Returns logical (a [m, k], b [k, n], scale, per_token_scale)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(n, k).T
    scale = data.fill_random(rng, n, 0.0, 1.0, "float32")
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, "float32")
    return a, b, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.quant_multi_core_splitk_matmul_tla.assemble` (tile
    shapes, swizzle, stages, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    core_num = ex.core_num  # GetCoreNumAic()
    kernel = ex.assemble(assemble, arch)
    layouts = (make_layout_tag("int8", "RowMajor", m, k), make_layout_tag("int8", "ColumnMajor", k, n),
               make_layout_tag("float32", "RowMajor", 1, n), make_layout_tag("float32", "RowMajor", 1, m),
               make_layout_tag("bfloat16", "RowMajor", m, n))
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "scale": ((n,), "float32"),
                               "per_token_scale": ((m,), "float32")},
               gm={"d": ((m, n), "bfloat16")}, golden=golden.peak_bytes("quant_matmul", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), core_num, gm["a"], gm["b"], gm["scale"],
                                                     gm["per_token_scale"], gm["d"], *layouts))
    a, b, scale, pts = ex.inputs(make_inputs, m, n, k)
    obs = ex.observers(kernel.total_blocks((m, n, k), core_num))
    with ex.timing():
        d, launch_result = quant_multi_core_splitk_matmul_tla(
            a, b, scale, pts, core_num=core_num, seed=seed, observers=obs, kernel=kernel, options=options,
            return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.quant_matmul(a, b, scale, pts)
            result = golden.compare_data(d, expect, k)
    return ex.result(
        d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k), core_num),
                 "splitk_factor": kernel.get_splitk_factor(m, n, k, core_num),
                 **({"bit_exact": _bit_exact(d, expect)} if ex.numerics else {})},
    )


def _bit_exact(d, expect) -> bool:
    return bool(np.array_equal(d.view(np.uint16), expect.astype(ml_dtypes.bfloat16).view(np.uint16)))


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
