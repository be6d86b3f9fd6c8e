"""``kernel=`` on the operators: a kernel assembled for other operands (element types, GM layouts, group-list form)
or of another operator is refused before anything runs with an ArgumentError naming the difference; one assembled
with other tiles for the same operands runs and computes the same result. Plus the call errors and flag keywords
of the operator wrappers, and the short repr of an ArchSpec their help shows."""

from __future__ import annotations

import importlib
import pydoc

import numpy as np
import pytest

from catlass_py import golden, ops
from catlass_py.arch.spec import ATLAS_A2, ASCEND_910B3, arch_from_dict, get_arch
from catlass_py.assemblies.basic_matmul import assemble as assemble_basic
from catlass_py.data import example10_inputs
from catlass_py.errors import ArgumentError
from catlass_py.layout import ColumnMajor, RowMajor

basic = importlib.import_module("catlass_py.ops.basic_matmul")
slice_m = importlib.import_module("catlass_py.ops.grouped_matmul_slice_m")
tqbmm = importlib.import_module("catlass_py.ops.transpose_quant_batch_matmul")

RNG = np.random.default_rng(0)
A = RNG.uniform(-2, 2, (64, 48)).astype(np.float16)
B = RNG.uniform(-2, 2, (48, 32)).astype(np.float16)


@pytest.mark.parametrize("kernel, match", [
    (basic.build_kernel(layout_a="column"), "A float16 ColumnMajor where the call's operands need float16 RowMajor"),
    (basic.build_kernel(out="float32"), "C float32 RowMajor where the call's operands need float16 RowMajor"),
    (basic.build_kernel(element="bfloat16"), "A bfloat16 RowMajor where the call's operands need float16 RowMajor"),
    ("x", "expected a BasicMatmul .* got str 'x'"),
    (slice_m.build_kernel(), "expected a BasicMatmul .* got GroupedMatmulSliceM"),
])
def test_a_kernel_for_other_operands_is_refused(kernel, match):
    a, b = A.copy(), B.copy()
    with pytest.raises(ArgumentError, match=match):
        ops.basic_matmul(a, b, core_num=2, kernel=kernel)
    assert np.array_equal(a, A) and np.array_equal(b, B)


def test_a_kernel_with_other_tiles_for_the_same_operands_runs():
    tiled = assemble_basic(l1_tile=(64, 128, 128), l0_tile=(64, 128, 64), swizzle=(3, 1))
    got = ops.basic_matmul(A, B, core_num=2, kernel=tiled)
    # k = 48 is one K tile either way: the same fp32 sums, rounded once
    assert np.array_equal(got.view(np.uint16), ops.basic_matmul(A, B, core_num=2).view(np.uint16))
    np.testing.assert_allclose(got.astype(np.float64), golden.matmul(A, B), rtol=2**-10, atol=2**-10)


def test_the_group_list_form_and_the_layout_of_b_are_part_of_a_grouped_kernel():
    a = RNG.uniform(-2, 2, (40, 32)).astype(np.float16)
    b = RNG.uniform(-2, 2, (2, 32, 48)).astype(np.float16)
    group_list = np.array([16, 40], np.int64)
    with pytest.raises(ArgumentError, match="group_list_segmented True where the call's operands need False"):
        ops.grouped_matmul_slice_m(a, b, group_list, core_num=2,
                                   kernel=slice_m.build_kernel(ATLAS_A2, "k<=n", "float16", "column", None, True))
    with pytest.raises(ArgumentError, match="B float16 RowMajor where the call's operands need float16 ColumnMajor"):
        ops.grouped_matmul_slice_m(a, b, group_list, core_num=2,
                                   kernel=slice_m.build_kernel(ATLAS_A2, "k<=n", "float16", "row"))


def test_the_flagship_refuses_another_operators_kernel():
    x = example10_inputs(3, 64, 96, 64)
    with pytest.raises(ArgumentError, match="expected a GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace"):
        ops.grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale,
                                                     core_num=2, kernel=basic.build_kernel())


@pytest.mark.parametrize("value", ["False", "no", None, 0, 1])
def test_saturation_takes_a_bool_only(value):
    x1, x2, s1, s2 = tqbmm.make_inputs(16, 64, 32, 1)
    with pytest.raises(ArgumentError, match="saturation: expected True or False"):
        ops.transpose_quant_batch_matmul(x1, x2, s1, s2, core_num=1, saturation=value)


def test_a_call_error_names_the_operator():
    with pytest.raises(TypeError, match=r"^basic_matmul\(\) got an unexpected keyword argument 'out_dtyp'"):
        ops.basic_matmul(A, B, out_dtyp="float32")
    with pytest.raises(TypeError, match=r"^basic_matmul\(\) missing a required argument: 'b'"):
        ops.basic_matmul(A)


def test_an_arch_spec_repr_is_short_and_evaluates_to_an_equal_spec():
    assert repr(ATLAS_A2) == "get_arch('AtlasA2')" and repr(ASCEND_910B3) == "get_arch('Ascend910B3')"
    big = arch_from_dict({"base": "AtlasA2", "name": "Big48", "core_num": 48, "cost": {"clock_ghz": 2.0}})
    assert repr(big) == "arch_from_dict({'base': 'AtlasA2', 'name': 'Big48', 'core_num': 48, 'cost': {'clock_ghz': 2.0}})"
    for spec in (ATLAS_A2, ASCEND_910B3, big):
        assert eval(repr(spec), {"get_arch": get_arch, "arch_from_dict": arch_from_dict}) == spec  # noqa: S307
    # the default arch= in an operator's help is one short line
    text = pydoc.render_doc(ops.basic_matmul, renderer=pydoc.plaintext)
    assert "get_arch('AtlasA2')" in text and "CostParams" not in text


def test_an_a2_operator_on_the_950_names_the_arch_in_a_short_error():
    with pytest.raises(Exception, match=r"got Ascend950 \(arch_code 3510\)$") as info:
        ops.basic_matmul(A, B, core_num=2, arch="Ascend950")
    assert len(str(info.value)) < 200


def test_what_an_operator_takes_from_the_kernel_is_not_held_against_it():
    # matmul_gelu stores A and B in the kernel's layouts and writes D in its epilogue's type: a kernel with
    # column-major A and a bf16 D runs on fp16 row-major-called operands, and only the element type must agree
    activation = importlib.import_module("catlass_py.ops.matmul_activation")
    kernel = activation.build_kernel("gelu", ATLAS_A2, 0, "float16", "bfloat16", ColumnMajor, RowMajor)
    d = ops.matmul_gelu(A, B, core_num=2, kernel=kernel)
    plain = ops.matmul_gelu(A, B, core_num=2, out_dtype="bfloat16")
    assert d.dtype == plain.dtype and np.array_equal(d.view(np.uint16), plain.view(np.uint16))
    with pytest.raises(ArgumentError, match="A bfloat16 where the call's operands need float16"):
        ops.matmul_gelu(A, B, core_num=2,
                        kernel=activation.build_kernel("gelu", ATLAS_A2, 0, "bfloat16", "bfloat16", RowMajor, RowMajor))
