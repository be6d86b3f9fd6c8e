"""``matmul_gelu`` / ``matmul_silu``: CATLASS examples 27 and 28 (``MatmulActivation``) as numpy-in /
numpy-out functions. The kernels are assembled by :mod:`catlass_py.assemblies.matmul_gelu` and
:mod:`catlass_py.assemblies.matmul_silu`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies import matmul_gelu as gelu_assembly
from catlass_py.assemblies import matmul_silu as silu_assembly
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import RowMajor
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
_ASSEMBLIES = {"gelu": gelu_assembly, "silu": silu_assembly}


@lru_cache(maxsize=32)
def build_kernel(activation: str = "gelu", arch: ArchSpec = ATLAS_A2, swizzle_direction: int = 0,
                 element: str = "float16", out_dtype: str = "float16", layout_a=RowMajor, layout_b=RowMajor):
    """Example 27's (``activation='gelu'``) or 28's (``'silu'``) kernel: Pingpong<unit flag> 128x256x256 /
    128x256x64 with fp32 C, ElemWiseNoSource epilogue with ``TileElemWiseGelu``/``Silu`` (COMPUTE_LENGTH 16384),
    GemmIdentityBlockSwizzle<3, direction>."""
    if activation not in _ASSEMBLIES:
        raise ArgumentError(f"activation: expected one of {sorted(_ASSEMBLIES)}, got {activation!r}")
    return _ASSEMBLIES[activation].assemble(arch, swizzle_direction=swizzle_direction, element=element,
                                            out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b)


def validate_inputs(a, b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check every input of the ops; return (m, n, k, element, out dtype name)."""
    m, n, k, element = check_matmul_operands(a, b, FLOAT_TYPES)
    check_positive("a", k, "k (an empty K would store an uninitialised accumulator)")
    out = parse_out_dtype(out_dtype, OUT_TYPES, element)
    check_core_num(core_num, arch)
    return m, n, k, element, out


def _matmul_activation(activation, a, b, *, out_dtype, layout_a, layout_b, core_num, seed, arch, options,
                       return_report, return_launch, observers, kernel):
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k, element, out = validate_inputs(a, b, out_dtype, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), get_dtype(out).numpy)
    if kernel is None:
        kernel = build_kernel(activation, run.arch, 0 if m > n else 1, element, out, la, lb)
    else:
        check_kernel(kernel, build_kernel(activation, run.arch, 0 if m > n else 1, element, out, la, lb),
                     adopts=("A", "B", "epilogue d_type"))
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    d_type = kernel.block_epilogue.d_type.element
    args, host = run.device_arguments(
        f"matmul_{activation}", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), kernel.block_mmad.element_c.nbytes(1), gm["a"], gm["b"],
                                    gm["d"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"d": ((m, n), d_type.numpy)})
    return run.run(kernel, args, host["d"])


@overload
def matmul_gelu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def matmul_gelu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[False] = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def matmul_gelu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ..., return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def matmul_gelu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def matmul_gelu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def matmul_gelu(a, b, *, out_dtype=None, layout_a="row_major", layout_b="row_major", core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                return_launch: bool = False, observers=(), kernel=None):
    """CATLASS example 27 (``MatmulActivation`` + ``EpilogueAtlasA2ElemWiseNoSource`` + ``TileElemWiseGelu``).

    ``a`` [m, k] and ``b`` [k, n] float16 (or bfloat16) logical matrices, stored in GM per
    ``layout_a``/``layout_b``. Returns D = cast(gelu(fp32 A @ B)) [m, n] in ``out_dtype`` (default: the input
    dtype; the example uses float16). Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never
    modified.
    """
    return _matmul_activation("gelu", a, b, out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b,
                              core_num=core_num, seed=seed, arch=arch, options=options, return_report=return_report,
                              return_launch=return_launch, observers=observers, kernel=kernel)


@overload
def matmul_silu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def matmul_silu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[False] = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def matmul_silu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ..., return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def matmul_silu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def matmul_silu(a: ArrayT, b: ArrayLike, *, out_dtype: DTypeLike = ..., layout_a: LayoutLike = ...,
                layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def matmul_silu(a, b, *, out_dtype=None, layout_a="row_major", layout_b="row_major", core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                return_launch: bool = False, observers=(), kernel=None):
    """CATLASS example 28 (``MatmulActivation`` + ``EpilogueAtlasA2ElemWiseNoSource`` + ``TileElemWiseSilu``):
    D = cast(silu(fp32 A @ B)); arguments as :func:`matmul_gelu`."""
    return _matmul_activation("silu", a, b, out_dtype=out_dtype, layout_a=layout_a, layout_b=layout_b,
                              core_num=core_num, seed=seed, arch=arch, options=options, return_report=return_report,
                              return_launch=return_launch, observers=observers, kernel=kernel)


__all__ = ["build_kernel", "matmul_gelu", "matmul_silu", "validate_inputs"]
