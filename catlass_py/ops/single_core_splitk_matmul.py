"""``single_core_splitk_matmul``: CATLASS example 34 (``SingleCoreSplitkMatmul``) as a numpy-in / numpy-out
function. The kernel is assembled by ``examples/34_single_core_splitk_matmul.py``."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec, get_arch
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor, RowMajor
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
from catlass_py.ops._validate import (
    FLOAT_OUT_TYPES,
    FLOAT_TYPES,
    check_core_num,
    check_matmul_operands,
    float_out_dtype,
)

OUT_TYPES = FLOAT_OUT_TYPES


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, m_gt_n: bool = True, element: str = "float16", out_dtype: str = "float16",
                 layout_a=RowMajor, layout_b=ColumnMajor):
    """Example 34's kernel for the branch ``m > n`` (or not), assembled by the example script."""
    return load_example("34_single_core_splitk_matmul").assemble(arch, m_gt_n=m_gt_n, element=element,
                                                                 out_dtype=out_dtype, layout_a=layout_a,
                                                                 layout_b=layout_b)


def validate_inputs(a, b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check every input; return (m, n, k, element, out dtype)."""
    m, n, k, element = check_matmul_operands(a, b, FLOAT_TYPES)
    check_positive("a", k, "k (with k == 0 no block is ever stored)")
    out = float_out_dtype(element, out_dtype)
    check_core_num(core_num, arch)
    return m, n, k, element, out


def single_core_splitk_matmul(a, b, *, out_dtype=None, layout_a="row_major", layout_b="column_major",
                              core_num: int = 24, seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                              return_report: bool = False, observers=(), kernel=None, options=None,
                              return_launch: bool = False):
    """CATLASS example 34 on simulated AI cores.

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b`` (the example keeps B column-major). Returns C [m, n] in ``out_dtype`` (default
    the input dtype): fp32 sums of the K tiles (accumulated in GM by atomic adds, K tile order), cast once.
    With ``return_report=True`` returns ``(c, WorkloadReport)``; block markers carry ``k_idx`` and ``atomic``.
    """
    arch = get_arch(arch)
    la, lb = layout_arg("layout_a", layout_a), layout_arg("layout_b", layout_b)
    m, n, k, element, out = validate_inputs(a, b, out_dtype, core_num, arch)
    if m == 0 or n == 0:
        return empty_result((m, n), get_dtype(out).numpy, return_report, return_launch)
    if kernel is None:
        kernel = build_kernel(arch, m > n, element, out, la, lb)
    else:
        la, lb = kernel.layout_a, kernel.layout_b
    c_host = np.zeros((m, n), dtype=kernel.element_c.numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), gm_input("a", gm_storage(a, la)), gm_input("b", gm_storage(b, lb)),
                            gm_output("c", c_host))
    return run_operator(kernel, args, c_host, core_num, seed=seed, observers=observers,
                        return_report=return_report, return_launch=return_launch, options=options)


__all__ = ["build_kernel", "single_core_splitk_matmul", "validate_inputs"]
