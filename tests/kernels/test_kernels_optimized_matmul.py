"""Examples 06 (OptimizedMatmul + MmadAtlasA2Preload, PADDING_NZ prologues when needed) and 21
(BasicMatmulPreload, B in zN): results against the golden, the AIC-only launch without padding, the padding
decision, the tile-shape keywords and the example scripts."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin

from catlass_py import golden
from catlass_py.arch import LaunchParams
from catlass_py.assemblies import basic_matmul_preload_zn as assembly21
from catlass_py.assemblies import optimized_matmul as assembly06
from catlass_py.errors import ArgumentError
from catlass_py.kernel import BasicMatmulPreload, OptimizedMatmul, PaddingMatrixNZ
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.ops import basic_matmul_preload_zn, optimized_matmul

EX06 = importlib.import_module("catlass_py.examples.06_optimized_matmul")
EX21 = importlib.import_module("catlass_py.examples.21_basic_matmul_preload_zN")


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, (m, k)).astype(np.float16), rng.uniform(-2, 2, (k, n)).astype(np.float16)


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),            # padding both (k = 1 is not a multiple of 256 elements)
    (300, 40, 512, 2),       # no padding; m > n: swizzle <3,0>
    (200, 300, 515, 3),      # padding both; several blocks per core
])
def test_optimized_matmul_shapes(m, n, k, cores):
    a, b = _operands(m, n, k, seed=m + k)
    c, report = optimized_matmul(a, b, core_num=cores, return_report=True, options=LaunchParams(detect_races=True))
    assert golden.compare_data(c, golden.matmul(a, b), k).passed
    assert_each_written_once(report, {None: (m, n)})
    assert_round_robin(report, cores)


def test_optimized_matmul_padding_is_nz_and_aic_only_without_it():
    assert assembly06.padding_needed(64, 64, 512) == (False, False)
    assert assembly06.padding_needed(64, 64, 300) == (True, True)
    kernel = assembly06.assemble(padding_a=True, padding_b=True)
    assert isinstance(kernel.prologue_a, PaddingMatrixNZ) and kernel.block_mmad.a_type.layout is zN
    assert kernel.block_mmad.b_type.layout is nZ
    assert assembly06.assemble().aiv is None
    both_cm = assembly06.assemble(layout_a=ColumnMajor, layout_b=ColumnMajor)
    assert tuple(both_cm.block_mmad.l1_tile_shape) == (256, 128, 256)
    retiled = assembly06.assemble(l1_tile=(256, 128, 256), l0_tile=(256, 128, 64))
    assert tuple(retiled.block_mmad.l1_tile_shape) == (256, 128, 256)
    a, b = _operands(260, 140, 512)
    c = optimized_matmul(a, b, core_num=2, kernel=retiled)
    assert golden.compare_data(c, golden.matmul(a, b), 512).passed


@pytest.mark.parametrize("layout_b", ["zN", "nZ", "row", "column"])
def test_basic_matmul_preload_layouts(layout_b):
    m, n, k = 150, 272, 300
    a, b = _operands(m, n, k, seed=7)
    c, report = basic_matmul_preload_zn(a, b, layout_b=layout_b, core_num=2, return_report=True,
                                        options=LaunchParams(detect_races=True))
    assert golden.compare_data(c, golden.matmul(a, b), k).passed
    assert_each_written_once(report, {None: (m, n)})


def test_basic_matmul_preload_assembly_and_errors():
    kernel = assembly21.assemble()
    assert isinstance(kernel, BasicMatmulPreload) and isinstance(kernel, OptimizedMatmul)
    assert kernel.aiv is None and kernel.block_mmad.b_type.layout is zN
    assert kernel.block_mmad.a_type.layout is RowMajor
    tuned = assembly21.assemble(l1_tile=(32, 320, 128), l0_tile=(32, 320, 32), swizzle=(4, 1))
    a, b = _operands(20, 640, 256)
    c = basic_matmul_preload_zn(a, b, core_num=2, kernel=tuned)
    assert golden.compare_data(c, golden.matmul(a, b), 256).passed
    with pytest.raises(ArgumentError, match="layout_b"):
        basic_matmul_preload_zn(a, b, layout_b="zZ")


def test_examples_06_and_21():
    res = EX06.run(["200", "100", "300"], cores=2)
    assert res.passed and res.details["padding_a"] and res.details["padding_b"]
    res = EX06.run(["64", "96", "512"], cores=2)
    assert res.passed and not res.details["padding_a"] and res.details["workspace_bytes"] == 0
    res = EX21.run(["40", "288", "320"], cores=3)
    assert res.passed and res.details["total_blocks"] == 2
    with pytest.raises(ArgumentError, match="multiples of 16"):
        EX21.run(["40", "290", "320"])
