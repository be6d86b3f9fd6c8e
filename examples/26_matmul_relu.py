"""CATLASS example 26: matmul_relu on simulated Atlas A2 AI cores.

    python examples/26_matmul_relu.py 256 512 1024
    catlass-py run 26_matmul_relu 256 512 1000 --cores 4 --json

C[m, n] = ReLU(A[m, k] @ B[k, n]), fp16 in and out, A row-major and B column-major. The ReLU is applied by the
fixpipe on the way out of L0C (``ReluTileCopy``). The kernel is ``OptimizedMatmul`` with
``MmadAtlasA2Preload<true, true>`` (shuffle-K, next block's first K tile prefetched). As in
``matmul_relu.cpp`` three choices are made at runtime:

* an operand whose leading dimension is not a multiple of 512 bytes (256 fp16) is first copied by the vector
  cores into a ``PaddingRowMajor`` / ``PaddingColumnMajor`` workspace of L1-tile sized blocks
  (``PaddingMatrixBlockND``), and the cube cores wait for that (cross-core flag 0) before reading it;
* the swizzle is ``<3,0>`` when m > n, else ``<3,1>``;
* (for two column-major operands the C++ would use 256 x 128 blocks; this example's layouts are fixed.)

Inputs as the C++: A, B from glibc's stream (``-5.0f..5.0f``).

The host follows the assembly's template parameters: ``--set element=bf16`` (or int8) draws A and B of that type,
``--set layout_a=column`` / ``layout_b=row`` store the same logical matrices in those layouts (the padding test runs
on them), C is of the kernel's ``ElementC`` (int32 for int8), and ``--set relu=false`` compares with the plain
product.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.assemblies.matmul_relu import assemble, padding_needed
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.matmul_relu import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "26_matmul_relu"
USAGE = "m n k [device_id]"
SUMMARY = "C = ReLU(A @ B), fp16, fixpipe ReLU (OptimizedMatmul + MmadAtlasA2Preload, AIV padding if needed)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "the ReLU matmul's element types"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int, element: str = "float16"):
    """A [m, k] and B [k, n] of ``element`` (fp16 by default; logical, B drawn as its column-major n x k buffer)
    as the C++ fills them."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b_stored = data.fill_random(rng, k * n, lo, hi, element).reshape(n, k)
    return a, b_stored.T


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    element, layout_a, layout_b = (ex.setting(key, assemble) for key in ("element", "layout_a", "layout_b"))
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    pad_a, pad_b = padding_needed(m, n, k, element, layout_a, layout_b)  # IsNeedPadding(layoutA / layoutB)
    kernel = ex.assemble(assemble, arch, padding_a=pad_a, padding_b=pad_b, swizzle=(3, 0) if m > n else (3, 1))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    layout_a, layout_b, relu = ex.setting("layout_a"), ex.setting("layout_b"), ex.setting("relu")
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)},
               gm={"b": ((n, k), element), "c": ((m, n), element_c)},
               golden=golden.peak_bytes("matmul_relu", m=m, n=n, k=k, int8=element == "int8"),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]))
    a, b = ex.inputs(make_inputs, m, n, k, element)
    with ex.host_checks():
        validate_inputs(a, b, layout_a, layout_b, element_c, core_num, arch)

    gm_a = to_device("a", as_stored(a, layout_a))  # the logical matrices, stored in LayoutA / LayoutB
    gm_b = to_device("b", as_stored(b, layout_b))
    host_c = ex.zeros((m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    workspace = GlobalBuffer.empty(gemm_op.get_workspace_size(args), "workspace")
    gemm_op.initialize(args, workspace)

    total = kernel.total_blocks((m, n, k))
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul_relu(a, b) if relu else golden.matmul(a, b)  # relu=false: the plain TileCopy
            result = compare_output(host_c, expect, k)
    return ex.result(
        host_c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": total, "swizzle": f"<{swizzle[0]},{swizzle[1]}>", "padding_a": pad_a,
                 "padding_b": pad_b, "workspace_bytes": workspace.nbytes},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
