"""``matmul_relu``: CATLASS example 26 (``OptimizedMatmul`` + ``MmadAtlasA2Preload`` + ``ReluTileCopy``, with the
AIV padding prologue when an operand's leading dimension needs it) as a numpy-in / numpy-out function."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.matmul_relu import assemble, padding_needed
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import gm_input, gm_output, op_options, parse_layout, validate_matmul_inputs


@lru_cache(maxsize=64)
def build_kernel(arch: ArchSpec = ATLAS_A2, padding_a: bool = False, padding_b: bool = False, swizzle=(3, 0),
                 element: str = "float16", layout_a="row", layout_b="column", out: str | None = None):
    """Example 26's kernel for one padding / swizzle choice and these types
    (:mod:`catlass_py.assemblies.matmul_relu`)."""
    return assemble(arch, padding_a=padding_a, padding_b=padding_b, swizzle=tuple(swizzle), element=element,
                    layout_a=parse_layout("layout_a", layout_a), layout_b=parse_layout("layout_b", layout_b),
                    out_element=out)


validate_inputs = validate_matmul_inputs  # the plain matmul's input rules


def matmul_relu(a, b, *, layout_a="row", layout_b="column", out_dtype=None, core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                return_launch: bool = False, observers=(), kernel=None):
    """C = ReLU(A @ B) on simulated AI cores (CATLASS ``OptimizedMatmul`` with the fixpipe ReLU, example 26).

    ``a`` [m, k], ``b`` [k, n] (logical; float16, bfloat16 or int8; stored as ``layout_a`` - default 'row' -
    and ``layout_b`` - default 'column', as in the example). An operand whose leading dimension is not a
    multiple of 512 bytes is padded into a workspace by the vector cores first; the swizzle is <3,0> when
    m > n, else <3,1>. Returns C [m, n] (the input element, int32 for int8, or ``out_dtype='float32'``).
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem, out = validate_inputs(a, b, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    if kernel is None:
        pad_a, pad_b = padding_needed(m, n, k, elem, la, lb)
        kernel = build_kernel(run.arch, pad_a, pad_b, (3, 0) if m > n else (3, 1), elem, la, lb, out)
    host_c = run.zeros((m, n), get_dtype(out).numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), gm_input("a", a, la), gm_input("b", b, lb), gm_output("c", host_c))
    return run.run(kernel, args, host_c)


__all__ = ["build_kernel", "matmul_relu", "validate_inputs"]
