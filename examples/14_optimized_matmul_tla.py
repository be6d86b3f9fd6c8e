"""CATLASS example 14: optimized_matmul_tla on simulated Atlas A2 AI cores.

    python examples/14_optimized_matmul_tla.py 256 512 1024
    catlass-py run 14_optimized_matmul_tla 256 512 1024 --cores 20 --json

C[m, n] = A[m, k] @ B[k, n], fp16, A row-major and B column-major, through ``OptimizedMatmulTla``: the cube cores
run ``BlockMmadTla<MmadAtlasA2Preload<true, true>>`` (shuffle-K, the next block's first K tile prefetched during the
last one); an operand whose leading dimension is not a multiple of 256 elements is first copied by the vector cores
into a padded workspace (``PaddingMatrixBlockND``, one L1 tile per block). The four padding cases and the swizzle
(``<3,0>`` when m > n, else ``<3,1>``) are chosen at run time like ``optimized_matmul_tla.cpp``
(:mod:`catlass_py.assemblies.optimized_matmul_tla`). The inputs are generated like the C++ host code (glibc rand,
``-5.0f..5.0f``, A then B in its column-major storage order).

The host follows the assembly's template parameters: ``--set element=bf16`` draws A and B (and makes C) bf16,
``--set layout_a=column`` / ``layout_b=row`` store the same logical matrices in those layouts, and the padding test
runs on the layouts the kernel reads.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.optimized_matmul_tla import assemble, padding_for, swizzle_for
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.optimized_matmul_tla import optimized_matmul_tla
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional

NAME = "14_optimized_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("C = A @ B, fp16, A row-major and B column-major, on TLA tensors (OptimizedMatmulTla + "
           "BlockMmadTla<MmadAtlasA2Preload>, PaddingMatrixBlockND prologues when needed)")

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the kernel makes C of A's type: fp16 or bf16"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(m: int, n: int, k: int, element: str = "float16") -> tuple[np.ndarray, np.ndarray]:
    """A [m, k] and B [k, n] of ``element`` (fp16 by default), as the C++ fills them:
    ``FillRandomData<ElementA>(host, -5.0f, 5.0f)`` from glibc's default stream, A first, B in its column-major
    storage order."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, np.float32(-5.0), np.float32(5.0), element).reshape(m, k)
    b = data.fill_random(rng, k * n, np.float32(-5.0), np.float32(5.0), element).reshape(n, k).T
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.optimized_matmul_tla.assemble` (tile shapes,
    swizzle, padding, ...) over the example's runtime choices."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    element, layout_a, layout_b = (ex.setting(key, assemble) for key in ("element", "layout_a", "layout_b"))
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    pad_a, pad_b = padding_for(m, n, k, layout_a.__name__, layout_b.__name__)  # IsNeedPadding(tagA / tagB)
    kernel = ex.assemble(assemble, arch, padding_a=pad_a, padding_b=pad_b, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)
    pad_a, pad_b = kernel.padding_a is not None, kernel.padding_b is not None
    l1 = kernel.block_mmad.l1_tile_shape
    gm = {"c": ((m, n), element)}
    if pad_a:
        gm["wa"] = ((-(-m // l1.m) * l1.m * -(-k // l1.k) * l1.k,), element)
    if pad_b:
        gm["wb"] = ((-(-k // l1.k) * l1.k * -(-n // l1.n) * l1.n,), element)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm=gm,
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k))
    a, b = ex.inputs(make_inputs, m, n, k, element)
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():  # the operator stores the logical A and B in the kernel's layouts
        c, launch_result = optimized_matmul_tla(a, b, layout_a=layout_a, layout_b=layout_b, core_num=ex.core_num,
                                                seed=seed, observers=obs, kernel=kernel, options=options,
                                                return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = compare_output(c, expect, k)
    return ex.result(
        c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "swizzle": f"<{swizzle[0]},{swizzle[1]}>",
                 "padding_a": pad_a, "padding_b": pad_b},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
