"""CATLASS example 34: single_core_splitk_matmul, C = A @ B (fp16) with K looped on each core.

    python examples/34_single_core_splitk_matmul.py 256 512 2048
    catlass-py run 34_single_core_splitk_matmul 256 512 2048 --cores 8

The vector cores first repack A (row-major) and B (column-major) into NZ workspaces (``PaddingMatrixNZ``).
Every cube core then owns a contiguous range of output blocks and walks their K tiles (K outermost),
storing the first tile and atomically adding the others into an fp32 workspace C; finally the vector cores
cast that into fp16 C (``RemovePaddingNDAndCast``). The assembly follows
``examples/34_single_core_splitk_matmul/single_core_splitk.cpp``; inputs are generated like the C++ host code.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2SingleCoreSplitk
from catlass_py.gemm.block import BlockMmad, SingleCoreSplitkGemmIdentityBlockSwizzle
from catlass_py.gemm.helper import element_accumulator
from catlass_py.kernel.padding import PaddingBuilder
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.kernel.padding_nz import RemovePaddingNDAndCast
from catlass_py.kernel.single_core_slicek_matmul import SingleCoreSplitkMatmul
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tile import TileCopy

NAME = "34_single_core_splitk_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul, K looped on one core with atomic adds into fp32 C (NZ padding prologue, cast epilogue)"


def assemble(arch=ATLAS_A2, *, m_gt_n=True, element="float16", out_dtype="float16", layout_a=RowMajor,
             layout_b=ColumnMajor):
    """Build the kernel like the C++ example. ``m_gt_n`` selects the C++'s runtime branch: L1 128x256x512
    with 2 A / 1 B L1 stages and ``SingleCoreSplitkGemmIdentityBlockSwizzle<20, 0>`` when m > n, else
    L1 256x128x512, 1 A / 2 B stages and ``<20, 1>``; L0 128x128x128 and 2 L0C stages either way."""
    # 1. Padding: RowMajor/ColumnMajor operands are repacked to zN/nZ (PADDING_NZ); zN/nZ ones need none.
    tag_a = PaddingTag.NO_PADDING if layout_a in (zN, nZ) else PaddingTag.PADDING_NZ
    tag_b = PaddingTag.NO_PADDING if layout_b in (zN, nZ) else PaddingTag.PADDING_NZ
    builder_a = PaddingBuilder(tag_a, arch, element, layout_a)
    builder_b = PaddingBuilder(tag_b, arch, element, layout_b)
    acc = element_accumulator(element, element, arch)
    # C: cast the fp32 accumulator workspace to the output type (NO_PADDING) unless it already is fp32.
    remove_padding = None if acc.name == out_dtype else RemovePaddingNDAndCast(
        PaddingTag.NO_PADDING, arch, acc, out_dtype, RowMajor)

    # 2. Operand types after padding; C holds the accumulator type (atomic adds).
    a_type = GemmType(element, builder_a.layout_after_padding)
    b_type = GemmType(element, builder_b.layout_after_padding)
    c_type = GemmType(acc, RowMajor)
    # TileCopyDynamicOptimized: its GM->L1 copies of zN/nZ operands are the plain CopyGmToL1.
    tile_copy = TileCopy(arch, a_type, b_type, c_type)

    # 3. Block-level MMAD and scheduler (the C++'s two branches).
    if m_gt_n:
        policy = MmadAtlasA2SingleCoreSplitk(l1a_stages=2, l1b_stages=1, l0c_stages=2, enable_unit_flag=False)
        l1_tile_shape, scheduler = GemmShape(128, 256, 512), SingleCoreSplitkGemmIdentityBlockSwizzle(20, 0)
    else:
        policy = MmadAtlasA2SingleCoreSplitk(l1a_stages=1, l1b_stages=2, l0c_stages=2, enable_unit_flag=False)
        l1_tile_shape, scheduler = GemmShape(256, 128, 512), SingleCoreSplitkGemmIdentityBlockSwizzle(20, 1)
    l0_tile_shape = GemmShape(128, 128, 128)
    block_mmad = BlockMmad(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, tile_copy=tile_copy)

    # 4. Kernel (BlockEpilogue void).
    return SingleCoreSplitkMatmul(builder_a.padding, builder_b.padding, block_mmad, None, scheduler, remove_padding)


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
    from catlass_py.ops.single_core_splitk_matmul import single_core_splitk_matmul

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num
    a, b = ex.inputs(inputs, m, n, k)
    kernel = assemble(arch, m_gt_n=m > n)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        c, launch_result = single_core_splitk_matmul(a, b, layout_b="column_major", core_num=core_num, seed=seed,
                                                     observers=obs, kernel=kernel, options=options, return_launch=True)
    expect = golden.matmul(a, b)
    result = golden.compare_data(c, expect, k)
    return ex.result(
        c, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"k_tiles_total": kernel.total_blocks((m, n, k)),
                 "workspace_bytes": kernel.get_workspace_size(kernel.Arguments((m, n, k), None, None, None)),
                 "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
