"""``optimized_matmul_tla``: CATLASS example 14 (``OptimizedMatmulTla`` + ``BlockMmadTla<MmadAtlasA2Preload>``, with
``PaddingMatrixBlockND`` prologues when a leading dimension needs it) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.optimized_matmul_tla import assemble, padding_for, swizzle_for, tiles_for
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.optimized_matmul_tla import padding_layout, padding_workspace_len
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    array_op,
    check_core_num,
    check_extent,
    check_matmul_operands,
    chosen_kernel,
    op_options,
    parse_layout,
)
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a: str = "RowMajor",
                 layout_b: str = "ColumnMajor", padding_a: bool = False, padding_b: bool = False,
                 swizzle: tuple[int, int] = (3, 0)):
    """Example 14's kernel (:mod:`catlass_py.assemblies.optimized_matmul_tla`)."""
    return assemble(arch, element=element, layout_a=layout_a, layout_b=layout_b, padding_a=padding_a,
                    padding_b=padding_b, swizzle=swizzle)


@overload
def optimized_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                         core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                         options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                         return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                         kernel: Any = ...) -> ArrayT: ...


@overload
def optimized_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                         core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                         options: LaunchParams | None = ..., return_report: Literal[True],
                         return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                         kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def optimized_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                         core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                         options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                         return_launch: Literal[True], observers: Sequence[Observer] = ...,
                         kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def optimized_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                         core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                         options: LaunchParams | None = ..., return_report: Literal[True],
                         return_launch: Literal[True], observers: Sequence[Observer] = ...,
                         kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def optimized_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                         core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                         options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                         observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def optimized_matmul_tla(a, b, *, layout_a="row", layout_b="column", core_num: int = 24, seed: int | None = None,
                         arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                         return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B on simulated AI cores (CATLASS ``OptimizedMatmulTla``, example 14).

    ``a`` [m, k] and ``b`` [k, n] float16 or bfloat16 (logical), stored ``layout_a`` / ``layout_b`` ('row' or
    'column'; the example: A row-major, B column-major). As the example: an operand whose leading dimension is not
    a multiple of 256 elements (or is >= 65536) is padded by the vector cores first; swizzle ``<3,0>`` when m > n,
    else ``<3,1>``. Returns C [m, n] in the input type (fp32 accumulation, one rounding). ``k`` >= 1. Launch
    keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem = check_matmul_operands(a, b, ("float16", "bfloat16"))
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    for name, v in (("m", m), ("n", n)):
        check_extent(name, v)
    check_extent("k", k, low=1)
    check_core_num(run.core_num, run.arch)
    out_np = get_dtype(elem).numpy
    if m == 0 or n == 0:
        return run.empty((m, n), out_np)
    ta, tb = la.__name__, lb.__name__
    pad_a, pad_b = padding_for(m, n, k, ta, tb)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, ta, tb, pad_a, pad_b, swizzle_for(m, n)),
                           adopts=("A", "B"))
    if (kernel.padding_a is not None, kernel.padding_b is not None) != (pad_a, pad_b):
        raise ArgumentError(f"kernel: assembled for padding (A, B) = {(kernel.padding_a is not None, kernel.padding_b is not None)}"
                            f", these operands need {(pad_a, pad_b)}")
    mm = kernel.block_mmad
    l1 = mm.l1_tile_shape
    lay_a, lay_b = make_layout_tag(elem, mm.layout_tag_a, m, k), make_layout_tag(elem, mm.layout_tag_b, k, n)
    lay_wa = padding_layout(mm.layout_tag_a, m, k, l1.m, l1.k) if pad_a else lay_a
    lay_wb = padding_layout(mm.layout_tag_b, k, n, l1.k, l1.n) if pad_b else lay_b
    outputs = {"c": ((m, n), out_np)}
    if pad_a:
        outputs["wa"] = ((padding_workspace_len(m, k, l1.m, l1.k),), out_np)
    if pad_b:
        outputs["wb"] = ((padding_workspace_len(k, n, l1.k, l1.n),), out_np)

    def arguments(gm):
        return kernel.Arguments(GemmCoord(m, n, k), gm["a"], lay_a, gm["b"], lay_b, gm["c"],
                                make_layout_tag(elem, "RowMajor", m, n), gm["wa"] if pad_a else gm["a"], lay_wa,
                                gm["wb"] if pad_b else gm["b"], lay_wb)

    store_a, store_b = parse_layout("layout_a", mm.layout_tag_a.lower()), parse_layout("layout_b", mm.layout_tag_b.lower())
    args, host = run.device_arguments("optimized_matmul_tla", kernel, arguments,
                                      inputs={"a": (a, store_a), "b": (b, store_b)}, outputs=outputs)
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "optimized_matmul_tla", "tiles_for"]
