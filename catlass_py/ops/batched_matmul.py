"""``batched_matmul``: CATLASS example 01 (``BatchedMatmul`` + ``MmadAtlasA2Pingpong``) as a numpy-in /
numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.batched_matmul import assemble, swizzle_for
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_extent,
    element_of,
    op_options,
    out_element,
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, swizzle=(3, 0), element: str = "float16", layout_a="row",
                 layout_b="row", out: str | None = None):
    """Example 01's kernel for one swizzle and these operand types (:mod:`catlass_py.assemblies.batched_matmul`)."""
    return assemble(arch, swizzle=tuple(swizzle), element=element, layout_a=parse_layout("layout_a", layout_a),
                    layout_b=parse_layout("layout_b", layout_b), out_element=out)


def validate_inputs(a, b, layout_a, layout_b, out_dtype, core_num, arch) -> tuple[int, int, int, int, str, str]:
    """Check every input of the op; return (batch, m, n, k, input element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 3)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 3)
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    batch, m, k = a.shape
    if b.shape[0] != batch or b.shape[1] != k:
        raise ArgumentError(f"b: expected shape ({batch}, {k}, n) to match a {a.shape}, got {b.shape}")
    n = b.shape[2]
    check_extent("batch_count", batch)
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return batch, m, n, k, elem, out


@overload
def batched_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                   return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def batched_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   options: LaunchParams | None = ..., return_report: Literal[True],
                   return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def batched_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                   return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def batched_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                   observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def batched_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                   observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def batched_matmul(a, b, *, layout_a="row", layout_b="row", out_dtype=None, core_num: int = 24,
                   seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                   return_launch: bool = False, observers=(), kernel=None):
    """C[i] = A[i] @ B[i] on simulated AI cores (CATLASS ``BatchedMatmul``, example 01).

    ``a`` [batch, m, k] and ``b`` [batch, k, n] (logical), float16, bfloat16 or int8; ``layout_a``/``layout_b``
    ('row' or 'column') choose how every batch is stored. The swizzle follows the example: ``<3,0>`` when
    m > n, else ``<3,1>``. Returns C [batch, m, n] (float16 / bfloat16 / int32, or ``out_dtype='float32'``).
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    batch, m, n, k, elem, out = validate_inputs(a, b, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, swizzle_for(m, n), elem, la, lb, out))
    args, host = run.device_arguments(
        "batched_matmul", kernel, lambda gm: kernel.Arguments(batch, GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((batch, m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["batched_matmul", "build_kernel", "validate_inputs"]
