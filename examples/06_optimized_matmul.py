"""CATLASS example 06: optimized_matmul on simulated Atlas A2 AI cores.

    python examples/06_optimized_matmul.py 256 512 1024
    catlass-py run 06_optimized_matmul 1024 576 6144 --cores 20 --json

C[m, n] = A[m, k] @ B[k, n], fp16 in and out, A row-major and B column-major. The kernel is ``OptimizedMatmul``
with ``MmadAtlasA2Preload<true, true>`` (shuffle-K, the next block's first K tile prefetched). As in
``optimized_matmul.cpp`` two choices are made at runtime:

* an operand whose leading dimension is not a multiple of 512 bytes (256 fp16) is first repacked by the vector
  cores into a zN / nZ workspace (``PaddingMatrixNZ``, ``PADDING_NZ``), and the cube cores wait for that
  (cross-core flag 0) before reading it; without padding the vector cores do nothing (an AIC-only launch);
* the swizzle is ``<3,0>`` when m > n, else ``<3,1>``.

Inputs as the C++: A, B from glibc's stream (``-5.0f..5.0f``). The host follows the assembly's template parameters:
``--set element=bf16`` draws A and B (and makes C) bf16, ``--set layout_a=column`` / ``layout_b=row`` store the same
logical matrices in those layouts, and the padding test runs on the layouts the kernel reads.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.assemblies.optimized_matmul import assemble, padding_needed
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.optimized_matmul import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "06_optimized_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B, fp16 (OptimizedMatmul + MmadAtlasA2Preload, AIV PADDING_NZ prologue if needed)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the kernel makes C of A's type: fp16 or bf16"),
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
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``options`` (a
    :class:`~catlass_py.arch.LaunchParams`) sets the launch's switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.optimized_matmul.assemble` (tile shapes, swizzle,
    padding, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num  # GetCoreNumAic(): every cube core
    element, layout_a, layout_b = (ex.setting(key, assemble) for key in ("element", "layout_a", "layout_b"))
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    pad_a, pad_b = padding_needed(m, n, k, element, layout_a, layout_b)  # IsNeedPadding(layoutA / layoutB)
    kernel = ex.assemble(assemble, arch, padding_a=pad_a, padding_b=pad_b, swizzle=(3, 0) if m > n else (3, 1))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    pad_a, pad_b = kernel.prologue_a is not None, kernel.prologue_b is not None
    element, layout_a, layout_b = ex.setting("element"), ex.setting("layout_a"), ex.setting("layout_b")
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)},
               gm={"b": ((n, k), element), "c": ((m, n), element)},
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]))
    a, b = ex.inputs(make_inputs, m, n, k, element)
    validate_inputs(a, b, layout_a, layout_b, core_num, arch)

    gm_a = to_device("a", as_stored(a, layout_a))  # the logical matrices, stored in LayoutA / LayoutB
    gm_b = to_device("b", as_stored(b, layout_b))
    host_c = ex.zeros((m, n), host_dtype(element))  # ElementC = ElementA
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    workspace = GlobalBuffer.empty(gemm_op.get_workspace_size(args), "workspace")
    gemm_op.initialize(args, workspace)

    total = kernel.total_blocks((m, n, k))
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = compare_output(host_c, expect, k)
    return ex.result(
        host_c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": total, "swizzle": f"<{swizzle[0]},{swizzle[1]}>", "padding_a": pad_a,
                 "padding_b": pad_b, "workspace_bytes": workspace.nbytes},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
