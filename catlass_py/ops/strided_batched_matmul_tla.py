"""``strided_batched_matmul_tla``: CATLASS example 45 (``StridedBatchedMatmulTla`` + ``BlockMmadTla<MmadPingpongTlaV2>``)
as a numpy-in / numpy-out function: batched C = A @ B with operands stored at any leading dimension and batch
stride (rank-3 TLA layouts)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from numpy.lib.stride_tricks import as_strided

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.strided_batched_matmul_tla import assemble, swizzle_for
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.integers import is_int
from catlass_py.kernel.strided_batched_matmul_tla import batched_layout
from catlass_py.layout import RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    array_op,
    as_array,
    check_core_num,
    check_extent,
    chosen_kernel,
    element_of,
    op_options,
    out_element,
)
from catlass_py.ops.operator import parse_layout
from catlass_py.virtual import is_virtual, virtual_array

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a=RowMajor, layout_b=RowMajor,
                 out: str | None = None, swizzle: tuple[int, int] = (3, 0)):
    """Example 45's kernel for these operand types (:mod:`catlass_py.assemblies.strided_batched_matmul_tla`)."""
    return assemble(arch, element=element, layout_a=layout_a.__name__, layout_b=layout_b.__name__, out_element=out,
                    swizzle=swizzle)


def default_strides(batch: int, m: int, n: int, k: int, layout_a, layout_b, *, lda=None, ldb=None, ldc=None) -> dict:
    """The example's storage when only some values are given: ``lda = k`` (RowMajor A) or ``m``, ``ldb = n`` or
    ``k``, ``ldc = n`` unless given, and each batch stride one matrix at those leading dimensions (``m * lda`` or
    ``k * lda``, ...), as ``strided_batched_matmul_tla.cpp`` sets them."""
    lda = (k if layout_a is RowMajor else m) if lda is None else lda
    ldb = (n if layout_b is RowMajor else k) if ldb is None else ldb
    ldc = n if ldc is None else ldc
    return {"lda": lda, "ldb": ldb, "ldc": ldc, "stride_a": (m if layout_a is RowMajor else k) * lda,
            "stride_b": (k if layout_b is RowMajor else n) * ldb, "stride_c": m * ldc}


def check_strides(m: int, n: int, k: int, layout_a, layout_b, *, lda, ldb, ldc, stride_a, stride_b, stride_c) -> None:
    """The example's rules (``BatchedMatmulTlaOptions::Parse``): every leading dimension and stride > 0;
    ``lda >= k`` (RowMajor A) or ``>= m``, ``ldb >= n`` or ``>= k``, ``ldc >= n``; each batch stride at least one
    matrix, ``(rows - 1) * ld + cols``. :class:`ArgumentError` otherwise."""
    values = {"lda": lda, "ldb": ldb, "ldc": ldc, "stride_a": stride_a, "stride_b": stride_b, "stride_c": stride_c}
    for name, v in values.items():
        if not is_int(v) or v <= 0:
            raise ArgumentError(f"{name}: leading dimensions and strides must be integers greater than 0, got {v!r}")
    min_lda = k if layout_a is RowMajor else m
    min_ldb = n if layout_b is RowMajor else k
    if lda < min_lda or ldb < min_ldb or ldc < n:
        raise ArgumentError(f"Invalid leading dimensions: require lda>={min_lda}, ldb>={min_ldb}, ldc>={n} "
                            f"(got {lda}, {ldb}, {ldc})")
    min_a = (m - 1) * lda + k if layout_a is RowMajor else (k - 1) * lda + m
    min_b = (k - 1) * ldb + n if layout_b is RowMajor else (n - 1) * ldb + k
    min_c = (m - 1) * ldc + n
    if stride_a < min_a or stride_b < min_b or stride_c < min_c:
        raise ArgumentError(f"Invalid batch strides: require strideA/strideB/strideC large enough for one matrix "
                            f"(>= {min_a}, {min_b}, {min_c}; got {stride_a}, {stride_b}, {stride_c})")


def extent(layout) -> int:
    """Elements a rank-3 layout spans: ``layout(last coordinate) + 1`` (the example's ``capA``)."""
    return int(layout(tuple(s - 1 for s in layout.shape))) + 1


def strided_view(flat: np.ndarray, layout) -> np.ndarray:
    """The ``(batch, rows, cols)`` view of a flat buffer through a rank-3 layout (no copy)."""
    return as_strided(flat, tuple(layout.shape), tuple(s * flat.itemsize for s in layout.stride), writeable=False)


@overload
def strided_batched_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                               lda: Any = ..., ldb: Any = ..., ldc: Any = ..., stride_a: Any = ...,
                               stride_b: Any = ..., stride_c: Any = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                               return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> ArrayT: ...


@overload
def strided_batched_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                               lda: Any = ..., ldb: Any = ..., ldc: Any = ..., stride_a: Any = ...,
                               stride_b: Any = ..., stride_c: Any = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[True],
                               return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def strided_batched_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                               lda: Any = ..., ldb: Any = ..., ldc: Any = ..., stride_a: Any = ...,
                               stride_b: Any = ..., stride_c: Any = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                               return_launch: Literal[True], observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def strided_batched_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                               lda: Any = ..., ldb: Any = ..., ldc: Any = ..., stride_a: Any = ...,
                               stride_b: Any = ..., stride_c: Any = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[True],
                               return_launch: Literal[True], observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def strided_batched_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                               lda: Any = ..., ldb: Any = ..., ldc: Any = ..., stride_a: Any = ...,
                               stride_b: Any = ..., stride_c: Any = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: bool = ...,
                               return_launch: bool = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def strided_batched_matmul_tla(a, b, *, layout_a="row", layout_b="row", lda=None, ldb=None, ldc=None, stride_a=None,
                               stride_b=None, stride_c=None, out_dtype=None, core_num: int = 24,
                               seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None,
                               return_report: bool = False, return_launch: bool = False, observers=(), kernel=None):
    """C[i] = A[i] @ B[i] on simulated AI cores through rank-3 TLA layouts (CATLASS ``StridedBatchedMatmulTla``,
    example 45).

    ``a`` [batch, m, k] and ``b`` [batch, k, n] (float16, bfloat16 or int8) are the logical operands; in device
    memory A is stored ``layout_a`` ('row' or 'column') with leading dimension ``lda`` and ``stride_a`` elements
    between batches (likewise B; C is row-major with ``ldc`` and ``stride_c``); each defaults to the packed value
    (:func:`default_strides`) and must satisfy the example's rules (:func:`check_strides`). Returns C
    [batch, m, n]: float16 / bfloat16 (or float32 with ``out_dtype``) or int32 for int8. The swizzle is the
    example's (``<3,0>`` when m > n, else ``<3,1>``). The launch keywords are :mod:`catlass_py.ops.operator`'s.
    Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 3)
    b = as_array("b", b, ("float16", "bfloat16", "int8"), 3)
    elem = element_of("a", a)
    if element_of("b", b) != elem:
        raise ArgumentError(f"b: expected dtype {elem} like a, got {get_dtype(b.dtype).name}")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise ArgumentError(f"b: expected shape ({a.shape[0]}, {a.shape[2]}, n) to match a {a.shape}, got {b.shape}")
    batch, m, k = a.shape
    n = b.shape[2]
    for name, v in (("batch", batch), ("m", m), ("n", n), ("k", k)):
        check_extent(name, v, low=1)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    out = out_element(elem, out_dtype)
    check_core_num(run.core_num, run.arch)
    given = {"lda": lda, "ldb": ldb, "ldc": ldc, "stride_a": stride_a, "stride_b": stride_b, "stride_c": stride_c}
    for name, v in given.items():
        if v is not None and (not is_int(v) or v <= 0):
            raise ArgumentError(f"{name}: leading dimensions and strides must be integers greater than 0, got {v!r}")
    defaults = default_strides(batch, m, n, k, la, lb, lda=lda, ldb=ldb, ldc=ldc)
    st = {name: given[name] if given[name] is not None else v for name, v in defaults.items()}
    check_strides(m, n, k, la, lb, **st)
    tag_a, tag_b = la.__name__, lb.__name__
    lay_a = batched_layout(batch, m, k, st["stride_a"], st["lda"], tag_a)
    lay_b = batched_layout(batch, k, n, st["stride_b"], st["ldb"], tag_b)
    lay_c = batched_layout(batch, m, n, st["stride_c"], st["ldc"], "RowMajor")
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, la, lb, out, swizzle_for(m, n)))
    if run.numerics and not (is_virtual(a) or is_virtual(b)):
        flat_a, flat_b = np.zeros(extent(lay_a), a.dtype), np.zeros(extent(lay_b), b.dtype)
        # the storage: zeros between the matrices, each operand written through its layout's strides
        as_strided(flat_a, a.shape, tuple(s * a.itemsize for s in lay_a.stride))[...] = a
        as_strided(flat_b, b.shape, tuple(s * b.itemsize for s in lay_b.stride))[...] = b
    else:  # a timing-only launch or shape-only operands: shape-only storage
        flat_a, flat_b = virtual_array(extent(lay_a), a.dtype), virtual_array(extent(lay_b), b.dtype)
    out_np = get_dtype(out).numpy
    args, host = run.device_arguments(
        "strided_batched_matmul_tla", kernel,
        lambda gm: kernel.Arguments(batch, GemmCoord(m, n, k), gm["a"], lay_a, gm["b"], lay_b, gm["c"], lay_c),
        inputs={"a": flat_a, "b": flat_b}, outputs={"c": ((extent(lay_c),), out_np)})
    result = run.run(kernel, args, host["c"])
    flat_c, extra = (result[0], result[1:]) if isinstance(result, tuple) else (result, ())
    c = (virtual_array((batch, m, n), flat_c.dtype) if is_virtual(flat_c)
         else np.ascontiguousarray(strided_view(flat_c, lay_c)))
    return (c, *extra) if extra else c


__all__ = ["check_strides", "default_strides", "extent", "strided_batched_matmul_tla", "strided_view"]
