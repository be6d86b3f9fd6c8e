"""CATLASS example 12: quant_matmul, D = fp16((int8 A @ int8 B) * scale[n] * perTokenScale[m]).

    python examples/12_quant_matmul.py 256 512 1024
    catlass-py run 12_quant_matmul 256 512 1024 --cores 4

Single-problem sibling of example 10: the cube cores write int32 blocks into a 2-slot ring per AI core, the
vector cores dequantise them (32 x 256 tiles, per-channel x per-token, fp32) into fp16 D. B is column-major.
The assembly follows ``examples/12_quant_matmul/quant_matmul.cpp``; inputs are generated like the C++ host
code (glibc rand), so the output can be compared with a device dump.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.quant_matmul_multistage_workspace import QuantMatmulMultiStageWorkspace
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul

NAME = "12_quant_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "int8 matmul + per-channel x per-token dequant -> fp16 (QuantMatmulMultiStageWorkspace)"


def assemble(arch=ATLAS_A2, *, swizzle_direction=0, out_dtype="float16", layout_a=RowMajor, layout_b=ColumnMajor,
             workspace_stages=2, ub_stages=2):
    """Build the kernel like the C++ example. ``swizzle_direction`` is 0 when m > n, else 1 (the C++ picks
    one of two instantiations at runtime); ``out_dtype`` ('float16' or 'bfloat16') is the type of D and both
    scales; ``layout_a``/``layout_b`` swap operand layouts (the example: A RowMajor, B ColumnMajor)."""
    # 1. Block-level MMAD: preload 1 tile ahead, 2 L1 / 2 L0A / 2 L0B / 1 L0C stages, shuffle-K.
    dispatch_policy = MmadAtlasA2PreloadAsyncWithCallback(
        preload_stages=1, l1_stages=2, l0a_stages=2, l0b_stages=2, l0c_stages=1,
        enable_unit_flag=False, enable_shuffle_k=True,
    )
    l1_tile_shape = GemmShape(128, 256, 512)
    l0_tile_shape = GemmShape(128, 256, 128)
    a_type = GemmType("int8", layout_a)
    b_type = GemmType("int8", layout_b)
    c_type = GemmType("int32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: per-token dequant, 2 UB stages, 32 x 256 fp32 tiles, column-major tile order.
    epilogue_policy = EpilogueAtlasA2PerTokenDequant(ub_stages=ub_stages)
    scale_type = GemmType(out_dtype, VectorLayout)
    per_token_scale_type = GemmType(out_dtype, VectorLayout)
    d_type = GemmType(out_dtype, RowMajor)
    compute_type = GemmType("float32", RowMajor)
    epilogue_tile_shape = (32, 256)
    tile_row_broadcast_mul = TileRowBroadcastMul(arch, compute_type, epilogue_tile_shape)
    tile_broadcast_one_blk = TileBroadcastOneBlk(arch, compute_type, epilogue_tile_shape[0])
    tile_one_blk_column_broadcast_mul = TileOneBlkColumnBroadcastMul(arch, compute_type, epilogue_tile_shape)
    epilogue_tile_copy = EpilogueTileCopy(arch, c_type, scale_type, per_token_scale_type, d_type)
    block_epilogue = BlockEpilogue(
        epilogue_policy, c_type, scale_type, per_token_scale_type, d_type,
        tile_row_broadcast_mul, tile_broadcast_one_blk, tile_one_blk_column_broadcast_mul,
        epilogue_tile_copy, EpilogueHorizontalTileSwizzle,
    )

    # 3. Block scheduler and kernel (2 workspace stages).
    block_scheduler = GemmIdentityBlockSwizzle(3, swizzle_direction)
    return QuantMatmulMultiStageWorkspace(block_mmad, block_epilogue, block_scheduler,
                                          workspace_stages=workspace_stages)


def inputs(m: int, n: int, k: int):
    """Host data like the C++: A, B (int8 -16..16; B filled in its column-major storage order), scale and
    per-token scale (fp16 from 0.0..1.0 doubles). Returns logical (a [m, k], b [k, n], scale, pts)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(n, k).T  # column-major storage: B^T rows
    scale = data.fill_random(rng, n, 0.0, 1.0, "float16")
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, "float16")
    return a, b, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.quant_matmul import quant_matmul

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num
    a, b, scale, pts = ex.inputs(inputs, m, n, k)
    kernel = assemble(arch, swizzle_direction=0 if m > n else 1)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = quant_matmul(a, b, scale, pts, layout_b="column_major", core_num=core_num, seed=seed,
                                        observers=obs, kernel=kernel, options=options, return_launch=True)
    expect = golden.quant_matmul(a, b, scale, pts)
    result = golden.compare_data(d, expect, k)
    return ex.result(
        d, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)),
                 "workspace_bytes": 128 * 256 * core_num * 2 * 4,
                 "bit_exact": bool(np.array_equal(d, expect.astype(d.dtype)))},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
