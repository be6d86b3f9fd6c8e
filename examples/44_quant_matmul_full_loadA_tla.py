"""CATLASS example 44: quant_matmul_full_loadA_tla on simulated Atlas A2 AI cores.

    python examples/44_quant_matmul_full_loadA_tla.py 256 512 1024
    catlass-py run 44_quant_matmul_full_loadA_tla 256 512 1024 --cores 20 --json

D[m, n] = bfloat16(float(A @ B) * scale[n] * per_token_scale[m]) with int8 A and B (both row-major): every cube
core keeps the whole ``128 x k`` panel of A of its blocks in L1 (``BlockMmadTla<MmadFullLoadA>``, shuffle-K on)
and, with ``GemmIdentityBlockSwizzleL1FullLoad<1, 0>`` when m > 128, walks consecutive blocks of one row of A so
the panel is loaded once; int32 blocks go through a 2-stage workspace ring to the vector cores, which dequantise
per token (``EpilogueAtlasA2PerTokenDequantTla``). :mod:`catlass_py.assemblies.quant_matmul_full_load_a_tla` follows
``quant_matmul_full_loadA_tla.cpp``; the launch uses ``min(cores, blocks)`` AI cores. The inputs are generated like
the C++ host code (glibc rand: A, B int8 in -16..16, then the float scales in 0..1).

The host follows the assembly's template parameters: ``--set layout_a=column`` / ``layout_b=column`` store the same
logical A / B column-major (their TLA layouts follow), and D is of ``element_d`` (bf16; fp16 also).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.quant_matmul_full_load_a_tla import L1_TILE, assemble, scheduler_for
from catlass_py.epilogue.block import PerTokenDequantTlaParams
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.quant_matmul_full_load_a_tla import FullLoadABlockMmadArguments
from catlass_py.ops.quant_matmul_full_load_a_tla import quant_matmul_full_load_a_tla
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tla import make_layout_tag

NAME = "44_quant_matmul_full_loadA_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("int8 C = A @ B with A's K panel resident in L1 (BlockMmadTla<MmadFullLoadA>, "
           "GemmIdentityBlockSwizzleL1FullLoad), per-token dequant to bf16 on the vector cores")

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "layout_a": ((RowMajor, ColumnMajor), "the operator stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the operator stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int):
    """Host data like the C++: A [m, k] and B [k, n] (int8, ``FillRandomData(host, -16, 16)``, both row-major),
    scale [n] and per-token scale [m] (float, ``0.0 .. 1.0``), in that order."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(k, n)
    scale = data.fill_random(rng, n, 0.0, 1.0, "float32")
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, "float32")
    return a, b, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.quant_matmul_full_load_a_tla.assemble` (tile shapes,
    scheduler, stages, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    core_num = ex.core_num  # GetCoreNumAic()
    kernel = ex.assemble(assemble, arch, block_scheduler=scheduler_for(m, ex.config.get("l1_tile", L1_TILE)[0]))
    scheduler = kernel.block_scheduler
    l1_tile = kernel.block_mmad.l1_tile_shape
    # LayoutA / LayoutB (RowMajor, or what --set layout_a/b chose) and ElementD (bf16, or --set element_d)
    tag_a, tag_b = kernel.block_mmad.layout_tag_a, kernel.block_mmad.layout_tag_b
    element_d = kernel.block_epilogue.element_d.name

    def arguments(gm):
        mmad = FullLoadABlockMmadArguments(gm["a"], make_layout_tag("int8", tag_a, m, k), gm["b"],
                                           make_layout_tag("int8", tag_b, k, n))
        epi = PerTokenDequantTlaParams(gm["scale"], make_layout_tag("float32", "RowMajor", 1, n), gm["per_token_scale"],
                                       make_layout_tag("float32", "RowMajor", 1, m), gm["d"],
                                       make_layout_tag(element_d, "RowMajor", m, n))
        return kernel.Arguments(GemmCoord(m, n, k), core_num, mmad, epi)

    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "scale": ((n,), "float32"),
                               "per_token_scale": ((m,), "float32")},
               gm={"d": ((m, n), element_d)}, golden=golden.peak_bytes("quant_matmul", m=m, n=n, k=k),
               arguments=arguments)
    kernel.can_implement(arguments({"a": None, "b": None, "scale": None, "per_token_scale": None, "d": None}))
    a, b, scale, pts = ex.inputs(make_inputs, m, n, k)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():  # the operator stores the logical A and B in the kernel's layouts
        d, launch_result = quant_matmul_full_load_a_tla(a, b, scale, pts, core_num=core_num, seed=seed,
                                                        observers=obs, kernel=kernel, options=options,
                                                        return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.quant_matmul(a, b, scale, pts)
            result = golden.compare_data(d, expect, k)  # the C++: CompareData, also for its bf16 D
    return ex.result(
        d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "scheduler": type(scheduler).__name__,
                 "cores_used": min(core_num, kernel.total_blocks((m, n, k))), "l1_tile": "x".join(map(str, l1_tile)),
                 **({"bit_exact": _bit_exact(d, expect)} if ex.numerics else {})},
    )


def _bit_exact(d, expect) -> bool:
    width = f"u{d.dtype.itemsize}"
    return bool(np.array_equal(d.view(width), expect.astype(d.dtype).view(width)))


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
