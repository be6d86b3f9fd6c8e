"""Torch users' round trip through the operators: torch tensors in (bf16 and fp8 too, views, tensors that
require grad), torch tensors out, bit for bit the numpy results; tensors seen only through DLPack (as a jax
array would be) read the same. Needs the 'torch' extra."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py import ArgumentError, ops
from catlass_py.data import example10_inputs
from catlass_py.ops.operator import to_numpy

class DLPackOnly:
    """An array-like with nothing but the DLPack protocol (as jax arrays and cupy host arrays are to us)."""

    def __init__(self, x, device=(1, 0)):
        self._x, self._device = x, device

    def __dlpack__(self, **kw):
        return self._x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._device


def _gmm_inputs():
    x = example10_inputs(group_count=2, m=40, n=64, k=32)
    return x, (x.a, x.b, x.group_list, x.scale, x.per_token_scale)


torch = pytest.importorskip("torch")


def _t(a: np.ndarray):
    """numpy (ml_dtypes bf16 / fp8 included) -> torch, through the bits."""
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"):
        if a.dtype == np.dtype(getattr(ml_dtypes, name)):
            return torch.from_numpy(a.view(np.uint8)).view(getattr(torch, name))
    return torch.from_numpy(a)


def test_torch_in_torch_out_bit_for_bit():
    x, args = _gmm_inputs()
    want = ops.grouped_matmul_slice_m_per_token_dequant(*args, core_num=2)
    got, report = ops.grouped_matmul_slice_m_per_token_dequant(*map(_t, args), core_num=2, return_report=True)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    assert torch.equal(got.view(torch.int16), torch.from_numpy(want.view(np.int16)))
    assert report.blocks_per_core() == [1, 1]  # the extra results stay as they are


@pytest.mark.parametrize("dtype, out", [(torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
                                        (torch.int8, torch.int32)])
def test_plain_matmul_dtypes_through_torch(dtype, out):
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(24, 48, generator=g) * 3).to(dtype)
    b = (torch.randn(48, 40, generator=g) * 3).to(dtype)
    c = ops.basic_matmul(a, b, core_num=2)
    assert isinstance(c, torch.Tensor) and c.dtype == out and c.shape == (24, 40)
    ref = a.double() @ b.double()
    assert torch.allclose(c.double(), ref, rtol=2 ** -7, atol=0) if out != torch.int32 else torch.equal(c, ref.int())


def test_torch_views_grads_and_non_cpu_tensors():
    a = torch.randn(48, 24, dtype=torch.float16, requires_grad=True)
    b = torch.randn(40, 48, dtype=torch.float16)
    c = ops.basic_matmul(a.mT, b.mT, core_num=2)  # transposed views and a tensor that requires grad
    assert torch.allclose(c.float(), a.detach().float().mT @ b.float().mT, rtol=2 ** -7, atol=1e-2)
    meta = torch.empty(4, 4, dtype=torch.float16, device="meta")
    with pytest.raises(ArgumentError, match=r"^a: expected a tensor in host memory .* got one on meta; move it "
                                            r"with \.cpu\(\)$"):
        ops.basic_matmul(meta, meta, core_num=2)


def test_fp8_and_e8m0_through_torch_and_dlpack():
    from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

    args = make_inputs(8, 128, 64, 2, in_dtype="e4m3", out_dtype="bfloat16")
    want = ops.transpose_quant_batch_matmul(*args, core_num=2)
    scales_e8m0 = [a if a.dtype != np.uint8 else a.view(ml_dtypes.float8_e8m0fnu) for a in args]
    tensors = [_t(a) for a in scales_e8m0]
    assert tensors[0].dtype == torch.float8_e4m3fn and tensors[2].dtype == torch.float8_e8m0fnu
    got = ops.transpose_quant_batch_matmul(*tensors, core_num=2)
    assert isinstance(got, torch.Tensor) and torch.equal(got.view(torch.int16), torch.from_numpy(want.view(np.int16)))
    # the same tensors seen only through DLPack (bf16 / fp8 / e8m0 type codes that numpy refuses)
    got = ops.transpose_quant_batch_matmul(*[DLPackOnly(t) for t in tensors], core_num=2)
    assert isinstance(got, np.ndarray) and np.array_equal(got.view(np.int16), want.view(np.int16))


def test_dlpack_bf16_from_a_foreign_producer():
    t = torch.randn(5, 7).to(torch.bfloat16)[:, 1:6]  # a strided view
    a = to_numpy("x", DLPackOnly(t))
    assert a.dtype == ml_dtypes.bfloat16 and np.array_equal(a.astype(np.float32), t.float().numpy())


def test_grouped_matmul_lists_of_tensors():
    a = [torch.randn(16, 32, dtype=torch.float16), torch.randn(8, 16, dtype=torch.float16)]
    b = [torch.randn(32, 24, dtype=torch.float16), torch.randn(16, 40, dtype=torch.float16)]
    c = ops.grouped_matmul(a, b, core_num=2)
    assert [type(x) for x in c] == [torch.Tensor, torch.Tensor] and [x.shape for x in c] == [(16, 24), (8, 40)]
