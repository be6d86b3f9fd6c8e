"""CATLASS example 20: matmul_bias on simulated Atlas A2 AI cores.

    python examples/20_matmul_bias.py 256 512 1024
    catlass-py run 20_matmul_bias 256 512 1024 --cores 4 --json

C[m, n] = A[m, k] @ B[k, n] + bias[n], fp16 in and out. The bias goes GM -> L1 -> BT (the bias table) and the
first Mmad of each block starts the accumulator from it (``MmadAtlasA2PingpongBias<true>``; L1 128x256x256,
L0 128x256x64, swizzle ``<3,0>``). Inputs as the C++: A, B, bias from glibc's stream (``-5.0f..5.0f``).

The host follows the assembly's template parameters: ``--set element=bf16`` (or int8) draws A and B of that type
and the bias of the kernel's bias element (int32 for int8), ``--set layout_a=column`` / ``layout_b=column`` store
the same logical matrices column-major, and C is of the kernel's ``ElementC``.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.matmul_bias import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.matmul_bias import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "20_matmul_bias"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B + bias, fp16, bias through the BT buffer (MatmulBias + MmadAtlasA2PingpongBias)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "MatmulBias's element types"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int, element: str = "float16", bias_element: str = "float16"):
    """A [m, k], B [k, n] of ``element`` and bias [n] of ``bias_element`` (fp16 by default), as the C++:
    ``FillRandomData<Element>(host, -5.0f, 5.0f)`` each."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, element).reshape(k, n)
    bias = data.fill_random(rng, n, lo, hi, bias_element)
    return a, b, bias


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch)
    mm = kernel.block_mmad
    element, element_c, element_bias = ex.setting("element"), mm.element_c.name, mm.bias_type.element.name
    layout_a, layout_b = ex.setting("layout_a"), ex.setting("layout_b")
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element), "bias": ((n,), element_bias)},
               gm={"c": ((m, n), element_c)},
               golden=golden.peak_bytes("matmul_bias", m=m, n=n, k=k, int8=element == "int8"))
    a, b, bias = ex.inputs(make_inputs, m, n, k, element, element_bias)
    with ex.host_checks():
        validate_inputs(a, b, bias, layout_a, layout_b, element_c, core_num, arch)

    # the logical matrices, stored in LayoutA / LayoutB
    gm = {"a": to_device("a", as_stored(a, layout_a)), "b": to_device("b", as_stored(b, layout_b)),
          "bias": to_device("bias", bias)}
    host_c = ex.zeros((m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm_c, gm["bias"])
    gemm_op = DeviceGemm(kernel)
    gemm_op.initialize(args)

    total = kernel.total_blocks((m, n, k))
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul_bias(a, b, bias)
            result = compare_output(host_c, expect, k)
    sched = kernel.block_scheduler
    return ex.result(
        host_c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": total, "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
