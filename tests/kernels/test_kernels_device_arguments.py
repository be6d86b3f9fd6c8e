"""``DeviceGemm.initialize`` refuses Arguments a kernel cannot read before anything runs: a host array where a GM
tensor belongs, an A or B stored (``gm_input(..., layout=)``) in another layout than the kernel reads, and a
workspace-epilogue kernel's Arguments with neither the per-token dequant pointers nor the epilogue's own Params."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, PaddingColumnMajor, RowMajor, nZ, zN
from catlass_py.ops.operator import as_stored, gm_input, gm_output

basic = importlib.import_module("catlass_py.ops.basic_matmul")
quant = importlib.import_module("catlass_py.ops.quant_matmul")


def test_a_host_array_in_the_arguments_is_named():
    kernel = basic.build_kernel()
    a, c = np.ones((64, 64), np.float16), np.zeros((64, 64), np.float16)
    args = kernel.Arguments(GemmCoord(64, 64, 64), gm_input("a", a), a, gm_output("c", c))
    with pytest.raises(ArgumentError, match=r"^BasicMatmulArguments\.ptr_b: expected a GlobalTensor, got a numpy array"):
        DeviceGemm(kernel).initialize(args)


def test_a_workspace_epilogue_without_its_operands_or_params_is_named():
    kernel = quant.build_kernel()
    a = np.ones((64, 64), np.int8)
    args = kernel.Arguments(GemmCoord(64, 64, 64), 2, gm_input("a", a), gm_input("b", a), None, None, None)
    with pytest.raises(ArgumentError, match="ptr_scale, ptr_per_token_scale, ptr_d None and no epilogue_params"):
        DeviceGemm(kernel).initialize(args)


@pytest.mark.parametrize("stored", [RowMajor, zN, nZ])
def test_an_operand_stored_in_another_layout_than_the_kernel_reads_is_named(stored):
    # the kernel reads B column-major: B stored row-major (or fractal) would be read in the wrong order
    kernel = basic.build_kernel(layout_b=ColumnMajor)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 48)).astype(np.float16), rng.standard_normal((48, 80)).astype(np.float16)
    c = np.zeros((64, 80), np.float16)
    args = kernel.Arguments(GemmCoord(64, 80, 48), gm_input("a", a, RowMajor), gm_input("b", b, stored),
                            gm_output("c", c))
    with pytest.raises(ArgumentError, match=rf"^BasicMatmulArguments\.ptr_b: its B was stored {stored.__name__} "
                                            r".*the kernel reads B as ColumnMajor .*layout=ColumnMajor$"):
        DeviceGemm(kernel).initialize(args)


def test_a_rearranged_view_a_transposed_matrix_and_other_layouts_are_named():
    kernel = basic.build_kernel(layout_b=ColumnMajor)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 48)).astype(np.float16), rng.standard_normal((48, 80)).astype(np.float16)
    c = np.zeros((64, 80), np.float16)

    def args(gm_b):
        return kernel.Arguments(GemmCoord(64, 80, 48), gm_input("a", a), gm_b, gm_output("c", c))

    # a Fortran-ordered B (column-major in memory) without layout: gm_input stores it row-major, and says so
    with pytest.raises(ArgumentError, match=r"ptr_b: its B was stored RowMajor .*layout=ColumnMajor$"):
        DeviceGemm(kernel).initialize(args(gm_input("b", np.asfortranarray(b))))
    # B transposed (n x k) given as if it were B, in the right layout: the shape says it is not B
    with pytest.raises(ArgumentError, match=r"ptr_b: its B is a 80 x 48 matrix, but the problem's B is k x n = 48 x 80"):
        DeviceGemm(kernel).initialize(args(gm_input("b", np.ascontiguousarray(b.T), ColumnMajor)))
    for layout in (PaddingColumnMajor, "ColumnMajor"):  # layouts gm_input does not store
        with pytest.raises(ArgumentError, match=r"^gm_input: layout must be RowMajor, ColumnMajor, zN or nZ"):
            gm_input("b", b, layout)


@pytest.mark.parametrize("how", ["layout", "as stored", "unsaid"])
def test_an_operand_stored_as_the_kernel_reads_it_computes_the_product(how):
    kernel = basic.build_kernel(layout_b=ColumnMajor)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 48)).astype(np.float16), rng.standard_normal((48, 80)).astype(np.float16)
    c = np.zeros((64, 80), np.float16)
    gm_b = {"layout": lambda: gm_input("b", b, ColumnMajor),  # stored by gm_input, and remembered
            "as stored": lambda: gm_input("b", as_stored(b, ColumnMajor)),  # already in storage order: nothing said
            "unsaid": lambda: gm_input("b", np.ascontiguousarray(b.T))}[how]()
    op = DeviceGemm(kernel)
    op.initialize(kernel.Arguments(GemmCoord(64, 80, 48), gm_input("a", a), gm_b, gm_output("c", c)))
    op.run(2)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
