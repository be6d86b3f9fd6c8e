"""``single_core_splitk_matmul``: CATLASS example 34 (``SingleCoreSplitkMatmul``) as a numpy-in / numpy-out
function. The kernel is assembled by :mod:`catlass_py.assemblies.single_core_splitk_matmul`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.single_core_splitk_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    check_kernel,
    FLOAT_OUT_TYPES,
    FLOAT_TYPES,
    array_op,
    check_core_num,
    check_matmul_operands,
    check_positive,
    op_options,
    parse_layout,
    parse_out_dtype,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult

OUT_TYPES = FLOAT_OUT_TYPES


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, m_gt_n: bool = True, element: str = "float16", out_dtype: str = "float16",
                 layout_a=RowMajor, layout_b=ColumnMajor):
    """Example 34's kernel for the branch ``m > n`` (or not), assembled by
    :mod:`catlass_py.assemblies.single_core_splitk_matmul`."""
    return assemble(arch, m_gt_n=m_gt_n, element=element, out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b)


def validate_inputs(a, b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check every input; return (m, n, k, element, out dtype)."""
    m, n, k, element = check_matmul_operands(a, b, FLOAT_TYPES)
    check_positive("a", k, "k (with k == 0 no block is ever stored)")
    out = parse_out_dtype(out_dtype, OUT_TYPES, element)
    check_core_num(core_num, arch)
    return m, n, k, element, out


@overload
def single_core_splitk_matmul(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                              layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ...,
                              arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
                              observers: Sequence[Observer] = ..., kernel: Any = ...,
                              options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def single_core_splitk_matmul(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                              layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ...,
                              arch: ArchSpec | str = ..., return_report: Literal[True],
                              observers: Sequence[Observer] = ..., kernel: Any = ...,
                              options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def single_core_splitk_matmul(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                              layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ...,
                              arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
                              observers: Sequence[Observer] = ..., kernel: Any = ...,
                              options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def single_core_splitk_matmul(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                              layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ...,
                              arch: ArchSpec | str = ..., return_report: Literal[True],
                              observers: Sequence[Observer] = ..., kernel: Any = ...,
                              options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def single_core_splitk_matmul(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                              layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ...,
                              arch: ArchSpec | str = ..., return_report: bool = ...,
                              observers: Sequence[Observer] = ..., kernel: Any = ...,
                              options: LaunchParams | None = ..., return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def single_core_splitk_matmul(a, b, *, out_dtype=None, layout_a="row_major", layout_b="column_major",
                              core_num: int = 24, seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                              return_report: bool = False, observers=(), kernel=None, options=None,
                              return_launch: bool = False):
    """CATLASS example 34 on simulated AI cores.

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b`` (the example keeps B column-major). Returns C [m, n] in ``out_dtype`` (default
    the input dtype): fp32 sums of the K tiles (accumulated in GM by atomic adds, K tile order), cast once.
    Launch keywords as :mod:`catlass_py.ops.operator` (the report's block markers carry ``k_idx`` and
    ``atomic``). Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k, element, out = validate_inputs(a, b, out_dtype, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), get_dtype(out).numpy)
    if kernel is None:
        kernel = build_kernel(run.arch, m > n, element, out, la, lb)
    else:
        check_kernel(kernel, build_kernel(run.arch, m > n, element, out, la, lb), adopts=("A", "B"))
        la, lb = kernel.layout_a, kernel.layout_b
    args, host = run.device_arguments(
        "single_core_splitk_matmul", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), kernel.element_c.numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "single_core_splitk_matmul", "validate_inputs"]
