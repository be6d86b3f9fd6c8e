"""CATLASS example 00: basic_matmul on simulated Atlas A2 AI cores.

    python examples/00_basic_matmul.py 256 512 1024
    catlass-py run 00_basic_matmul 256 512 1024 --cores 4 --json

C[m, n] = A[m, k] @ B[k, n], fp16 in and out, fp32 accumulation on the cube. The assembly follows
``basic_matmul.cpp``; the inputs are generated like the C++ host code (glibc rand, ``-5.0f..5.0f``). The
operator :func:`catlass_py.ops.basic_matmul` runs the same assembly for bf16 and int8 and for column-major
operands.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.gemm import GemmCoord, GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmul, DeviceGemm
from catlass_py.layout import RowMajor
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional, to_device

NAME = "00_basic_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B, fp16 (BasicMatmul + MmadAtlasA2Pingpong, swizzle <3,0>)"


def assemble(arch=ATLAS_A2, *, element="float16", layout_a=RowMajor, layout_b=RowMajor, out_element=None,
             dispatch_policy=None, swizzle=(3, 0)):
    """Build the kernel like the C++ example. The keywords swap template parameters: the input ``element``
    (float16, bfloat16, int8), the operand layouts (RowMajor / ColumnMajor), the element of C (default: the
    input's, int32 for int8), the BlockMmad ``dispatch_policy`` and the swizzle (offset, direction)."""
    # 1. Block-level dispatch policy: 2-stage ping-pong; the unit flag on (CATLASS forbids it for int8).
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=element != "int8")
    # 2. Tile shapes: 128 x 256 blocks of C; L1 holds K = 256 of a block, L0 K = 64.
    l1_tile_shape = GemmShape(128, 256, 256)
    l0_tile_shape = GemmShape(128, 256, 64)
    # 3. Operand types: A [m, k], B [k, n] in the chosen layouts; C [m, n] row-major.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    # 4. BlockMmad (default TileCopy / TileMmad for these types); no epilogue.
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    block_epilogue = None
    # 5. Block scheduler: strips of 3 block-rows, walking down first.
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    # 6. Kernel.
    return BasicMatmul(block_mmad, block_epilogue, block_scheduler)


def make_inputs(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A [m, k] and B [k, n], fp16, as the C++ fills them: ``FillRandomData<fp16_t>(host, -5.0f, 5.0f)``
    (float arithmetic) from glibc's default stream, A first."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, np.float32(-5.0), np.float32(5.0), "float16").reshape(m, k)
    b = data.fill_random(rng, k * n, np.float32(-5.0), np.float32(5.0), "float16").reshape(k, n)
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch and
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    from catlass_py.ops.basic_matmul import validate_inputs

    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
    core_num = ex.core_num  # GetCoreNumAic(): every cube core
    a, b = ex.inputs(make_inputs, m, n, k)
    validate_inputs(a, b, RowMajor, RowMajor, None, core_num, arch)

    gm_a = to_device("a", a)
    gm_b = to_device("b", b)
    host_c = np.zeros((m, n), np.float16)
    gm_c = to_device("c", host_c, read_only=False)

    kernel = assemble(arch)
    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    gemm_op.initialize(args)  # no workspace

    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = golden.matmul(a, b)
    result = golden.compare_data(host_c, expect, k)
    return ex.result(
        host_c, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "swizzle": "<3,0>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
