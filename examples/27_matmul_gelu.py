"""CATLASS example 27: matmul_gelu, D = fp16(gelu(A @ B)) on simulated Atlas A2 AI cores.

    python examples/27_matmul_gelu.py 256 512 1024
    catlass-py run 27_matmul_gelu 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 inputs, fp32 C) into a GM workspace; the vector cores apply
``TileElemWiseGelu`` to their half of each block in fp32 and cast to fp16. The assembly follows
``examples/27_matmul_gelu/matmul_gelu.cpp``; inputs are generated like the C++ host code (glibc rand).
Example 28 (matmul_silu) is this assembly and run with ``TileElemWiseSilu``.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2ElemWiseNoSource
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.matmul_activation import MatmulActivation
from catlass_py.layout import RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional
from catlass_py.tile import EpilogueTileCopy
from catlass_py.tile.vector_elementwise import TileElemWiseGelu, TileElemWiseSilu

NAME = "27_matmul_gelu"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + Gelu activation on the vector cores (MatmulActivation, fp32 workspace)"


def assemble(arch=ATLAS_A2, *, swizzle_direction=0, element="float16", out_dtype="float16", layout_a=RowMajor,
             layout_b=RowMajor, compute_length=16384, activation=TileElemWiseGelu):
    """Build the kernel like the C++ example. ``swizzle_direction`` is 0 when m > n, else 1 (the C++ picks
    one of two instantiations at runtime); ``element`` is the type of A and B, ``out_dtype`` of D;
    ``layout_a``/``layout_b`` swap operand layouts; ``compute_length`` is the epilogue's UB length;
    ``activation`` is the epilogue's element-wise tile op (example 28 passes ``TileElemWiseSilu``)."""
    # 1. Block-level MMAD: ping-pong with the unit flag, L1 128x256x256, L0 128x256x64, fp32 C.
    dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=True)
    l1_tile_shape = GemmShape(128, 256, 256)
    l0_tile_shape = GemmShape(128, 256, 64)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType("float32", RowMajor)
    d_type = GemmType(out_dtype, RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: D = cast(gelu(C)), fp32 compute over 16384 elements (64 x 256 rows per vector core).
    epilogue_policy = EpilogueAtlasA2ElemWiseNoSource()
    tile_elem_wise_epilogue = activation(arch, c_type, compute_length)
    epilogue_tile_copy = EpilogueTileCopy(arch, c_type, d_type=d_type)
    block_epilogue = BlockEpilogue(epilogue_policy, c_type, d_type, tile_elem_wise_epilogue, epilogue_tile_copy)

    # 3. Block scheduler: strips of 3 blocks, walking down (m > n) or right (m <= n) first.
    block_scheduler = GemmIdentityBlockSwizzle(3, swizzle_direction)

    # 4. Kernel.
    return MatmulActivation(block_mmad, block_epilogue, block_scheduler)


def inputs(m: int, n: int, k: int):
    """Host data like the C++: one glibc stream, A then B = FillRandomData<fp16_t>(-5.0f, 5.0f)."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, "float16").reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, "float16").reshape(k, n)
    return a, b


#: the epilogue's tile op of each activation example (27: gelu, 28: silu)
TILE_ELEM_WISE = {"gelu": TileElemWiseGelu, "silu": TileElemWiseSilu}


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    return run_activation(NAME, "gelu", argv, cores=cores, seed=seed, observers=observers, progress=progress,
                          options=options)


def run_activation(name: str, activation: str, argv, *, cores=None, seed=None, observers=(), progress=None,
                   options=None) -> ExampleResult:
    """``run()`` of example 27 (``activation='gelu'``) and 28 (``'silu'``): the same inputs, assembly, launch
    and compare, with the activation's tile op, operator and golden."""
    m, n, k, *_device = parse_positional(name, USAGE, list(argv))
    from catlass_py.ops import matmul_activation as ops  # (the ops assemble through this script: import late)

    arch = ATLAS_A2
    ex = ExampleRun(name, arch, cores, observers=observers, progress=progress)
    a, b = ex.inputs(inputs, m, n, k)
    kernel = assemble(arch, swizzle_direction=0 if m > n else 1, activation=TILE_ELEM_WISE[activation])
    matmul_activation = {"gelu": ops.matmul_gelu, "silu": ops.matmul_silu}[activation]
    launch_observers = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = matmul_activation(a, b, core_num=ex.core_num, seed=seed, observers=launch_observers,
                                             kernel=kernel, options=options, return_launch=True)
    expect = {"gelu": golden.matmul_gelu, "silu": golden.matmul_silu}[activation](a, b)
    result = golden.compare_data(d, expect, k)
    return ex.result(d, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
                     details={"total_blocks": kernel.total_blocks((m, n, k)), "workspace_bytes": 4 * m * n,
                              "tiles_per_aiv": ex.report.tiles_per_aiv()})


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
