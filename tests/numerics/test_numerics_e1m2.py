"""FP4 E1M2: every code, ordering, zeros, rounding modes, saturation."""

import numpy as np
import pytest

from catlass_py.errors import ArgumentError
from catlass_py.numerics import RoundMode, cast, e1m2_decode, e1m2_encode, e1m2_values
from catlass_py.numerics.e1m2 import E1M2_MAX, E1M2_MIN_NORMAL, E1M2_MIN_SUBNORMAL

R = RoundMode
ALL = np.arange(16, dtype=np.uint8)
# Ascend C Fp4e1m2ToBf16 table (bf16 bit patterns), asc-devkit kernel_type_conversion_utils.h
ASCEND_BF16 = [0x0000, 0x3E80, 0x3F00, 0x3F40, 0x3F80, 0x3FA0, 0x3FC0, 0x3FE0,
               0x8000, 0xBE80, 0xBF00, 0xBF40, 0xBF80, 0xBFA0, 0xBFC0, 0xBFE0]


def test_every_code_matches_the_ascend_table():
    want = (np.array(ASCEND_BF16, dtype=np.uint32) << 16).view(np.float32)
    got = e1m2_decode(ALL)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # includes -0.0 for code 8
    np.testing.assert_array_equal(e1m2_values(), want.astype(np.float64))
    assert e1m2_decode(ALL, np.float64).dtype == np.float64


def test_extremes_and_ordering():
    v = e1m2_values()
    pos = v[(v > 0)]
    assert pos.max() == E1M2_MAX == 1.75 and pos.min() == E1M2_MIN_SUBNORMAL == 0.25
    assert E1M2_MIN_NORMAL == 1.0 == v[0b0100]
    assert v[0b0011] == 0.75  # largest subnormal
    assert not np.isnan(v).any() and not np.isinf(v).any()
    codes = [c for c in range(16) if c != 8]  # one zero for the strict ordering
    vals = v[codes]
    assert np.all(np.diff(np.sort(vals)) == 0.25)  # a uniform grid of step 1/4


@pytest.mark.parametrize("mode", [R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC, R.ODD, R.NONE])
def test_round_trip_every_code(mode):
    np.testing.assert_array_equal(e1m2_encode(e1m2_decode(ALL), mode), ALL)  # -0.0 -> 0x8, +0.0 -> 0x0


def test_rounding_examples():
    x = np.array([0.125, 0.375, 0.625, 1.125, -0.125, -0.375, 0.3, -0.1])
    assert e1m2_encode(x, R.RINT).tolist() == [0, 2, 2, 4, 8, 10, 1, 8]
    assert e1m2_encode(x, R.ROUND).tolist() == [1, 2, 3, 5, 9, 10, 1, 8]
    assert e1m2_encode(x, R.FLOOR).tolist() == [0, 1, 2, 4, 9, 10, 1, 9]
    assert e1m2_encode(x, R.CEIL).tolist() == [1, 2, 3, 5, 8, 9, 2, 8]
    assert e1m2_encode(x, R.TRUNC).tolist() == [0, 1, 2, 4, 8, 9, 1, 8]
    assert e1m2_encode(x, R.ODD).tolist() == [1, 1, 3, 5, 9, 9, 1, 9]


def test_saturation_and_specials():
    x = np.array([1.75, 1.8, 1.875, 1.9, 100.0, -100.0, np.inf, -np.inf, np.nan])
    want = [7, 7, 7, 7, 7, 15, 7, 15, 0]
    assert e1m2_encode(x).tolist() == want
    assert e1m2_encode(x, saturate=False).tolist() == want  # fp4 always saturates (no inf/NaN codes)
    assert e1m2_encode(x, R.CEIL).tolist() == want
    assert cast(x, "e1m2").tolist() == want
    assert cast(x.astype(np.float32), "fp4_e1m2", saturate=True).tolist() == want


def test_input_types_and_errors():
    assert e1m2_encode(np.array([1, -1, 2], np.int32)).tolist() == [4, 12, 7]
    assert e1m2_encode(np.array([0.5], np.float16)).tolist() == [2]
    x = np.array([0.3, 0.6], np.float32)
    x.setflags(write=False)
    e1m2_encode(x)
    with pytest.raises(ArgumentError):
        e1m2_decode(np.array([16]))
    with pytest.raises(ArgumentError):
        e1m2_decode(np.array([0.5]))
    with pytest.raises(ArgumentError, match="HYBRID"):
        e1m2_encode(np.array([0.5]), R.HYBRID)
