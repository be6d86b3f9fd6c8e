"""``streamk_matmul``: CATLASS example 37 (``StreamkMatmul`` + ``StreamkReduceAdd``) as a numpy-in / numpy-out
function. The kernel is assembled by :mod:`catlass_py.assemblies.streamk_matmul`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.streamk_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.layout import RowMajor
from catlass_py.ops.operator import (
    check_kernel,
    FLOAT_TYPES,
    array_op,
    check_core_num,
    check_matmul_operands,
    check_positive,
    op_options,
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


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


@overload
def streamk_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                   options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def streamk_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   return_report: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                   options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def streamk_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                   options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def streamk_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                   return_report: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                   options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def streamk_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                   core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: bool = ...,
                   observers: Sequence[Observer] = ..., kernel: Any = ..., options: LaunchParams | None = ...,
                   return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def streamk_matmul(a, b, *, layout_a="row_major", layout_b="row_major", core_num: int = 24, seed: int | None = None,
                   arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(), kernel=None,
                   options=None, return_launch: bool = False):
    """CATLASS example 37 on simulated AI cores.

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b``. Returns C [m, n] of the input dtype. Normal blocks are stored by the cube's
    fixpipe; tail blocks are fp32 sums of stream-K partial sums, cast once. Launch keywords as
    :mod:`catlass_py.ops.operator`; in the report, cube markers say which K range (``streamk``, ``k_tile``,
    ``k``) each core computed, ``epilogue_tile`` markers which rows of the tail blocks each vector core reduced.
    Inputs are never modified.
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
        check_kernel(kernel, build_kernel(run.arch, element, la, lb), adopts=("A", "B", "C"))
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    args, host = run.device_arguments(
        "streamk_matmul", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), run.core_num, gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), kernel.block_mmad.element_c.numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "streamk_matmul", "validate_inputs"]
