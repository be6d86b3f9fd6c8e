"""``grouped_matmul_slice_k``: CATLASS example 05 (``GroupedMatmulSliceK`` + ``MmadAtlasA2PreloadAsync``) as a
numpy-in / numpy-out function."""

from __future__ import annotations

import importlib
from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec, get_arch
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops._matmul import check_extent, element_of, gm_input, gm_output, launch, out_element
from catlass_py.ops._validate import as_array, check_core_num, check_group_list


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", out: str | None = None):
    """Example 05's kernel for these types (``examples/05_grouped_matmul_slice_k.py``)."""
    example = importlib.import_module("catlass_py.examples.05_grouped_matmul_slice_k")
    return example.assemble(arch, element=element, out_element=out)


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
                           arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(), kernel=None):
    """Grouped matmul with K split by groups (CATLASS ``GroupedMatmulSliceK``, example 05) on simulated AI cores.

    ``a`` [m, k] (stored column-major on the device, as the kernel requires) and ``b`` [k, n] (row-major),
    float16, bfloat16 or int8; ``group_list`` int64 [g]: inclusive prefix sums over k (K past the last value
    is unused). Returns C [g, m, n] with ``C[i] = a[:, K_i] @ b[K_i, :]``; a group with an empty K slice is
    zero-filled by the vector cores. ``return_report=True`` returns ``(c, report)``. Inputs are never modified.
    """
    arch = get_arch(arch)
    g, m, n, k, elem, out = validate_inputs(a, b, group_list, out_dtype, core_num, arch)
    if kernel is None:
        kernel = build_kernel(arch, elem, out)
    host_c = np.zeros((g, m, n), get_dtype(out).numpy)
    args = kernel.Arguments(GemmCoord(m, n, k), g, gm_input("group_list", group_list), gm_input("a", a, ColumnMajor),
                            gm_input("b", b), gm_output("c", host_c))
    report = launch(kernel, args, core_num, seed=seed, observers=observers, return_report=return_report)
    return (host_c, report) if return_report else host_c


__all__ = ["build_kernel", "grouped_matmul_slice_k", "validate_inputs"]
