"""CATLASS example 01: batched_matmul on simulated Atlas A2 AI cores.

    python examples/01_batched_matmul.py 4 256 512 1024
    catlass-py run 01_batched_matmul 4 256 512 1024 --cores 4 --json

C[b] = A[b] @ B[b] for b < batch_count, fp16 in and out. The assembly (:mod:`catlass_py.assemblies.batched_matmul`)
follows ``batched_matmul.cpp``, which picks the block swizzle at runtime: ``<3,0>`` (down first) when m > n, else
``<3,1>`` (right first). The inputs are generated like the C++ host code: ``FillRandomData<fp16_t>(host, -5, 5)``
with *int* bounds, so the generic template computes ``rand() / RAND_MAX`` in integer arithmetic and nearly every
value is -5.

The host follows the assembly's template parameters like the C++ host: ``--set element=bf16`` (or float32, int8)
fills A and B of that type with the same call (for int8 ``FillRandomData<int8_t, int>``: ``-5 + rand() % 11``),
``--set layout_a=column`` / ``layout_b=column`` store the same logical matrices column-major, and C is of the
kernel's ``ElementC``.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.batched_matmul import assemble, swizzle_for
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.batched_matmul import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "01_batched_matmul"
USAGE = "batch_count m n k [device_id]"
SUMMARY = "C[b] = A[b] @ B[b], fp16 (BatchedMatmul + MmadAtlasA2Pingpong, swizzle <3,0> if m > n else <3,1>)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8", "float32"), "batched_matmul.cpp's ElementA (its README)"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(batch_count: int, m: int, n: int, k: int, element: str = "float16") -> tuple[np.ndarray, np.ndarray]:
    """A [B, m, k] and B [B, k, n] of ``element`` (fp16 by default) as the C++ fills them
    (``FillRandomData<ElementA>(host, -5, 5)``)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, batch_count * m * k, -5, 5, element).reshape(batch_count, m, k)
    b = data.fill_random(rng, batch_count * k * n, -5, 5, element).reshape(batch_count, k, n)
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``batch_count m n k [device_id]``."""
    batch_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    layout_a, layout_b = ex.setting("layout_a"), ex.setting("layout_b")
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((batch_count, m, k), element), "b": ((batch_count, k, n), element)},
               gm={"c": ((batch_count, m, n), element_c)},
               golden=golden.peak_bytes("batched_matmul", batch=batch_count, m=m, n=n, k=k, int8=element == "int8"))
    a, b = ex.inputs(make_inputs, batch_count, m, n, k, element)
    if element != "float32":  # the operator's input rules (extents, cores) cover fp16, bf16 and int8 operands
        with ex.host_checks():
            validate_inputs(a, b, layout_a, layout_b, element_c, core_num, arch)

    gm_a = to_device("a", as_stored(a, layout_a))  # the logical matrices, stored in LayoutA / LayoutB
    gm_b = to_device("b", as_stored(b, layout_b))
    host_c = ex.zeros((batch_count, m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(batch_count, GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.initialize(args)

    total = kernel.total_blocks(batch_count, (m, n, k))
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.batched_matmul(a, b)
            result = compare_output(host_c, expect, k)
    return ex.result(
        host_c, result, golden=expect, shape={"batch_count": batch_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": total, "swizzle": f"<{swizzle[0]},{swizzle[1]}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
