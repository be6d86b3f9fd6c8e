"""CATLASS example 13: basic_matmul_tla on simulated Atlas A2 AI cores.

    python examples/13_basic_matmul_tla.py 256 512 1024
    catlass-py run 13_basic_matmul_tla 256 512 1024 --cores 4 --json

C[m, n] = A[m, k] @ B[k, n], fp16 in and out, fp32 accumulation on the cube, written on TLA: the host builds
``tla::MakeLayout<half, RowMajor>`` layouts of A, B and C, the kernel (``BasicMatmulTla``) hands each block's TLA
tiles to ``BlockMmadTla<MmadPingpong<AtlasA2, true, false>>``, whose TLA tile copies move them through L1 and L0
(:mod:`catlass_py.assemblies.basic_matmul_tla` follows ``basic_matmul_tla.cpp``: swizzle ``<3,0>`` when m > n,
else ``<3,1>``). The inputs are generated like the C++ host code (glibc rand, ``-5.0f..5.0f``, A first).

The host follows the assembly's template parameters: ``--set element=bf16`` (or int8) draws A and B of that type,
``--set layout_a=column`` stores the same logical A column-major under a ``ColumnMajor`` TLA layout, and C is of
the kernel's ``ElementC`` (int32 for int8).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.basic_matmul_tla import assemble, swizzle_for
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.basic_matmul_tla import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device
from catlass_py.tla import make_layout_tag

NAME = "13_basic_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B, fp16, on TLA tensors (BasicMatmulTla + BlockMmadTla<MmadPingpong>, swizzle <3,0>/<3,1>)"
_LAYOUT = {"RowMajor": RowMajor, "ColumnMajor": ColumnMajor}

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "BlockMmadTla's element types"),
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
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.basic_matmul_tla.assemble` (tile shapes, swizzle,
    ...) over the example's runtime choice."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num  # GetCoreNumAic(): every cube core
    kernel = ex.assemble(assemble, arch, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    mm = kernel.block_mmad
    tag_a, tag_b = mm.layout_tag_a, mm.layout_tag_b  # RowMajor (the example) or what --set layout_a/b chose
    element, element_c = mm.element_a.name, mm.element_c.name  # fp16 (the example) or --set element/out_element
    ex.require_supported(SUPPORTED_SETTINGS)
    gm = {"c": ((m, n), element_c)}
    gm.update({name: (shape, element) for name, tag, shape in (("a", tag_a, (m, k)), ("b", tag_b, (k, n)))
               if tag != "RowMajor"})  # a column-major operand is stored as a transposed copy
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm=gm,
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k, int8=element == "int8"))  # the memory budget
    a, b = ex.inputs(make_inputs, m, n, k, element)
    with ex.host_checks():
        validate_inputs(a, b, _LAYOUT[tag_a], _LAYOUT[tag_b], element_c, core_num, arch)

    # tla::MakeLayout<Element, LayoutTag>(rows, cols) of A, B and C
    layout_a = make_layout_tag(element, tag_a, m, k)
    layout_b = make_layout_tag(element, tag_b, k, n)
    layout_c = make_layout_tag(element_c, "RowMajor", m, n)

    gm_a = to_device("a", as_stored(a, _LAYOUT[tag_a]))  # the logical matrices, stored per their layout tags
    gm_b = to_device("b", as_stored(b, _LAYOUT[tag_b]))
    host_c = ex.zeros((m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, layout_a, gm_b, layout_b, gm_c, layout_c)
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
    return ex.result(
        host_c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "swizzle": f"<{swizzle[0]},{swizzle[1]}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
