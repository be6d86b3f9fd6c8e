"""``grouped_matmul``: CATLASS example 08 (``GroupedMatmul`` + ``MmadAtlasA2PreloadAsync``) as a numpy-in /
numpy-out function over a list of independent problems of any shapes."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.budget import Footprint, array_bytes, workspace_size
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.grouped_matmul import MAX_TENSOR_COUNT
from catlass_py.layout import RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    as_stored,
    check_core_num,
    check_extent,
    element_of,
    gm_output,
    op_options,
    out_element,
    parse_layout,
    stored_copy_bytes,
)
from catlass_py.virtual import is_virtual, virtual_array

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a="column", layout_b="row",
                 out: str | None = None):
    """Example 08's kernel for these types (:mod:`catlass_py.assemblies.grouped_matmul`)."""
    return assemble(arch, element=element, layout_a=parse_layout("layout_a", layout_a),
                    layout_b=parse_layout("layout_b", layout_b), out_element=out)


def validate_inputs(a_list, b_list, layout_a, layout_b, out_dtype, core_num, arch):
    """Check every input of the op; return (shapes, input element, output element)."""
    for name, lst in (("a_list", a_list), ("b_list", b_list)):
        if not isinstance(lst, (list, tuple)):
            raise ArgumentError(f"{name}: expected a list of numpy arrays, got {type(lst).__name__}")
    g = len(a_list)
    if g == 0:
        raise ArgumentError("a_list: expected at least one group, got an empty list")
    if g > MAX_TENSOR_COUNT:
        raise ArgumentError(f"a_list: GroupedMatmul supports at most {MAX_TENSOR_COUNT} groups, got {g}")
    if len(b_list) != g:
        raise ArgumentError(f"b_list: expected {g} matrices (one per a), got {len(b_list)}")
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    first = as_array("a_list[0]", a_list[0], ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a_list[0]", first)
    shapes = []
    for i, (a, b) in enumerate(zip(a_list, b_list)):
        a = as_array(f"a_list[{i}]", a, elem, 2)
        b = as_array(f"b_list[{i}]", b, elem, 2)
        m, k = a.shape
        kb, n = b.shape
        if kb != k:
            raise ArgumentError(f"b_list[{i}]: expected shape ({k}, n) to match a_list[{i}] {a.shape}, got {b.shape}")
        for label, v in (("m", m), ("n", n), ("k", k)):
            check_extent(f"group {i} {label}", v)
        shapes.append(GemmCoord(m, n, k))
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return shapes, elem, out


def _pack(arrays, layout, dtype) -> np.ndarray:
    """The groups' operands back to back in one buffer, each stored in ``layout`` (a copy; inputs untouched)."""
    flat = [as_stored(x, layout).reshape(-1) for x in arrays]
    if any(is_virtual(x) for x in flat):  # shape-only operands (a timing-only run): a shape-only buffer
        return virtual_array(sum(x.size for x in flat), dtype)
    return np.concatenate(flat) if flat else np.zeros(0, dtype)


@overload
def grouped_matmul(a_list: Sequence[ArrayT], b_list: Sequence[ArrayLike], *, layout_a: LayoutLike = ...,
                   layout_b: LayoutLike = ..., out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                   arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                   return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> list[ArrayT]: ...


@overload
def grouped_matmul(a_list: Sequence[ArrayT], b_list: Sequence[ArrayLike], *, layout_a: LayoutLike = ...,
                   layout_b: LayoutLike = ..., out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                   arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[True],
                   return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[list[ArrayT], WorkloadReport]: ...


@overload
def grouped_matmul(a_list: Sequence[ArrayT], b_list: Sequence[ArrayLike], *, layout_a: LayoutLike = ...,
                   layout_b: LayoutLike = ..., out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                   arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                   return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[list[ArrayT], LaunchResult | None]: ...


@overload
def grouped_matmul(a_list: Sequence[ArrayT], b_list: Sequence[ArrayLike], *, layout_a: LayoutLike = ...,
                   layout_b: LayoutLike = ..., out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                   arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[True],
                   return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[list[ArrayT], WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul(a_list: Sequence[ArrayT], b_list: Sequence[ArrayLike], *, layout_a: LayoutLike = ...,
                   layout_b: LayoutLike = ..., out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                   arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: bool = ...,
                   return_launch: bool = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[list[ArrayT]]: ...


@array_op(lists=("a_list", "b_list"))
def grouped_matmul(a_list, b_list, *, layout_a="column", layout_b="row", out_dtype=None, core_num: int = 24,
                   seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                   return_launch: bool = False, observers=(), kernel=None):
    """``C_g = A_g @ B_g`` for up to 256 problems of arbitrary shapes in one launch (CATLASS ``GroupedMatmul``,
    example 08) on simulated AI cores.

    ``a_list[g]`` [m_g, k_g] and ``b_list[g]`` [k_g, n_g]: logical matrices, all float16, bfloat16 or int8;
    ``layout_a`` (default 'column', as in the example) and ``layout_b`` ('row') choose how every group is
    stored. Returns the list of C_g [m_g, n_g]. A group with k_g == 0 issues no work on the device (CATLASS
    leaves its C untouched); here C starts zeroed, so it reads as the mathematically right 0.
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    shapes, elem, out = validate_inputs(a_list, b_list, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, la, lb, out))
    np_in = get_dtype(elem).numpy
    out_np = get_dtype(out).numpy
    layouts_a = [la(s.m, s.k) for s in shapes]
    layouts_b = [lb(s.k, s.n) for s in shapes]
    layouts_c = [RowMajor(s.m, s.n) for s in shapes]
    # the memory budget first: the packed operands (and the per-group copies a layout change makes on the way),
    # C, the workspace
    sizes = {"a": (sum(x.nbytes for x in a_list), elem), "b": (sum(x.nbytes for x in b_list), elem),
             "c": (array_bytes((sum(s.m * s.n for s in shapes),), out_np), out_np)}
    footprint = Footprint()
    for name, arrays, layout in (("a", a_list, la), ("b", b_list, lb)):  # shape-only operands pack to nothing
        footprint = footprint.add("gm", f"packed {name}", 0 if any(is_virtual(x) for x in arrays) else sizes[name][0])
        footprint = footprint.add("gm", f"copies of {name}", sum(stored_copy_bytes(x, layout) for x in arrays))
    footprint = run.reserve(footprint.add("gm", "c", sizes["c"][0] if run.numerics else 0), "grouped_matmul", kernel)

    def arguments(gm):
        return kernel.Arguments(len(shapes), shapes, gm["a"], layouts_a, gm["b"], layouts_b, gm["c"], layouts_c)

    run.reserve(footprint.without("cores").add("workspace", "workspace", workspace_size(kernel, arguments, sizes)),
                "grouped_matmul", kernel)
    a_buf = _pack(a_list, la, np_in)
    b_buf = _pack(b_list, lb, np_in)
    host_c = run.zeros(sum(s.m * s.n for s in shapes), out_np)
    gm_a = GlobalBuffer.from_array(a_buf, "a", read_only=True).tensor(elem)
    gm_b = GlobalBuffer.from_array(b_buf, "b", read_only=True).tensor(elem)
    args = arguments({"a": gm_a, "b": gm_b, "c": gm_output("c", host_c)})
    result, off = [], 0
    for s in shapes:
        result.append(host_c[off:off + s.m * s.n].reshape(s.m, s.n))
        off += s.m * s.n
    return run.run(kernel, args, result)


__all__ = ["build_kernel", "grouped_matmul", "validate_inputs"]
