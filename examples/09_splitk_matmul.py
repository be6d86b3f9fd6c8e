"""CATLASS example 09: splitk_matmul, C = A @ B (fp16) with K split across cores, on simulated Atlas A2.

    python examples/09_splitk_matmul.py 256 256 4096
    catlass-py run 09_splitk_matmul 256 256 4096 --cores 8

When there are fewer output blocks than cube cores, the K tiles of every block are split into slices
(``SplitkGemmIdentityBlockSwizzle``); each slice's fp32 partial sum goes to its own workspace slice and the
vector cores add the slices and cast to fp16 (``SplitkReduceAdd``). B is column-major. The assembly follows
``examples/09_splitk_matmul/splitk_matmul.cpp``; inputs are generated like the C++ host code (glibc rand).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad
from catlass_py.gemm.block.swizzle_splitk import SplitkGemmIdentityBlockSwizzle
from catlass_py.kernel.splitk_matmul import SplitkMatmul, SplitkReduceAdd
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional

NAME = "09_splitk_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul with K split across cores, fp32 workspace slices reduced on the vector cores"


def assemble(arch=ATLAS_A2, *, element="float16", out_dtype="float16", layout_a=RowMajor, layout_b=ColumnMajor,
             reduce_stages=1, compute_length=None):
    """Build the kernel like the C++ example (A RowMajor, B ColumnMajor, fp16 in and out, fp32 workspace).
    ``compute_length`` defaults to the whole UB (192 KiB / sizeof(float))."""
    # 1. Block-level MMAD: ping-pong with the unit flag, L1 128x256x256, L0 128x256x64, fp32 C slices.
    dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=True)
    l1_tile_shape = GemmShape(128, 256, 256)
    l0_tile_shape = GemmShape(128, 256, 64)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType("float32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    block_epilogue = None  # void: the reduction runs after the matmul

    # 2. ReduceAdd: 1 stage over the whole UB, fp32 -> fp16.
    if compute_length is None:
        compute_length = arch.ub_size // 4
    reduce_add = SplitkReduceAdd(arch, "float32", out_dtype, reduce_stages, compute_length)

    # 3. Scheduler (strips of 3 block-rows, walking down) and kernel.
    block_scheduler = SplitkGemmIdentityBlockSwizzle(3, 0)
    return SplitkMatmul(block_mmad, block_epilogue, block_scheduler, reduce_add)


def inputs(m: int, n: int, k: int):
    """Host data like the C++: A then B (B in its column-major storage order) = FillRandomData<fp16_t>(-5.0f,
    5.0f). Returns logical (a [m, k], b [k, n])."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, "float16").reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, "float16").reshape(n, k).T
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.splitk_matmul import splitk_matmul

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num
    a, b = ex.inputs(inputs, m, n, k)
    kernel = assemble(arch)
    obs = ex.observers(kernel.total_blocks((m, n, k), core_num))
    with ex.timing():
        c, launch_result = splitk_matmul(a, b, layout_b="column_major", core_num=core_num, seed=seed, observers=obs,
                                         kernel=kernel, options=options, return_launch=True)
    expect = golden.matmul(a, b)
    result = golden.compare_data(c, expect, k)
    factor = kernel.get_splitk_factor(m, n, k, core_num)
    return ex.result(
        c, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"splitk_factor": factor, "total_blocks": kernel.total_blocks((m, n, k), core_num),
                 "workspace_bytes": 4 * m * n * factor, "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
