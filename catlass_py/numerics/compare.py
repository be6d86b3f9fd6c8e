"""Golden-compare rules and error metrics of the CATLASS examples (``examples/common/golden/compare_data.hpp``).

* :func:`compare_data` -- ``golden::CompareData`` (3- and 4-argument overloads): rtol = 1/256 for
  ``k < 2048`` else 1/128; element ``i`` fails when ``|actual - golden| > rtol * max(1, |golden|)``.
* :func:`compare_data_bfloat16` -- ``golden::CompareDataBfloat16``: rtol = 1/128 (``k < 2048``) or 1/64,
  floor ``1/256`` instead of 1: ``|actual - golden| > rtol * max(1/256, |golden|)``.
* :func:`compare_exact` -- the ``int32_t`` specialisation of ``CompareData`` (exact equality), extended
  to any dtype (floats compare bit for bit when both sides have the same dtype).
* :func:`error_metrics` -- ``golden::ComputeErrorMetrics``: MARE / MERE / RMSE of the device result and
  of a same-precision CPU reference, both against a high-precision golden, and the ratio test
  (defaults 5 / 1.5 / 1.5).

Deliberate differences from the C++ (documented, tested):

* CATLASS evaluates the rule in the golden's element type (``float`` for float goldens). We default to
  float64, where ``|a - g|`` is exact; pass ``compute_dtype=np.float32`` to reproduce the C++ bit for bit.
* In C++ a NaN makes ``diff > tol`` false, so NaN results silently *pass*. Here an element passes only if
  ``a == g`` or ``|a - g| <= tol``: any NaN (in actual or golden) is an error, equal infinities are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catlass_py.errors import ArgumentError

COMPUTE_NUM_THRESHOLD = 2048


@dataclass(frozen=True)
class CompareResult:
    """Outcome of a CATLASS golden compare (``golden::CompareData`` returns the error indices; this keeps
    their count plus diagnostics).

    ``max_rel_error`` is ``max |a - g| / max(floor, |g|)`` (``floor`` = 1, or 1/256 for the bf16 rule, 0 ->
    plain ``|g|`` for :func:`compare_exact`): the quantity the rule compares with ``rtol``. ``worst_index`` is
    the index (into ``actual``'s shape) of the element with the largest such error, NaN-involving elements
    ranking first; None when nothing was checked. ``str()`` is exactly what the CATLASS examples print.
    """

    passed: bool
    error_count: int
    checked: int
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple | None
    worst_actual: float | None
    worst_golden: float | None
    rtol: float

    def __str__(self) -> str:
        if self.passed:
            return "Compare success."
        return f"Compare failed. Error count: {self.error_count}"

    def __bool__(self) -> bool:
        return self.passed


def _flat_pair(actual, golden, valid) -> tuple[np.ndarray, np.ndarray, tuple, int]:
    a = np.asarray(actual)
    g = np.asarray(golden)
    if a.size != g.size:
        raise ArgumentError(f"golden: expected {a.size} elements (as many as actual), got {g.size}")
    n = a.size
    if valid is None:
        valid = n
    if isinstance(valid, bool) or not isinstance(valid, (int, np.integer)) or not 0 <= valid <= n:
        raise ArgumentError(f"valid: expected an integer in [0, {n}], got {valid!r}")
    return a.reshape(-1)[: int(valid)], g.reshape(-1)[: int(valid)], a.shape, int(valid)


def _as_float(x: np.ndarray, dtype) -> np.ndarray:
    if x.dtype.kind in "iu" and x.dtype.itemsize == 8 and np.dtype(dtype) == np.float64:
        return x.astype(np.float64)  # CATLASS static_cast<double>; values above 2**53 round, as in C++
    return x.astype(dtype)


COMPARE_CHUNK = 1 << 20
"""Elements a compare evaluates at a time: its temporaries (about :data:`COMPARE_BYTES_PER_ELEMENT` bytes per
element) stay bounded whatever the output's size, and the result is the same as in one piece."""

COMPARE_BYTES_PER_ELEMENT = 80
"""Bytes per element a chunk of a compare holds at its peak (both sides in float64, the difference, the
tolerance, the relative error and their masks)."""


def compare_peak_bytes(elements: int) -> int:
    """Bytes a compare of ``elements`` output elements allocates at most (one chunk, :data:`COMPARE_CHUNK`)."""
    return COMPARE_BYTES_PER_ELEMENT * min(int(elements), COMPARE_CHUNK)


def _rule_compare(actual, golden, rtol: float, floor: float, valid, compute_dtype) -> CompareResult:
    a_raw, g_raw, shape, n = _flat_pair(actual, golden, valid)
    ct = np.dtype(compute_dtype)
    if ct not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ArgumentError(f"compute_dtype: expected float32 or float64, got {ct}")

    def chunk(lo: int, hi: int):
        a = _as_float(a_raw[lo:hi], ct)
        g = _as_float(g_raw[lo:hi], ct)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - g)
            tol = ct.type(rtol) * np.maximum(ct.type(floor), np.abs(g))
            ok = (a == g) | ((diff <= tol) & np.isfinite(diff))  # inf golden only matches itself
            diff = np.where(a == g, ct.type(0), diff)
            rel = diff.astype(np.float64) / np.maximum(floor, np.abs(g.astype(np.float64)))
        return ok, diff, rel, a, g

    return _summarise(chunk, n, shape, rtol)


def _summarise(chunk, n: int, shape, rtol) -> CompareResult:
    """The CompareResult of ``n`` elements whose checks ``chunk(lo, hi)`` computes a piece at a time, as ``(ok,
    |a - g|, relative error, a, g)`` of elements ``lo .. hi - 1``: the errors counted, the worst element the first
    one whose relative error is NaN, else the first of the largest relative error, as over the whole at once."""
    if n == 0:
        return CompareResult(True, 0, 0, 0.0, 0.0, None, None, None, float(rtol))
    errors = 0
    max_abs = max_rel = -np.inf
    worst = nan_at = None
    values = (None, None)
    for lo in range(0, n, COMPARE_CHUNK):
        ok, diff, rel, a, g = chunk(lo, min(n, lo + COMPARE_CHUNK))
        errors += int(ok.size - np.count_nonzero(ok))
        if nan_at is not None:
            continue
        bad = np.isnan(rel)
        if bad.any():
            i = int(np.argmax(bad))
            nan_at, values = lo + i, (float(a[i]), float(g[i]))
            continue
        i = int(np.argmax(rel))
        if rel[i] > max_rel:
            max_rel, worst, values = float(rel[i]), lo + i, (float(a[i]), float(g[i]))
        max_abs = max(max_abs, float(np.max(diff)))
    if nan_at is not None:
        worst, max_abs, max_rel = nan_at, float("nan"), float("nan")
    index = tuple(int(i) for i in np.unravel_index(worst, shape)) if shape else ()
    return CompareResult(
        passed=errors == 0,
        error_count=errors,
        checked=n,
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        worst_index=index,
        worst_actual=values[0],
        worst_golden=values[1],
        rtol=float(rtol),
    )


def isclose_summary(actual, want, rtol: float, atol: float) -> tuple[int, float, bool]:
    """``numpy.isclose(actual, want, rtol, atol, equal_nan=True)`` over both as float32, a chunk at a time (the
    compare of an example whose reference uses that rule): the elements not close, the largest ``|a - w|``
    ignoring NaN (0.0 for no elements, NaN when every difference is NaN) and whether the two are equal (NaN equal
    to NaN)."""
    a_all, w_all, _shape, n = _flat_pair(actual, want, None)
    errors, largest, equal, seen = 0, -np.inf, True, False
    for lo in range(0, n, COMPARE_CHUNK):
        a = a_all[lo:lo + COMPARE_CHUNK].astype(np.float32)
        w = w_all[lo:lo + COMPARE_CHUNK].astype(np.float32)
        errors += int(a.size - np.count_nonzero(np.isclose(a, w, rtol=rtol, atol=atol, equal_nan=True)))
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - w)
        finite = diff[~np.isnan(diff)]
        if finite.size:
            seen = True
            largest = max(largest, float(finite.max()))
        equal = equal and bool(np.array_equal(a, w, equal_nan=True))
    if n == 0:
        return 0, 0.0, True
    return errors, largest if seen else float("nan"), equal


def rtol_for(k: int) -> float:
    """CATLASS ``CompareData`` tolerance for a reduction length ``k`` (``computeNum``): 2**-8 below 2048, else 2**-7."""
    _check_k(k)
    return 1.0 / 256 if k < COMPUTE_NUM_THRESHOLD else 1.0 / 128


def _check_k(k) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ArgumentError(f"k: expected a non-negative integer (computeNum), got {k!r}")


def compare_data(actual, golden, k: int, valid: int | None = None, *, compute_dtype=np.float64) -> CompareResult:
    """CATLASS ``golden::CompareData(result, expect, computeNum=k[, validNum=valid])``.

    Checks the first ``valid`` elements (flattened, default all) of ``actual`` against ``golden`` (same
    element count, any shapes). An element is an error when ``|a - g| > rtol * max(1, |g|)`` with ``rtol``
    from :func:`rtol_for`; NaN anywhere is an error, equal infinities are not (see the module docstring).
    ``compute_dtype=np.float32`` evaluates the rule in fp32 like the C++ (default float64).
    """
    return _rule_compare(actual, golden, rtol_for(k), 1.0, valid, compute_dtype)


def compare_data_bfloat16(
    actual, golden, k: int, valid: int | None = None, *, compute_dtype=np.float64
) -> CompareResult:
    """CATLASS ``golden::CompareDataBfloat16``: ``|a - g| > rtol * max(1/256, |g|)`` with rtol 2**-7
    (``k < 2048``) or 2**-6. Same NaN/inf handling and options as :func:`compare_data`."""
    _check_k(k)
    rtol = 1.0 / 128 if k < COMPUTE_NUM_THRESHOLD else 1.0 / 64
    return _rule_compare(actual, golden, rtol, 1.0 / 256, valid, compute_dtype)


def compare_exact(actual, golden, valid: int | None = None) -> CompareResult:
    """Exact comparison: CATLASS ``CompareData<int32_t>`` (an element fails unless ``a == g``).

    Integers compare exactly whatever their widths and signedness. Floats of the same dtype compare their
    bit patterns (so NaN == NaN with the same payload, and -0.0 != +0.0); floats of different dtypes compare
    values, NaN equal to NaN. ``rtol`` of the result is 0; ``max_rel_error`` uses ``|a - g| / |g|``.
    """
    a_all, g_all, shape, n = _flat_pair(actual, golden, valid)

    def chunk(lo: int, hi: int):
        a, g = a_all[lo:hi], g_all[lo:hi]
        if a.dtype == g.dtype and a.dtype.kind not in "iub":
            width = a.dtype.itemsize
            ok = a.view(f"u{width}") == g.view(f"u{width}")
        elif a.dtype.kind in "iub" and g.dtype.kind in "iub":
            ok = _int_equal(a, g)
        else:
            af = a.astype(np.float64)
            gf = g.astype(np.float64)
            ok = (af == gf) | (np.isnan(af) & np.isnan(gf))
        af = a.astype(np.float64)
        gf = g.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            diff = np.where(ok, 0.0, np.abs(af - gf))
            diff = np.where(~ok & np.isnan(diff), np.nan, diff)
            rel = np.where(ok, 0.0, np.where(gf == 0, np.inf, diff / np.abs(gf)))
            rel = np.where(np.isnan(diff), np.nan, rel)
        return ok, diff, rel, af, gf

    return _summarise(chunk, n, shape, 0.0)


def _int_equal(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Exact equality of two integer arrays of any widths/signedness (no float promotion)."""
    def split(x):
        if x.dtype.kind == "u" or x.dtype.kind == "b":
            return np.zeros(x.shape, dtype=bool), x.astype(np.uint64)
        neg = x < 0
        u = x.astype(np.int64).astype(np.uint64)
        return neg, u

    na, ua = split(a)
    ng, ug = split(g)
    return (na == ng) & (ua == ug)


@dataclass(frozen=True)
class ErrorMetrics:
    """Result of CATLASS ``golden::ComputeErrorMetrics`` plus the raw metrics.

    ``mare`` / ``mere`` / ``rmse``: max and mean of ``|a - golden| / (|golden| + 1e-7)`` and the root mean
    square of ``|a - golden|`` for the device result; ``ref_*`` the same for the CPU reference (None when no
    reference was given). ``*_ratio`` = device / reference (0 when the reference metric is not > 0, as in
    C++); ``passed`` = all ratios <= thresholds (None without a reference). C++ returns ``passed=False``
    and zero ratios for empty inputs; so do we.
    """

    mare: float
    mere: float
    rmse: float
    ref_mare: float | None = None
    ref_mere: float | None = None
    ref_rmse: float | None = None
    mare_ratio: float | None = None
    mere_ratio: float | None = None
    rmse_ratio: float | None = None
    passed: bool | None = None
    thresholds: tuple[float, float, float] = (5.0, 1.5, 1.5)

    def __str__(self) -> str:
        if self.passed is None:
            return f"MARE: {self.mare:g}, MERE: {self.mere:g}, RMSE: {self.rmse:g}"
        t = self.thresholds
        return (
            f"MARE ratio: {self.mare_ratio:g} (threshold: {t[0]:g}), MERE ratio: {self.mere_ratio:g} "
            f"(threshold: {t[1]:g}), RMSE ratio: {self.rmse_ratio:g} (threshold: {t[2]:g})"
        )


_EPSILON = 1e-7


def _metrics(x: np.ndarray, golden: np.ndarray) -> tuple[float, float, float]:
    """C++ order: sequential float64 sums; max ignores NaN like ``std::max(acc, nan)``."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(x - golden)
        rel = diff / (np.abs(golden) + _EPSILON)
        finite_rel = rel[~np.isnan(rel)]
        mare = float(finite_rel.max()) if finite_rel.size else 0.0
        n = x.size
        mere = float(np.cumsum(rel)[-1] / n)
        rmse = float(np.sqrt(np.cumsum(diff * diff)[-1] / n))
    return mare, mere, rmse


def error_metrics(
    actual,
    golden,
    reference=None,
    *,
    mare_threshold: float = 5.0,
    mere_threshold: float = 1.5,
    rmse_threshold: float = 1.5,
) -> ErrorMetrics:
    """CATLASS ``golden::ComputeErrorMetrics(hostC=actual, hostCpu=reference, hostGolden=golden, ...)``.

    All three arrays are read as float64 and flattened. Without ``reference`` only the device metrics are
    returned (``passed`` is None). With it, ``passed`` applies the ratio test; CATLASS's examples print
    "Compare success." when either :func:`compare_data` of actual vs reference passes or this test passes.
    """
    a = np.asarray(actual).astype(np.float64).reshape(-1)
    g = np.asarray(golden).astype(np.float64).reshape(-1)
    thresholds = (float(mare_threshold), float(mere_threshold), float(rmse_threshold))
    if g.size != a.size:
        raise ArgumentError(f"golden: expected {a.size} elements (as many as actual), got {g.size}")
    if reference is not None:
        r = np.asarray(reference).astype(np.float64).reshape(-1)
        if r.size != a.size:
            raise ArgumentError(f"reference: expected {a.size} elements (as many as actual), got {r.size}")
    if a.size == 0:
        if reference is None:
            return ErrorMetrics(0.0, 0.0, 0.0, thresholds=thresholds)
        return ErrorMetrics(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False, thresholds)
    mare, mere, rmse = _metrics(a, g)
    if reference is None:
        return ErrorMetrics(mare, mere, rmse, thresholds=thresholds)
    rm, re_, rr = _metrics(r, g)

    def ratio(x, y):
        return x / y if y > 0 else 0.0

    ratios = (ratio(mare, rm), ratio(mere, re_), ratio(rmse, rr))
    passed = all(q <= t for q, t in zip(ratios, thresholds))
    return ErrorMetrics(mare, mere, rmse, rm, re_, rr, *ratios, passed=passed, thresholds=thresholds)
