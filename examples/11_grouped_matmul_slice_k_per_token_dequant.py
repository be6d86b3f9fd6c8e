"""CATLASS example 11: GMM sliceK + per-token dequant on simulated Atlas A2 AI cores.

    python examples/11_grouped_matmul_slice_k_per_token_dequant.py 8 256 512 1024
    catlass-py run 11_grouped_matmul_slice_k_per_token_dequant 8 256 512 1024 --cores 4

D[g] (bf16, [G, m, n]) = (A[:, K_g] int8 @ B[K_g, :] int8 -> int32) * scale[g][n] * perTokenScale[g][m], with
the K ranges K_g given by prefix sums over k. A is column-major. Groups with an empty K range give zeros
(written by the vector cores without any cube work). The assembly follows
``grouped_matmul_slice_k_per_token_dequant.cpp``; inputs are generated like the C++ host code.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.grouped_matmul_slice_k_per_token_dequant import GroupedMatmulSliceKPerTokenDequant
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul

NAME = "11_grouped_matmul_slice_k_per_token_dequant"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "int8 grouped matmul split along K + per-channel x per-token dequant -> bf16 [G, m, n]"


def assemble(arch=ATLAS_A2, *, out_dtype="bfloat16", element_group_list="int64", ub_stages=2):
    """Build the kernel like the C++ example (A column-major, B row-major, bf16 scales and D, int64 list)."""
    # 1. Block-level MMAD: PreloadAsync (one callback after each fixpipe), 2 L1 / 2 L0A / 4 L0B / 1 L0C stages.
    dispatch_policy = MmadAtlasA2PreloadAsync(
        preload_stages=1, l1_stages=2, l0a_stages=2, l0b_stages=4, l0c_stages=1,
        enable_unit_flag=False, enable_shuffle_k=True,
    )
    l1_tile_shape = GemmShape(128, 256, 256)
    l0_tile_shape = GemmShape(128, 256, 64)
    a_type = GemmType("int8", ColumnMajor)
    b_type = GemmType("int8", RowMajor)
    c_type = GemmType("int32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: per-token dequant, scales of D's type, 32 x 256 tiles, column-major tile order.
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

    # 3. Block scheduler and kernel (int64 group list over k).
    block_scheduler = GemmIdentityBlockSwizzle(3, 0)
    return GroupedMatmulSliceKPerTokenDequant(block_mmad, block_epilogue, block_scheduler, element_group_list)


def inputs(problem_count: int, m: int, n: int, k: int):
    """Host data like the C++: A (int8, filled in its column-major storage order), B (int8), scale [G, n] and
    per-token scale [G, m] (bf16 from doubles in 0.0..1.0), then ``GenerateGroupList<int64_t>(k, G)``.
    Returns logical (a [m, k], b [k, n], group_list, scale, per_token_scale)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(k, m).T
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(k, n)
    scale = data.fill_random(rng, problem_count * n, 0.0, 1.0, "bfloat16").reshape(problem_count, n)
    per_token_scale = data.fill_random(rng, problem_count * m, 0.0, 1.0, "bfloat16").reshape(problem_count, m)
    group_list = data.generate_group_list(k, problem_count, rng=rng)
    return a, b, group_list, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.grouped_matmul_slice_k_per_token_dequant import grouped_matmul_slice_k_per_token_dequant

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num
    a, b, group_list, scale, pts = ex.inputs(inputs, problem_count, m, n, k)
    kernel = assemble(arch)
    obs = ex.observers(kernel.total_blocks((m, n, k), group_list))
    with ex.timing():
        d, launch_result = grouped_matmul_slice_k_per_token_dequant(a, b, group_list, scale, pts, core_num=core_num,
                                                                    seed=seed, observers=obs, kernel=kernel,
                                                                    options=options, return_launch=True)
    expect = golden.grouped_matmul_slice_k_per_token_dequant(a, b, group_list, scale, pts)
    result = golden.compare_data(d, expect, k, valid=problem_count * m * n)
    sizes = np.diff(np.concatenate([[0], group_list]))
    return ex.result(
        d, result, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"empty_groups": int((sizes == 0).sum()), "k_used": int(group_list[-1]),
                 "total_blocks": kernel.total_blocks((m, n, k), group_list),
                 "workspace_bytes": problem_count * m * n * 4,
                 "bit_exact": bool(np.array_equal(d, expect.astype(d.dtype)))},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
