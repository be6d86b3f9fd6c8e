"""``matmul_relu``: CATLASS example 26 (``OptimizedMatmul`` + ``MmadAtlasA2Preload`` + ``ReluTileCopy``, with the
AIV padding prologue when an operand's leading dimension needs it) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.matmul_relu import assemble, padding_needed
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import array_op, chosen_kernel, op_options, parse_layout, validate_matmul_inputs

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=64)
def build_kernel(arch: ArchSpec = ATLAS_A2, padding_a: bool = False, padding_b: bool = False, swizzle=(3, 0),
                 element: str = "float16", layout_a="row", layout_b="column", out: str | None = None):
    """Example 26's kernel for one padding / swizzle choice and these types
    (:mod:`catlass_py.assemblies.matmul_relu`)."""
    return assemble(arch, padding_a=padding_a, padding_b=padding_b, swizzle=tuple(swizzle), element=element,
                    layout_a=parse_layout("layout_a", layout_a), layout_b=parse_layout("layout_b", layout_b),
                    out_element=out)


validate_inputs = validate_matmul_inputs  # the plain matmul's input rules


@overload
def matmul_relu(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def matmul_relu(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[False] = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def matmul_relu(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ..., return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def matmul_relu(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def matmul_relu(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
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
    pad_a, pad_b = padding_needed(m, n, k, elem, la, lb)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, pad_a, pad_b, (3, 0) if m > n else (3, 1), elem, la, lb, out))
    args, host = run.device_arguments(
        "matmul_relu", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "matmul_relu", "validate_inputs"]
