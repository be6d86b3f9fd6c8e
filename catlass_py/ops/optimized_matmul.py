"""``optimized_matmul``: CATLASS example 06 (``OptimizedMatmul`` + ``MmadAtlasA2Preload``, with the AIV
``PADDING_NZ`` prologue when an operand's leading dimension needs it) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.optimized_matmul import assemble, padding_needed
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    FLOAT_TYPES,
    array_op,
    check_core_num,
    check_extent,
    check_matmul_operands,
    op_options,
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, OperatorResult, LayoutLike


@lru_cache(maxsize=64)
def build_kernel(arch: ArchSpec = ATLAS_A2, padding_a: bool = False, padding_b: bool = False, swizzle=(3, 0),
                 element: str = "float16", layout_a="row", layout_b="column"):
    """Example 06's kernel for one padding / swizzle choice and these types
    (:mod:`catlass_py.assemblies.optimized_matmul`)."""
    return assemble(arch, padding_a=padding_a, padding_b=padding_b, swizzle=tuple(swizzle), element=element,
                    layout_a=parse_layout("layout_a", layout_a), layout_b=parse_layout("layout_b", layout_b))


def validate_inputs(a, b, layout_a, layout_b, core_num, arch) -> tuple[int, int, int, str]:
    """``a`` [m, k] and ``b`` [k, n], both float16 or both bfloat16 (C has their type), the layouts, extents and
    core count; returns (m, n, k, element)."""
    m, n, k, elem = check_matmul_operands(a, b, FLOAT_TYPES)
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    check_core_num(core_num, arch)
    return m, n, k, elem


@overload
def optimized_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                     options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                     return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def optimized_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                     options: LaunchParams | None = ..., return_report: Literal[True],
                     return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def optimized_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                     options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                     return_launch: Literal[True], observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def optimized_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                     options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                     observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def optimized_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                     options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                     observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def optimized_matmul(a, b, *, layout_a="row", layout_b="column", core_num: int = 24, seed: int | None = None,
                     arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                     return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B on simulated AI cores (CATLASS ``OptimizedMatmul``, example 06).

    ``a`` [m, k], ``b`` [k, n] (logical; float16 or bfloat16; stored as ``layout_a`` - default 'row' - and
    ``layout_b`` - default 'column', as in the example). An operand whose leading dimension is not a multiple of
    512 bytes is first repacked into a zN / nZ workspace by the vector cores (``PaddingMatrixNZ``); without
    padding the kernel runs on the cube cores only. The swizzle is <3,0> when m > n, else <3,1>. Returns C
    [m, n] in the input type (fp32 accumulation). The launch keywords are :mod:`catlass_py.ops.operator`'s (the
    memory budget, including the padding workspace, is checked before anything is allocated). Inputs are never
    modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem = validate_inputs(a, b, layout_a, layout_b, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    pad_a, pad_b = padding_needed(m, n, k, elem, la, lb)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, pad_a, pad_b, (3, 0) if m > n else (3, 1), elem, la, lb))
    args, host = run.device_arguments(
        "optimized_matmul", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), get_dtype(elem).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "optimized_matmul", "validate_inputs"]
