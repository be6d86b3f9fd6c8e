"""``matmul_add``: CATLASS example 03 (``MatmulEpilogue``, D = A @ B + X) as a numpy-in / numpy-out function.

The kernel is assembled by :mod:`catlass_py.assemblies.matmul_add` and runs on the simulated Atlas A2 AI cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.matmul_add import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import RowMajor
from catlass_py.ops.operator import (
    check_kernel,
    FLOAT_TYPES,
    array_op,
    as_array,
    check_core_num,
    check_positive,
    check_shape,
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
def build_kernel(arch: ArchSpec = ATLAS_A2, swizzle_direction: int = 0, element: str = "float16",
                 layout_a=RowMajor, layout_b=RowMajor):
    """Example 03's kernel (Pingpong<unit flag> 128x256x256 / 128x256x64, ElemWiseOneSource add epilogue,
    GemmIdentityBlockSwizzle<3, direction>), assembled by :mod:`catlass_py.assemblies.matmul_add`."""
    return assemble(arch, swizzle_direction=swizzle_direction, element=element, layout_a=layout_a, layout_b=layout_b)


def validate_inputs(a, b, x, core_num, arch) -> tuple[int, int, int, str]:
    """Check every input of the op; return (m, n, k, element dtype name)."""
    a = as_array("a", a, FLOAT_TYPES, 2)
    element = str(a.dtype)
    b = as_array("b", b, element, 2)
    x = as_array("x", x, element, 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    n = b.shape[1]
    check_shape("x", x, (m, n), "m x n")
    check_positive("a", k, "k (an empty K would store an uninitialised accumulator)")
    check_core_num(core_num, arch)
    return m, n, k, element


@overload
def matmul_add(a: ArrayT, b: ArrayLike, x: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
               return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
               options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def matmul_add(a: ArrayT, b: ArrayLike, x: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[True],
               observers: Sequence[Observer] = ..., kernel: Any = ..., options: LaunchParams | None = ...,
               return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def matmul_add(a: ArrayT, b: ArrayLike, x: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
               return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
               options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def matmul_add(a: ArrayT, b: ArrayLike, x: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[True],
               observers: Sequence[Observer] = ..., kernel: Any = ..., options: LaunchParams | None = ...,
               return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def matmul_add(a: ArrayT, b: ArrayLike, x: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: bool = ...,
               observers: Sequence[Observer] = ..., kernel: Any = ..., options: LaunchParams | None = ...,
               return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def matmul_add(a, b, x, *, layout_a="row_major", layout_b="row_major", core_num: int = 24, seed: int | None = None,
               arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(), kernel=None, options=None,
               return_launch: bool = False):
    """CATLASS example 03 (``MatmulEpilogue`` + ``EpilogueAtlasA2ElemWiseOneSource`` + ``TileElemWiseAdd``).

    ``a`` [m, k], ``b`` [k, n], ``x`` [m, n], all float16 (or all bfloat16), given as logical matrices;
    ``layout_a``/``layout_b`` ('row_major' / 'column_major') choose how A and B are stored in GM (column-major
    stores the transpose). Returns D = fp16(fp16(A @ B) + X), shape [m, n], dtype of the inputs.
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k, element = validate_inputs(a, b, x, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), x.dtype)
    if kernel is None:
        kernel = build_kernel(run.arch, 0 if m > n else 1, element, la, lb)
    else:
        check_kernel(kernel, build_kernel(run.arch, 0 if m > n else 1, element, la, lb), adopts=("A", "B"))
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    args, host = run.device_arguments(  # D's buffer holds X on entry (as in the C++)
        "matmul_add", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), kernel.block_mmad.element_c.nbytes(1), gm["a"], gm["b"],
                                    gm["d"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"d": ((m, n), x.dtype, x)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "matmul_add", "validate_inputs"]
