"""CATLASS example 03: matmul_add, D = A @ B + X (fp16) on simulated Atlas A2 AI cores.

    python examples/03_matmul_add.py 256 512 1024
    catlass-py run 03_matmul_add 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 out of the fixpipe) into a GM workspace; after each block they
signal the vector cores, which add X element-wise (each vector core half a block) and write D. The assembly
follows ``examples/03_matmul_add/matmul_add.cpp``; inputs are generated like the C++ host code (glibc rand).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2ElemWiseOneSource
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.matmul_epilogue import MatmulEpilogue
from catlass_py.layout import RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tile import EpilogueTileCopy
from catlass_py.tile.vector_elementwise import TileElemWiseAdd

NAME = "03_matmul_add"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + element-wise add of X on the vector cores (MatmulEpilogue, full-size workspace)"


def assemble(arch=ATLAS_A2, *, swizzle_direction=0, element="float16", layout_a=RowMajor, layout_b=RowMajor,
             compute_length=16384):
    """Build the kernel like the C++ example. ``swizzle_direction`` is 0 when m > n, else 1 (the C++ picks
    one of two instantiations at runtime); ``element`` ('float16' or 'bfloat16') is the type of A, B, C,
    X and D; ``layout_a``/``layout_b`` swap operand layouts; ``compute_length`` is the epilogue's UB length."""
    # 1. Block-level MMAD: ping-pong with the unit flag, L1 128x256x256, L0 128x256x64.
    dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=True)
    l1_tile_shape = GemmShape(128, 256, 256)
    l0_tile_shape = GemmShape(128, 256, 64)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(element, RowMajor)  # the fixpipe converts the fp32 accumulator to C's type
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: D = C + X with one UB stage of 16384 elements (half a 128x256 block per vector core).
    epilogue_policy = EpilogueAtlasA2ElemWiseOneSource()
    x_type = c_type
    d_type = c_type
    compute_type = c_type
    tile_elem_wise_epilogue = TileElemWiseAdd(arch, compute_type, compute_length)
    epilogue_tile_copy = EpilogueTileCopy(arch, c_type, x_type, None, d_type)
    block_epilogue = BlockEpilogue(epilogue_policy, c_type, x_type, d_type, tile_elem_wise_epilogue, epilogue_tile_copy)

    # 3. Block scheduler: strips of 3 blocks, walking down (m > n) or right (m <= n) first.
    block_scheduler = GemmIdentityBlockSwizzle(3, swizzle_direction)

    # 4. Kernel.
    return MatmulEpilogue(block_mmad, block_epilogue, block_scheduler)


def inputs(m: int, n: int, k: int):
    """Host data like the C++: one glibc stream, A, B, X = FillRandomData<fp16_t>(-5.0f, 5.0f) in that order."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, "float16").reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, "float16").reshape(k, n)
    x = data.fill_random(rng, m * n, lo, hi, "float16").reshape(m, n)
    return a, b, x


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.matmul_add import matmul_add

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num
    a, b, x = ex.inputs(inputs, m, n, k)
    kernel = assemble(arch, swizzle_direction=0 if m > n else 1)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = matmul_add(a, b, x, core_num=core_num, seed=seed, observers=obs, kernel=kernel,
                                      options=options, return_launch=True)
    expect = golden.matmul_add(a, b, x)
    result = golden.compare_data(d, expect, k)
    return ex.result(
        d, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "workspace_bytes": 2 * m * n,
                 "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
