"""``streamk_matmul``: CATLASS example 37 (``StreamkMatmul`` + ``StreamkReduceAdd``) as a numpy-in / numpy-out
function. The kernel is assembled by :mod:`catlass_py.assemblies.streamk_matmul`."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.streamk_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.layout import RowMajor
from catlass_py.ops.operator import (
    FLOAT_TYPES,
    check_core_num,
    check_matmul_operands,
    check_positive,
    gm_input,
    gm_output,
    op_options,
    parse_layout,
)


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a=RowMajor, layout_b=RowMajor):
    """Example 37's kernel (Streamk<unit flag, shuffle-K> 128x256x256 / 128x256x64,
    StreamkGemmIdentityBlockSwizzle<3,0>, StreamkReduceAdd over the whole UB)."""
    return assemble(arch, element=element, layout_a=layout_a, layout_b=layout_b)


def validate_inputs(a, b, core_num, arch) -> tuple[int, int, int, str]:
    """Check every input; return (m, n, k, element)."""
    m, n, k, element = check_matmul_operands(a, b, FLOAT_TYPES)
    check_positive("a", k, "k (an empty K would store uninitialised accumulators)")
    check_core_num(core_num, arch)
    return m, n, k, element


def streamk_matmul(a, b, *, layout_a="row_major", layout_b="row_major", core_num: int = 24, seed: int | None = None,
                   arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(), kernel=None,
                   options=None, return_launch: bool = False):
    """CATLASS example 37 on simulated AI cores.

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b``. Returns C [m, n] of the input dtype. Normal blocks are stored by the cube's
    fixpipe; tail blocks are fp32 sums of stream-K partial sums, cast once. Launch keywords as
    :mod:`catlass_py.ops.operator`; in the report, cube markers say which K range (``streamk``, ``k_tile``,
    ``k``) each core computed, ``epilogue_tile`` markers which rows of the tail blocks each vector core reduced.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k, element = validate_inputs(a, b, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), a.dtype)
    if kernel is None:
        kernel = build_kernel(run.arch, element, la, lb)
    else:
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    c_host = run.zeros((m, n), kernel.block_mmad.element_c.numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), run.core_num, gm_input("a", a, la),
                            gm_input("b", b, lb), gm_output("c", c_host))
    return run.run(kernel, args, c_host)


__all__ = ["build_kernel", "streamk_matmul", "validate_inputs"]
