"""CATLASS example 00: basic_matmul on simulated Atlas A2 AI cores.

    python examples/00_basic_matmul.py 256 512 1024
    catlass-py run 00_basic_matmul 256 512 1024 --cores 4 --json

C[m, n] = A[m, k] @ B[k, n], fp16 in and out, fp32 accumulation on the cube. The assembly
(:mod:`catlass_py.assemblies.basic_matmul`) follows ``basic_matmul.cpp``; the inputs are generated like the C++ host
code (glibc rand, ``-5.0f..5.0f``). The operator :func:`catlass_py.ops.basic_matmul` runs the same assembly for bf16
and int8 and for column-major operands.

The host follows the assembly's template parameters as the C++ host follows ``ElementA`` / ``LayoutA``:
``--set element=bf16`` (float32, float16, bfloat16, int8 - the C++ example's README table) generates A and B of that
type with the same generator, ``--set layout_a=column`` stores the same logical A column-major, and C is of the
kernel's ``ElementC`` (``out_element``; int32 for int8).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.basic_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.basic_matmul import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "00_basic_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B, fp16 (BasicMatmul + MmadAtlasA2Pingpong, swizzle <3,0>)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8", "float32"), "basic_matmul.cpp's ElementA (its README)"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int, element: str = "float16") -> tuple[np.ndarray, np.ndarray]:
    """A [m, k] and B [k, n] of ``element`` (fp16 by default), as the C++ fills them:
    ``FillRandomData<ElementA>(host, -5.0f, 5.0f)`` (float arithmetic) from glibc's default stream, A first."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, np.float32(-5.0), np.float32(5.0), element).reshape(m, k)
    b = data.fill_random(rng, k * n, np.float32(-5.0), np.float32(5.0), element).reshape(k, n)
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch and
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only);
    ``config`` holds keywords for :func:`~catlass_py.assemblies.basic_matmul.assemble` (tile shapes, swizzle, ...)."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num  # GetCoreNumAic(): every cube core
    kernel = ex.assemble(assemble, arch)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    layout_a, layout_b = ex.setting("layout_a"), ex.setting("layout_b")
    ex.require_supported(SUPPORTED_SETTINGS)
    # the memory budget, before allocating
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm={"c": ((m, n), element_c)},
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k, int8=element == "int8"))
    a, b = ex.inputs(make_inputs, m, n, k, element)
    if element != "float32":  # the operator's input rules (extents, cores) cover fp16, bf16 and int8 operands
        with ex.host_checks():
            validate_inputs(a, b, layout_a, layout_b, element_c, core_num, arch)

    gm_a = to_device("a", as_stored(a, layout_a))  # the logical matrices, stored in LayoutA / LayoutB
    gm_b = to_device("b", as_stored(b, layout_b))
    host_c = ex.zeros((m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    gemm_op.initialize(args)  # no workspace

    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = compare_output(host_c, expect, k)
    sched = kernel.block_scheduler
    return ex.result(
        host_c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)),
                 "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
