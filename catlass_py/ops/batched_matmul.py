"""``batched_matmul``: CATLASS example 01 (``BatchedMatmul`` + ``MmadAtlasA2Pingpong``) as a numpy-in /
numpy-out function."""

from __future__ import annotations

import importlib
from functools import lru_cache

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec, get_arch
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops._matmul import check_extent, element_of, gm_input, gm_output, launch, out_element, parse_layout
from catlass_py.ops._validate import as_array, check_core_num


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, swizzle=(3, 0), element: str = "float16", layout_a="row",
                 layout_b="row", out: str | None = None):
    """Example 01's kernel for one swizzle and these operand types (``examples/01_batched_matmul.py``)."""
    example = importlib.import_module("catlass_py.examples.01_batched_matmul")
    return example.assemble(arch, swizzle=tuple(swizzle), element=element,
                            layout_a=parse_layout("layout_a", layout_a), layout_b=parse_layout("layout_b", layout_b),
                            out_element=out)


def validate_inputs(a, b, layout_a, layout_b, out_dtype, core_num, arch) -> tuple[int, int, int, int, str, str]:
    """Check every input of the op; return (batch, m, n, k, input element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 3)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 3)
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    batch, m, k = a.shape
    if b.shape[0] != batch or b.shape[1] != k:
        raise ArgumentError(f"b: expected shape ({batch}, {k}, n) to match a {a.shape}, got {b.shape}")
    n = b.shape[2]
    check_extent("batch_count", batch)
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return batch, m, n, k, elem, out


def batched_matmul(a, b, *, layout_a="row", layout_b="row", out_dtype=None, core_num: int = 24,
                   seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, return_report: bool = False,
                   observers=(), kernel=None):
    """C[i] = A[i] @ B[i] on simulated AI cores (CATLASS ``BatchedMatmul``, example 01).

    ``a`` [batch, m, k] and ``b`` [batch, k, n] (logical), float16, bfloat16 or int8; ``layout_a``/``layout_b``
    ('row' or 'column') choose how every batch is stored. The swizzle follows the example: ``<3,0>`` when
    m > n, else ``<3,1>``. Returns C [batch, m, n] (float16 / bfloat16 / int32, or ``out_dtype='float32'``).
    ``return_report=True`` returns ``(c, report)``. Inputs are never modified.
    """
    arch = get_arch(arch)
    batch, m, n, k, elem, out = validate_inputs(a, b, layout_a, layout_b, out_dtype, core_num, arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    if kernel is None:
        kernel = build_kernel(arch, (3, 0) if m > n else (3, 1), elem, la, lb, out)
    host_c = np.zeros((batch, m, n), get_dtype(out).numpy)
    args = kernel.Arguments(batch, GemmCoord(m, n, k), gm_input("a", a, la), gm_input("b", b, lb),
                            gm_output("c", host_c))
    report = launch(kernel, args, core_num, seed=seed, observers=observers, return_report=return_report)
    return (host_c, report) if return_report else host_c


__all__ = ["batched_matmul", "build_kernel", "validate_inputs"]
