"""CATLASS example 21: basic_matmul_preload_zN on simulated Atlas A2 AI cores.

    python examples/21_basic_matmul_preload_zN.py 256 512 1024
    catlass-py run 21_basic_matmul_preload_zN 160 6144 2048 --cores 20 --json

C[m, n] = A[m, k] @ B[k, n], fp16 in and out, A row-major and B in the zN ("NZ") format: 16 x 16 fractals,
row-major inside, fractal columns contiguous. The kernel is ``BasicMatmulPreload`` with
``MmadAtlasA2Preload<true, true>`` (shuffle-K, the next block's first K tile prefetched), L1 tiles 128 x 256 x 256,
swizzle ``<3,0>``, on the cube cores only (:mod:`catlass_py.assemblies.basic_matmul_preload_zn`).

Inputs as the C++: A, then B from glibc's stream (``-5.0f..5.0f``); B's ``k * n`` values fill the zN buffer in
storage order, so k and n must be multiples of 16 (the C++ allocates exactly ``k * n`` elements for the
fractal-padded layout).

The host follows the assembly's template parameters: ``--set element=bf16`` draws A and B (and makes C) bf16, and
``--set layout_b=nZ`` (or RowMajor / ColumnMajor) stores the same logical B in that layout.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.basic_matmul_preload_zn import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import nZ, zN
from catlass_py.ops.basic_matmul_preload_zn import b_in_gm, validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device
from catlass_py.virtual import is_virtual, virtual_array

NAME = "21_basic_matmul_preload_zN"
USAGE = "m n k [device_id]"
SUMMARY = "C = A @ B, fp16, B in zN (BasicMatmulPreload + MmadAtlasA2Preload, swizzle <3,0>, cube cores only)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the kernel makes C of A's type: fp16 or bf16"),
}


def make_inputs(m: int, n: int, k: int, element: str = "float16"):
    """A [m, k] row-major and B [k, n] logical of ``element`` (fp16 by default), B read through
    ``zN::MakeLayout<Element>(k, n)`` from the ``k * n`` values the C++ fills the zN buffer with (A first)."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b_stored = data.fill_random(rng, k * n, lo, hi, element)
    if is_virtual(b_stored):  # a timing-only run: shape-only operands
        return a, virtual_array((k, n), b_stored.dtype)
    return a, zN.make_layout(element, k, n).read(b_stored)


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``options`` (a
    :class:`~catlass_py.arch.LaunchParams`) sets the launch's switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.basic_matmul_preload_zn.assemble` (tile shapes,
    swizzle, B's layout, ...)."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    if k % 16 or n % 16:
        raise ArgumentError(f"k, n: expected multiples of 16 (B's zN buffer holds exactly k * n fp16 values), got "
                            f"k={k}, n={n}")
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num  # GetCoreNumAic(): every cube core
    kernel = ex.assemble(assemble, arch)
    b_kind = kernel.block_mmad.b_type.layout  # zN (the example) or what --set layout_b chose
    element = ex.setting("element")  # A, B and C: fp16 (the example) or what --set element chose
    ex.require_supported(SUPPORTED_SETTINGS)
    b_gm = b_kind.make_layout(element, k, n).capacity if b_kind in (zN, nZ) else k * n
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b storage": ((k * n,), element), "b": ((k, n), element),
                               "zN offsets": ((k * n,), "int64")},  # the layout's gather / scatter index
               gm={"b": ((b_gm,), element), "c": ((m, n), element)},
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k))
    a, b = ex.inputs(make_inputs, m, n, k, element)
    validate_inputs(a, b, b_kind, core_num, arch)

    gm_a = to_device("a", a)
    gm_b = b_in_gm("b", b, b_kind)  # zN: the fractal buffer, its padding zero
    host_c = ex.zeros((m, n), host_dtype(element))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    gemm_op.initialize(args)  # no workspace

    total = kernel.total_blocks((m, n, k))
    obs = ex.observers(total)
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
        details={"total_blocks": total, "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>",
                 "layout_b": b_kind.__name__},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
