"""Each published point's launch: the example's kernel assembled with the point's tiles, swizzle, layouts and dtype,
run on the point's device variant with the point's core count (every AI core of the variant unless the source
says otherwise), with the caller's observers (a :class:`~catlass_py.analysis.CostModel`, an event recorder).

The inputs are zeros (the timing does not depend on the values). Examples 12, 34, 44 and 52 go through their operators
(which make the C++'s runtime choices: the swizzle direction, the m > n branch); 00, 06 and 21 are assembled here
with the point's tile shapes (example 00's assembly with CATLASS's tuner / guide tiles; 06 and 21 through their
assemblies' ``l1_tile`` / ``l0_tile`` keywords).
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch import get_arch
from catlass_py.assemblies import basic_matmul_preload_zn as assembly21
from catlass_py.assemblies import optimized_matmul as assembly06
from catlass_py.calibration.points import PublishedPoint
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord, GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmul, DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops import (
    basic_matmul_preload_zn,
    optimized_matmul,
    quant_matmul,
    single_core_splitk_matmul,
)
from catlass_py.ops.operator import gm_input, gm_output
from catlass_py.ops.quant_matmul_full_load_a_tla import quant_matmul_full_load_a_tla
from catlass_py.ops.quant_multi_core_splitk_matmul_tla import (
    quant_multi_core_splitk_matmul_tla,
)

_LAYOUT = {"row": RowMajor, "column": ColumnMajor, "zN": zN, "nZ": nZ, None: None}


def basic_matmul_kernel(arch, element="float16", layout_a=RowMajor, layout_b=RowMajor, l1_tile=(128, 256, 256),
                        l0_tile=(128, 256, 64), swizzle=(3, 0)):
    """Example 00's assembly (:mod:`catlass_py.assemblies.basic_matmul`) with other L1 / L0 tile shapes, as
    CATLASS's tuner instantiates it (``catlass_gemm_00_basic_matmul_..._<L1>_<L0>_swizzle<a>x<b>``) and its
    optimisation guide times it: ``MmadAtlasA2Pingpong`` (unit flag except for int8), C in the input type."""
    policy = MmadAtlasA2Pingpong(enable_unit_flag=element != "int8", arch=arch)
    out = "int32" if element == "int8" else element
    block_mmad = BlockMmad(policy, GemmShape(*l1_tile), GemmShape(*l0_tile), GemmType(element, layout_a),
                           GemmType(element, layout_b), GemmType(out, RowMajor))
    return BasicMatmul(block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


def _zeros(shape, element):
    return np.zeros(shape, get_dtype(element).numpy)


def _run_00(p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    element = p.dtype or "float16"
    la, lb = _LAYOUT[p.layout_a or "row"], _LAYOUT[p.layout_b or "row"]
    kernel = basic_matmul_kernel(arch, element, la, lb, p.l1_tile or (128, 256, 256), p.l0_tile or (128, 256, 64),
                                 p.swizzle or (3, 0))
    out = "int32" if element == "int8" else element
    args = kernel.Arguments(GemmCoord(m, n, k), gm_input("a", _zeros((m, k), element), la),
                            gm_input("b", _zeros((k, n), element), lb), gm_output("c", _zeros((m, n), out)))
    op = DeviceGemm(kernel)
    op.can_implement(args)
    op.initialize(args)
    op.run(cores, observers=observers, options=options)


def _run_06(p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    element = p.dtype or "float16"
    la, lb = _LAYOUT[p.layout_a or "row"], _LAYOUT[p.layout_b or "column"]
    pad_a, pad_b = assembly06.padding_needed(m, n, k, element, la, lb)
    swizzle = p.swizzle or ((3, 0) if m > n else (3, 1))
    kernel = assembly06.assemble(arch, padding_a=pad_a, padding_b=pad_b, swizzle=swizzle, element=element,
                                 layout_a=la, layout_b=lb, l1_tile=p.l1_tile, l0_tile=p.l0_tile)
    optimized_matmul(_zeros((m, k), element), _zeros((k, n), element), layout_a=la, layout_b=lb, core_num=cores,
                     arch=arch, observers=observers, options=options, kernel=kernel)


def _run_21(p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    element = p.dtype or "float16"
    lb = _LAYOUT[p.layout_b or "zN"]
    tiles = {"l1_tile": p.l1_tile, "l0_tile": p.l0_tile} if p.l1_tile else {}
    kernel = assembly21.assemble(arch, layout_b=lb, element=element, swizzle=p.swizzle or (3, 0), **tiles)
    basic_matmul_preload_zn(_zeros((m, k), element), _zeros((k, n), element), layout_b=lb, core_num=cores,
                            arch=arch, observers=observers, options=options, kernel=kernel)


def _run_12(p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    scale, per_token = np.ones(n, np.float16), np.ones(m, np.float16)
    quant_matmul(_zeros((m, k), "int8"), _zeros((k, n), "int8"), scale, per_token, layout_a=p.layout_a or "row",
                 layout_b=p.layout_b or "column", core_num=cores, arch=arch, observers=observers, options=options)


def _run_quant_tla(op, p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    scale, per_token = np.ones(n, np.float32), np.ones(m, np.float32)
    op(_zeros((m, k), "int8"), _zeros((k, n), "int8"), scale, per_token, layout_a=p.layout_a or "row",
       layout_b=p.layout_b or "column", core_num=cores, arch=arch, observers=observers, options=options)


def _run_44(p: PublishedPoint, arch, cores, observers, options):
    _run_quant_tla(quant_matmul_full_load_a_tla, p, arch, cores, observers, options)


def _run_52(p: PublishedPoint, arch, cores, observers, options):
    _run_quant_tla(quant_multi_core_splitk_matmul_tla, p, arch, cores, observers, options)


def _run_34(p: PublishedPoint, arch, cores, observers, options):
    m, n, k = p.shape
    element = p.dtype or "float16"
    single_core_splitk_matmul(_zeros((m, k), element), _zeros((k, n), element), layout_a=p.layout_a or "row",
                              layout_b=p.layout_b or "column", core_num=cores, arch=arch, observers=observers,
                              options=options)


RUNNERS = {
    "00_basic_matmul": _run_00,
    "06_optimized_matmul": _run_06,
    "12_quant_matmul": _run_12,
    "21_basic_matmul_preload_zN": _run_21,
    "34_single_core_splitk_matmul": _run_34,
    "44_quant_matmul_full_loadA_tla": _run_44,
    "52_quant_multi_core_splitk_matmul_tla": _run_52,
}
"""Example name -> the function that launches a point of it."""


def launch_point(point: PublishedPoint, *, observers=(), options=None, arch=None) -> None:
    """Run ``point``'s kernel on its device variant (``arch`` overrides the ArchSpec: same core count unless the
    point names one) with ``observers`` attached and launch ``options``."""
    runner = RUNNERS.get(point.example)
    if runner is None:
        raise ArgumentError(f"{point.id}: example {point.example} is not built in catlass_py")
    spec = get_arch(arch if arch is not None else point.arch)
    cores = point.cores or spec.core_num
    runner(point, spec, cores, tuple(observers), options)


__all__ = ["RUNNERS", "basic_matmul_kernel", "launch_point"]
