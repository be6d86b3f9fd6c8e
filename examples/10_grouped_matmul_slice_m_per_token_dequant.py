"""CATLASS example 10: GMM_sliceM_perToken_Dequant on simulated Atlas A2 AI cores.

    python examples/10_grouped_matmul_slice_m_per_token_dequant.py 128 512 1024 2048
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 --cores 24 --json

D[m, n] (bf16) = per group g: (A_g[mg, k] int8 @ B_g[k, n] int8 -> int32) * scale_g[n] * perTokenScale[mg].
The assembly below follows ``grouped_matmul_slice_m_per_token_dequant.cpp`` step by step; the inputs are
generated exactly like the C++ host code (glibc rand), so the output can be compared with a device dump.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmCoord, GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import DeviceGemm, GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional, to_device
from catlass_py.tile import (
    CopyGmToL1GMMPTD,
    EpilogueTileCopy,
    TileBroadcastOneBlk,
    TileCopy,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
)

NAME = "10_grouped_matmul_slice_m_per_token_dequant"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "int8 grouped matmul split along M + per-channel x per-token dequant -> bf16 (multi-stage workspace)"


def assemble(arch=ATLAS_A2, *, out_dtype="bfloat16", dispatch_policy=None, workspace_stages=2, ub_stages=2):
    """Build the kernel exactly like the C++ example (types and policies are plain Python values).

    The keywords swap template parameters: ``out_dtype`` ('bfloat16' or 'float16', the type of D and of
    both scales), the BlockMmad ``dispatch_policy``, ``workspace_stages`` and the epilogue's ``ub_stages``.
    """
    # 1. Architecture and block-level dispatch policy: preload 1 L1 tile ahead, 2 L1 / 2 L0A / 2 L0B stages,
    #    1 L0C stage, no unit flag, shuffle-K on.
    arch_tag = arch
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2PreloadAsyncWithCallback(
            preload_stages=1, l1_stages=2, l0a_stages=2, l0b_stages=2, l0c_stages=1,
            enable_unit_flag=False, enable_shuffle_k=True,
        )
    # 2. Tile shapes: a block is 128 x 256 of C; L1 holds K = 512 of it, L0 K = 128.
    l1_tile_shape = GemmShape(128, 256, 512)
    l0_tile_shape = GemmShape(128, 256, 128)
    # 3. Operand types: int8 A [m, k] and B [k, n] row-major, int32 C blocks in the workspace.
    a_type = GemmType("int8", RowMajor)
    b_type = GemmType("int8", RowMajor)
    c_type = GemmType("int32", RowMajor)
    # 4. Tile copies: the default bundle, with A's GM->L1 copy replaced by the GMMPTD loader (fast 1-row
    #    groups); the C++ derives TileCopyGMMPTD from TileCopy and overrides CopyGmToL1A.
    tile_copy = TileCopy(arch_tag, a_type, b_type, c_type).replace(copy_gm_to_l1_a=CopyGmToL1GMMPTD(arch_tag, a_type))
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, tile_copy=tile_copy)

    # 5. Epilogue: per-token dequant with 2 UB stages on 32 x 256 tiles, fp32 compute.
    epilogue_policy = EpilogueAtlasA2PerTokenDequant(ub_stages=ub_stages)
    scale_type = GemmType(out_dtype, VectorLayout)
    per_token_scale_type = GemmType(out_dtype, VectorLayout)
    d_type = GemmType(out_dtype, RowMajor)
    compute_type = GemmType("float32", RowMajor)
    epilogue_tile_shape = (32, 256)
    tile_row_broadcast_mul = TileRowBroadcastMul(arch_tag, compute_type, epilogue_tile_shape)
    tile_broadcast_one_blk = TileBroadcastOneBlk(arch_tag, compute_type, epilogue_tile_shape[0])
    tile_one_blk_column_broadcast_mul = TileOneBlkColumnBroadcastMul(arch_tag, compute_type, epilogue_tile_shape)
    epilogue_tile_copy = EpilogueTileCopy(arch_tag, c_type, scale_type, per_token_scale_type, d_type)
    block_epilogue = BlockEpilogue(
        epilogue_policy, c_type, scale_type, per_token_scale_type, d_type,
        tile_row_broadcast_mul, tile_broadcast_one_blk, tile_one_blk_column_broadcast_mul,
        epilogue_tile_copy, EpilogueHorizontalTileSwizzle,
    )

    # 6. Block scheduler: strips of 3 block-rows, walking down first.
    block_scheduler = GemmIdentityBlockSwizzle(3, 0)

    # 7. Kernel: 2 workspace stages per AI core, int64 group list.
    return GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace(
        block_mmad, block_epilogue, block_scheduler, workspace_stages=workspace_stages, element_group_list="int64"
    )


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import validate_inputs

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num  # aclrtGetDeviceInfo: every AI core of the chip

    # Host data, generated like the C++ (glibc rand(); groupList after srand(0)).
    inputs = ex.inputs(data.example10_inputs, problem_count, m, n, k)
    validate_inputs(inputs.a, inputs.b, inputs.group_list, inputs.scale, inputs.per_token_scale, core_num, arch)

    # Device buffers: inputs read-only, D allocated (uninitialised on the device; zero here so unwritten rows
    # read 0), workspace from GetWorkspaceSize.
    gm = {name: to_device(name, x) for name, x in inputs.as_dict().items()}
    host_d = np.zeros((m, n), dtype=inputs.scale.dtype)
    gm_d = to_device("d", host_d, read_only=False)

    kernel = assemble(arch)
    args = kernel.Arguments(GemmCoord(m, n, k), problem_count, core_num, gm["group_list"], gm["a"], gm["b"],
                            gm["scale"], gm["per_token_scale"], gm_d)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    workspace = GlobalBuffer.empty(gemm_op.get_workspace_size(args), "workspace")
    gemm_op.initialize(args, workspace)

    obs = ex.observers(kernel.total_blocks((m, n, k), inputs.group_list))
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    # Golden and CATLASS's compare: only the rows the groups cover.
    expect = golden.grouped_matmul_slice_m_per_token_dequant(
        inputs.a, inputs.b, inputs.group_list, inputs.scale, inputs.per_token_scale)
    valid = int(inputs.group_list[-1]) * n
    result = golden.compare_data(host_d, expect, k, valid=valid)
    rows = int(inputs.group_list[-1])
    sizes = np.diff(np.concatenate([[0], inputs.group_list]))
    return ex.result(
        host_d, result, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={
            "rows_written": rows,
            "empty_groups": int((sizes == 0).sum()),
            "largest_group": int(sizes.max()) if sizes.size else 0,
            "total_blocks": kernel.total_blocks((m, n, k), inputs.group_list),
            "workspace_bytes": workspace.nbytes,
            "bit_exact": bool(np.array_equal(host_d[:rows], expect[:rows].astype(host_d.dtype))),
        },
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
