"""``matmul_gelu`` / ``matmul_silu``: CATLASS examples 27 and 28 (``MatmulActivation``) as numpy-in /
numpy-out functions. The kernels are assembled by ``examples/27_matmul_gelu.py`` and
``examples/28_matmul_silu.py``."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec, get_arch
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import RowMajor
from catlass_py.ops._common import (
    check_positive,
    empty_result,
    gm_input,
    gm_output,
    gm_storage,
    layout_arg,
    load_example,
    run_operator,
)
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops._validate import FLOAT_OUT_TYPES, FLOAT_TYPES, check_core_num, check_matmul_operands

OUT_TYPES = FLOAT_OUT_TYPES
_EXAMPLES = {"gelu": "27_matmul_gelu", "silu": "28_matmul_silu"}


@lru_cache(maxsize=32)
def build_kernel(activation: str = "gelu", arch: ArchSpec = ATLAS_A2, swizzle_direction: int = 0,
                 element: str = "float16", out_dtype: str = "float16", layout_a=RowMajor, layout_b=RowMajor):
    """Example 27's (``activation='gelu'``) or 28's (``'silu'``) kernel: Pingpong<unit flag> 128x256x256 /
    128x256x64 with fp32 C, ElemWiseNoSource epilogue with ``TileElemWiseGelu``/``Silu`` (COMPUTE_LENGTH 16384),
    GemmIdentityBlockSwizzle<3, direction>."""
    if activation not in _EXAMPLES:
        raise ArgumentError(f"activation: expected one of {sorted(_EXAMPLES)}, got {activation!r}")
    return load_example(_EXAMPLES[activation]).assemble(arch, swizzle_direction=swizzle_direction, element=element,
                                                       out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b)


def validate_inputs(a, b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check every input of the ops; return (m, n, k, element, out dtype name)."""
    m, n, k, element = check_matmul_operands(a, b, FLOAT_TYPES)
    check_positive("a", k, "k (an empty K would store an uninitialised accumulator)")
    out = element if out_dtype is None else str(np.dtype(out_dtype)) if not isinstance(out_dtype, str) else out_dtype
    if out not in OUT_TYPES:
        raise ArgumentError(f"out_dtype: expected one of {OUT_TYPES}, got {out_dtype!r}")
    check_core_num(core_num, arch)
    return m, n, k, element, out


def _matmul_activation(activation, a, b, *, out_dtype, layout_a, layout_b, core_num, seed, arch, return_report,
                       observers, kernel, options, return_launch):
    arch = get_arch(arch)
    la, lb = layout_arg("layout_a", layout_a), layout_arg("layout_b", layout_b)
    m, n, k, element, out = validate_inputs(a, b, out_dtype, core_num, arch)
    if m == 0 or n == 0:
        return empty_result((m, n), get_dtype(out).numpy, return_report, return_launch)
    if kernel is None:
        kernel = build_kernel(activation, arch, 0 if m > n else 1, element, out, la, lb)
    else:
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    d_type = kernel.block_epilogue.d_type.element
    d_host = np.zeros((m, n), dtype=d_type.numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), kernel.block_mmad.element_c.nbytes(1),
                            gm_input("a", gm_storage(a, la)), gm_input("b", gm_storage(b, lb)), gm_output("d", d_host))
    return run_operator(kernel, args, d_host, core_num, seed=seed, observers=observers,
                        return_report=return_report, return_launch=return_launch, options=options)


def matmul_gelu(a, b, *, out_dtype=None, layout_a="row_major", layout_b="row_major", core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(),
                kernel=None, options=None, return_launch: bool = False):
    """CATLASS example 27 (``MatmulActivation`` + ``EpilogueAtlasA2ElemWiseNoSource`` + ``TileElemWiseGelu``).

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b``. Returns D = cast(gelu(fp32 A @ B)) [m, n] in ``out_dtype`` (default: the input
    dtype; the example uses float16). With ``return_report=True`` returns ``(d, WorkloadReport)``.
    """
    return _matmul_activation("gelu", a, b, out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b,
                              core_num=core_num, seed=seed, arch=arch, return_report=return_report,
                              observers=observers, kernel=kernel, options=options, return_launch=return_launch)


def matmul_silu(a, b, *, out_dtype=None, layout_a="row_major", layout_b="row_major", core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(),
                kernel=None, options=None, return_launch: bool = False):
    """CATLASS example 28 (``MatmulActivation`` + ``EpilogueAtlasA2ElemWiseNoSource`` + ``TileElemWiseSilu``):
    D = cast(silu(fp32 A @ B)); arguments as :func:`matmul_gelu`."""
    return _matmul_activation("silu", a, b, out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b,
                              core_num=core_num, seed=seed, arch=arch, return_report=return_report,
                              observers=observers, kernel=kernel, options=options, return_launch=return_launch)


__all__ = ["build_kernel", "matmul_gelu", "matmul_silu", "validate_inputs"]
