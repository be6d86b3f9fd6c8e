"""``DeviceGemm.initialize`` refuses Arguments a kernel cannot read before anything runs: a host array where a GM
tensor belongs, and a workspace-epilogue kernel's Arguments with neither the per-token dequant pointers nor the
epilogue's own Params."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.ops.operator import gm_input, gm_output

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
