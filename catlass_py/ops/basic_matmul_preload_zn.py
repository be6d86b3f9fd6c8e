"""``basic_matmul_preload_zn``: CATLASS example 21 (``BasicMatmulPreload`` + ``MmadAtlasA2Preload``, B in the zN
"NZ" format) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Union, overload

import numpy as np

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.basic_matmul_preload_zn import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    FLOAT_TYPES,
    array_op,
    check_core_num,
    check_extent,
    check_matmul_operands,
    gm_input,
    op_options,
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, OperatorResult

#: B's storage order: 'zN' (the example's "NZ" format), 'nZ', 'row' / 'column' (or the layout class)
LayoutBLike = Union[str, type]

LAYOUTS_B = {"zN": zN, "nZ": nZ, "row": RowMajor, "row_major": RowMajor, "column": ColumnMajor,
             "column_major": ColumnMajor}


def parse_layout_b(value) -> type:
    """``'zN'`` (the example), ``'nZ'``, or a row/column name :func:`~catlass_py.ops.operator.parse_layout` takes
    (``'row'``, ``'RowMajor'``, ...; or the layout class) -> B's layout in GM. The fractal names are taken as
    written only: they differ in case alone, and CANN calls the zN layout "NZ"."""
    if value is zN or value is nZ:
        return value
    if isinstance(value, str):
        if value in ("zN", "nZ"):
            return LAYOUTS_B[value]
        if value.lower() in ("zn", "nz"):
            raise ArgumentError(f"layout_b: {value!r} is ambiguous: write 'zN' (CANN's \"NZ\" format: row-major inside "
                                "a fractal, fractals column-major) or 'nZ' (CANN's \"ZN\") exactly")
    try:
        return parse_layout("layout_b", value)
    except ArgumentError:
        raise ArgumentError("layout_b: expected 'zN', 'nZ', 'row' or 'column' (or the layout class), "
                            f"got {value!r}") from None


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_b=zN):
    """Example 21's kernel for these operand types (:mod:`catlass_py.assemblies.basic_matmul_preload_zn`)."""
    return assemble(arch, element=element, layout_b=parse_layout_b(layout_b))


def b_in_gm(name: str, b: np.ndarray, layout_b: type) -> GlobalTensor:
    """A read-only GM tensor holding the logical ``b`` [k, n] in ``layout_b``: for zN / nZ the fractal layout of
    ``MakeLayout<Element>(k, n)``, its padding zero (:func:`~catlass_py.ops.operator.gm_input`; a shape-only ``b``
    gives a shape-only buffer)."""
    return gm_input(name, b, layout_b)


def validate_inputs(a, b, layout_b, core_num, arch) -> tuple[int, int, int, str]:
    """``a`` [m, k] and ``b`` [k, n], both float16 or both bfloat16, B's layout, the extents and core count;
    returns (m, n, k, element)."""
    m, n, k, elem = check_matmul_operands(a, b, FLOAT_TYPES)
    parse_layout_b(layout_b)
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    check_core_num(core_num, arch)
    return m, n, k, elem


@overload
def basic_matmul_preload_zn(a: ArrayT, b: ArrayLike, *, layout_b: LayoutBLike = ..., core_num: int = ...,
                            seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                            return_report: Literal[False] = ..., return_launch: Literal[False] = ...,
                            observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def basic_matmul_preload_zn(a: ArrayT, b: ArrayLike, *, layout_b: LayoutBLike = ..., core_num: int = ...,
                            seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                            return_report: Literal[True], return_launch: Literal[False] = ...,
                            observers: Sequence[Observer] = ...,
                            kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def basic_matmul_preload_zn(a: ArrayT, b: ArrayLike, *, layout_b: LayoutBLike = ..., core_num: int = ...,
                            seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                            return_report: Literal[False] = ..., return_launch: Literal[True],
                            observers: Sequence[Observer] = ...,
                            kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def basic_matmul_preload_zn(a: ArrayT, b: ArrayLike, *, layout_b: LayoutBLike = ..., core_num: int = ...,
                            seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                            return_report: Literal[True], return_launch: Literal[True],
                            observers: Sequence[Observer] = ...,
                            kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def basic_matmul_preload_zn(a: ArrayT, b: ArrayLike, *, layout_b: LayoutBLike = ..., core_num: int = ...,
                            seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                            return_report: bool = ..., return_launch: bool = ..., observers: Sequence[Observer] = ...,
                            kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def basic_matmul_preload_zn(a, b, *, layout_b="zN", core_num: int = 24, seed: int | None = None,
                            arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                            return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B on simulated cube cores (CATLASS ``BasicMatmulPreload``, example 21).

    ``a`` [m, k] (stored row-major) and ``b`` [k, n] (logical; stored in ``layout_b``: 'zN' - the example's "NZ"
    format -, 'nZ', 'row' or 'column'), both float16 or both bfloat16. Returns C [m, n] in the input type (fp32
    accumulation, rounded once). The launch keywords are :mod:`catlass_py.ops.operator`'s (the memory budget,
    including B's fractal copy, is checked before anything is allocated). Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem = validate_inputs(a, b, layout_b, run.core_num, run.arch)
    lb = parse_layout_b(layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, lb))
    args, host = run.device_arguments(
        "basic_matmul_preload_zn", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": a, "b": (b, lb)}, outputs={"c": ((m, n), get_dtype(elem).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["LAYOUTS_B", "b_in_gm", "basic_matmul_preload_zn", "build_kernel", "parse_layout_b", "validate_inputs"]
