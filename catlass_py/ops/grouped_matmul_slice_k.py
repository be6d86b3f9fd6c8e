"""``grouped_matmul_slice_k``: CATLASS example 05 (``GroupedMatmulSliceK`` + ``MmadAtlasA2PreloadAsync``) as a
numpy-in / numpy-out function."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_k import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    as_array,
    check_core_num,
    check_extent,
    check_group_list,
    element_of,
    gm_input,
    gm_output,
    op_options,
    out_element,
)


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", out: str | None = None):
    """Example 05's kernel for these types (:mod:`catlass_py.assemblies.grouped_matmul_slice_k`)."""
    return assemble(arch, element=element, out_element=out)


def validate_inputs(a, b, group_list, out_dtype, core_num, arch):
    """Check every input of the op; return (g, m, n, k, input element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 2)
    m, k = a.shape
    kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    gl = as_array("group_list", group_list, "int64", 1)
    g = gl.shape[0]
    if g == 0:
        raise ArgumentError("group_list: expected at least one group, got an empty list")
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k)
    check_group_list(gl, g, k, axis="k")
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return g, m, n, k, elem, out


def grouped_matmul_slice_k(a, b, group_list, *, out_dtype=None, core_num: int = 24, seed: int | None = None,
                           arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                           return_launch: bool = False, observers=(), kernel=None):
    """Grouped matmul with K split by groups (CATLASS ``GroupedMatmulSliceK``, example 05) on simulated AI cores.

    ``a`` [m, k] (stored column-major on the device, as the kernel requires) and ``b`` [k, n] (row-major),
    float16, bfloat16 or int8; ``group_list`` int64 [g]: inclusive prefix sums over k (K past the last value
    is unused). Returns C [g, m, n] with ``C[i] = a[:, K_i] @ b[K_i, :]``; a group with an empty K slice is
    zero-filled by the vector cores. Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never
    modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, elem, out = validate_inputs(a, b, group_list, out_dtype, run.core_num, run.arch)
    if kernel is None:
        kernel = build_kernel(run.arch, elem, out)
    host_c = run.zeros((g, m, n), get_dtype(out).numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), g, gm_input("group_list", group_list), gm_input("a", a, ColumnMajor),
                            gm_input("b", b), gm_output("c", host_c))
    return run.run(kernel, args, host_c)


__all__ = ["build_kernel", "grouped_matmul_slice_k", "validate_inputs"]
