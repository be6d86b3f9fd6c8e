"""CATLASS compare rules (golden::CompareData & co.) and ComputeErrorMetrics."""

import math

import ml_dtypes
import numpy as np
import pytest

from catlass_py.errors import ArgumentError
from catlass_py.numerics import (
    CompareResult,
    compare_data,
    compare_data_bfloat16,
    compare_exact,
    error_metrics,
    rtol_for,
)


def test_rtol_threshold_on_k():
    assert rtol_for(0) == rtol_for(2047) == 1 / 256
    assert rtol_for(2048) == rtol_for(10**6) == 1 / 128
    with pytest.raises(ArgumentError):
        rtol_for(-1)
    with pytest.raises(ArgumentError):
        compare_data([1.0], [1.0], 2.5)


def test_rule_boundaries():
    g = np.array([1000.0, 0.5, -0.25, 1000.0, 0.5])
    tol_big = 1000.0 / 256
    a = np.array([1000.0 + tol_big, 0.5 + 1 / 256, -0.25 - 1 / 256, 1000.0 + tol_big * 1.0000001, 0.5 - 1 / 255])
    r = compare_data(a, g, k=16)
    assert r.rtol == 1 / 256 and r.checked == 5
    assert r.error_count == 2 and not r.passed and not r
    assert r.worst_index == (4,)
    assert str(r) == "Compare failed. Error count: 2"
    r = compare_data(a, g, k=4096)  # rtol 1/128: all pass
    assert r.passed and bool(r) and str(r) == "Compare success." and r.error_count == 0


def test_metrics_and_worst_index_in_original_shape():
    g = np.ones((3, 4), np.float32)
    a = g.copy()
    a[2, 1] = 1.5
    a[0, 3] = 1.01
    r = compare_data(a, g, k=128)
    assert r.error_count == 2 and r.worst_index == (2, 1)
    assert r.worst_actual == 1.5 and r.worst_golden == 1.0
    assert r.max_abs_error == 0.5 and r.max_rel_error == 0.5
    g2 = np.full(4, 100.0)
    a2 = g2 + np.array([0.0, 1.0, -2.0, 0.5])
    r2 = compare_data(a2, g2, 1)
    assert r2.max_abs_error == 2.0 and r2.max_rel_error == 0.02 and r2.worst_index == (2,)


def test_valid_counts_only_leading_elements():
    g = np.zeros(10)
    a = np.zeros(10)
    a[7:] = 5.0
    assert compare_data(a, g, 8, valid=7).passed
    r = compare_data(a, g, 8, valid=8)
    assert r.error_count == 1 and r.checked == 8
    r0 = compare_data(a, g, 8, valid=0)
    assert r0.passed and r0.checked == 0 and r0.worst_index is None
    for bad in (-1, 11, 2.0, True):
        with pytest.raises(ArgumentError):
            compare_data(a, g, 8, valid=bad)
    with pytest.raises(ArgumentError):
        compare_data(np.zeros(3), np.zeros(4), 8)


def test_nan_and_inf_handling():
    g = np.array([1.0, np.nan, np.inf, -np.inf, 2.0, np.inf])
    a = np.array([np.nan, np.nan, np.inf, -np.inf, np.inf, -np.inf])
    r = compare_data(a, g, 1)
    # NaN vs finite, NaN vs NaN, inf vs finite and -inf vs inf are errors; equal infinities are not
    assert r.error_count == 4
    assert r.worst_index == (0,) and math.isnan(r.max_abs_error)


def test_bf16_actual_against_float_golden_as_in_example_10():
    rng = np.random.default_rng(0)
    golden = rng.normal(0, 100, 4096).astype(np.float32)
    device = golden.astype(ml_dtypes.bfloat16)  # bf16 RNE of the golden: relative error < 2**-8
    r = compare_data(device, golden, k=2048)
    assert r.passed and r.max_rel_error < 2.0**-8
    assert compare_data(device, golden, k=16).passed


def test_float32_compute_reproduces_cpp_float_arithmetic():
    g = np.array([1.0 - 2.0**-40])  # a double golden; C++ with ElementCompare=float rounds it to 1.0f
    a = np.array([1.0 + 2.0**-8], np.float32)
    assert not compare_data(a, g, 1).passed  # exact: diff = 2**-8 + 2**-40 > 1/256
    assert compare_data(a, g, 1, compute_dtype=np.float32).passed
    with pytest.raises(ArgumentError):
        compare_data(a, g, 1, compute_dtype=np.float16)


def test_compare_data_bfloat16_rule():
    g = np.array([0.001, 0.001, 100.0, 100.0])
    a = np.array([0.001 + 2.0**-15, 0.001 + 2.0**-14, 100.0 + 0.78, 100.0 + 0.79])
    r = compare_data_bfloat16(a, g, k=10)  # rtol 1/128, floor 1/256: tol = 2**-15 for small, 0.78125 for 100
    assert r.rtol == 1 / 128 and r.error_count == 2
    assert compare_data_bfloat16(a, g, k=4096).passed  # rtol 1/64: tol = 2**-14 (small), 1.5625 (100)
    assert compare_data_bfloat16([0.001 + 2.0**-13], [0.001], k=4096).error_count == 1


def test_compare_exact():
    a = np.array([1, -2, 3], np.int32)
    assert compare_exact(a, a.copy()).passed
    r = compare_exact(a, np.array([1, -2, 4], np.int64))
    assert r.error_count == 1 and r.worst_index == (2,) and r.rtol == 0.0 and r.max_abs_error == 1.0
    assert str(r) == "Compare failed. Error count: 1"
    big = np.array([2**64 - 1, 2**63], np.uint64)
    assert compare_exact(big, np.array([-1, -(2**63)], np.int64)).error_count == 2  # no float promotion
    assert compare_exact(np.array([2**53 + 1], np.int64), np.array([2**53], np.int64)).error_count == 1
    f = np.array([0.0, np.nan, 1.5], np.float32)
    assert compare_exact(f, f.copy()).passed  # bit patterns: NaN equals itself
    assert compare_exact(f, np.array([-0.0, np.nan, 1.5], np.float32)).error_count == 1
    b = np.array([1.5, 2.0], ml_dtypes.bfloat16)
    assert compare_exact(b, b.copy()).passed
    assert compare_exact(b, np.array([1.5, 2.0], np.float32)).passed  # different dtypes: values
    assert compare_exact(np.zeros((2, 3)), np.ones((2, 3)), valid=3).error_count == 3


def _cpp_metrics(x, golden):
    rel = np.abs(x - golden) / (np.abs(golden) + 1e-7)
    diff = np.abs(x - golden)
    return rel.max(), rel.mean(), math.sqrt((diff * diff).mean())


def test_error_metrics_matches_the_cpp_formulas():
    rng = np.random.default_rng(4)
    golden = rng.normal(size=1000)
    cpu = golden.astype(np.float32).astype(np.float64)
    dev = golden.astype(np.float16).astype(np.float64)
    m = error_metrics(dev, golden, cpu)
    mare, mere, rmse = _cpp_metrics(dev, golden)
    rm, re_, rr = _cpp_metrics(cpu, golden)
    assert m.mare == pytest.approx(mare, rel=1e-12) and m.mere == pytest.approx(mere, rel=1e-12)
    assert m.rmse == pytest.approx(rmse, rel=1e-12)
    assert m.ref_mare == pytest.approx(rm, rel=1e-12) and m.ref_rmse == pytest.approx(rr, rel=1e-12)
    assert m.mare_ratio == pytest.approx(mare / rm) and m.mere_ratio == pytest.approx(mere / re_)
    assert m.passed is False  # fp16 vs fp32 reference: ratios ~ 2**13
    assert "MARE ratio" in str(m) and "(threshold: 5)" in str(m)
    same = error_metrics(cpu, golden, cpu)
    assert same.passed and same.mare_ratio == 1.0
    loose = error_metrics(dev, golden, cpu, mare_threshold=1e9, mere_threshold=1e9, rmse_threshold=1e9)
    assert loose.passed and loose.thresholds == (1e9, 1e9, 1e9)


def test_error_metrics_edge_cases():
    only = error_metrics([1.0, 2.0], [1.0, 2.5])
    assert only.passed is None and only.mare_ratio is None and only.rmse == pytest.approx(math.sqrt(0.125))
    assert str(only).startswith("MARE:")
    exact_ref = error_metrics([1.0, 2.0], [1.0, 2.5], [1.0, 2.5])  # reference metrics 0 -> ratios 0 -> pass
    assert exact_ref.passed and exact_ref.mare_ratio == 0.0
    empty = error_metrics([], [], [])
    assert empty.passed is False and empty.mare_ratio == 0.0
    nan = error_metrics([np.nan, 1.0], [1.0, 1.0], [1.1, 1.0])
    assert nan.mare == 0.0 and math.isnan(nan.mere) and nan.passed is False  # std::max ignores NaN
    with pytest.raises(ArgumentError):
        error_metrics([1.0], [1.0, 2.0])
    with pytest.raises(ArgumentError):
        error_metrics([1.0], [1.0], [1.0, 2.0])


def test_compare_result_is_frozen():
    r = compare_data([1.0], [1.0], 1)
    assert isinstance(r, CompareResult)
    with pytest.raises(AttributeError):
        r.passed = False


def test_a_compare_in_chunks_gives_what_one_piece_gives(monkeypatch):
    import catlass_py.numerics.compare as compare

    rng = np.random.default_rng(3)
    g = rng.standard_normal(1000).astype(np.float32)
    a = (g * (1 + rng.choice([0, 0, 0, 1e-2, -3e-3], 1000))).astype(np.float32)
    a[[40, 700]] = g[[40, 700]] + 5  # the same largest error twice, in different chunks: the first is the worst
    g[[40, 700]] = 0
    ints = rng.integers(-9, 9, 1000).astype(np.int32)
    cases = [(compare_data, (a, g, 4096)), (compare_data_bfloat16, (a.astype(ml_dtypes.bfloat16), g, 64)),
             (compare_exact, (ints, ints + (rng.random(1000) < 0.01)))]
    whole = [fn(*args) for fn, args in cases]
    monkeypatch.setattr(compare, "COMPARE_CHUNK", 7)
    assert [fn(*args) for fn, args in cases] == whole
    assert whole[0].worst_index == (40,) and whole[0].error_count > 2
    nan = a.copy()
    nan[900] = np.nan  # a NaN in a late chunk ranks before the larger errors of earlier ones
    r = compare_data(nan, g, 4096)
    assert r.worst_index == (900,) and math.isnan(r.max_abs_error) and r.error_count == whole[0].error_count + 1
    assert compare.compare_peak_bytes(3) == 3 * compare.COMPARE_BYTES_PER_ELEMENT
