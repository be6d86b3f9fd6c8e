"""Every operator takes any array object - numpy, anything with __dlpack__ or __array__ - bf16 and fp8
included, and gives torch tensors back for torch tensors. Without torch the DLPack and __array__ paths are
covered by small stand-in objects; with torch (the 'torch' extra) by real tensors and by jax-like wrappers that
only expose DLPack."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py import ArgumentError, ops
from catlass_py.data import example10_inputs
from catlass_py.ops.operator import to_numpy


class ArrayOnly:
    """An array-like with nothing but ``__array__`` (as many array libraries have)."""

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


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


def test_array_and_dlpack_objects_give_the_numpy_result():
    x, args = _gmm_inputs()
    want = ops.grouped_matmul_slice_m_per_token_dequant(*args, core_num=2)
    # bf16 has no DLPack export in numpy: the bf16 operands go in through __array__, the rest through DLPack
    wrapped = [ArrayOnly(a) if a.dtype == ml_dtypes.bfloat16 else DLPackOnly(a) for a in args]
    got = ops.grouped_matmul_slice_m_per_token_dequant(*wrapped, core_num=2)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and np.array_equal(got.view(np.uint16),
                                                                                    want.view(np.uint16))


def test_non_arrays_and_device_memory_are_clear_errors():
    x, (a, b, gl, s, p) = _gmm_inputs()
    with pytest.raises(ArgumentError, match=r"^group_list: expected an array \(numpy, or any object with __dlpack__ "
                                            r"or __array__ such as a torch tensor or a jax array\), got list$"):
        ops.grouped_matmul_slice_m_per_token_dequant(a, b, list(gl), s, p, core_num=2)
    with pytest.raises(ArgumentError, match=r"^a: expected an array in host memory .* DLPack device type 2"):
        ops.grouped_matmul_slice_m_per_token_dequant(DLPackOnly(a, device=(2, 0)), b, gl, s, p, core_num=2)
    with pytest.raises(ArgumentError, match="^a_list: expected a list of numpy arrays"):
        ops.grouped_matmul(a, [b], core_num=2)


def test_inputs_are_read_in_place_without_copies():
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    assert to_numpy("a", DLPackOnly(a)).__array_interface__["data"][0] == a.__array_interface__["data"][0]
    assert to_numpy("a", a) is a
