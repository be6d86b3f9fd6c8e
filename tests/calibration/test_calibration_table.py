"""The calibration targets against CATLASS's published timings: every point whose kernel catlass_py builds within
a factor 1.25, the geometric-mean error at most 10 %, every published before -> after pair predicted in the same
direction. The published numbers are typed in here from the CATLASS documents (see test_calibration_data.py for
the files and lines), so a change to the data file cannot move the target.

The default run simulates the points that take a few seconds (examples 00 at the tuner's and the guide's small
shapes, 21 at 160x6144x2048, 12 at the 910B3 shapes); the whole table (examples 06, 21 at 20x6144x16384, 34
and 00 at 4096x4096x8000, minutes) is the slow test.
"""

from __future__ import annotations

import math

import pytest

from catlass_py.calibration import load_points, pair_checks, predict, select, summarize

PUBLISHED_US = {
    "T01": 19.38, "T02": 12.74, "T03": 72.5, "T04": 48.6, "T05": 181.4, "T06": 139.6, "T07": 238.8, "T08": 252.4,
    "T09": 36.3, "T10": 15.5, "T11": 40.6, "T12": 35.3, "T13": 261, "T14": 445, "T15": 917, "T16": 1231,
    "T17": 18.64, "T18": 23.23, "T19": 32.97, "T20": 78.52, "T21": 75.39, "T29": 33.26, "T30": 38.68,
    "X01": 47.73, "X02": 77.35, "X03": 42.66, "X04": 52.36, "X05": 53.77,
    "T22": 18.11, "T23": 20.67, "T24": 21.15, "T25": 20.01, "T26": 23.83, "T27": 34.29, "T28": 51.41,
    "Y01": 31.73, "Y02": 37.05, "Y03": 41.96, "Y04": 44.05, "Y05": 52.75,
}
"""Every published point of an example catlass_py builds (examples 00, 06, 12, 21, 34, 44, 52)."""

PAIRS = [("T01", "T02"), ("T03", "T04"), ("T05", "T06"), ("T07", "T08"), ("T09", "T10"), ("T11", "T12"),
         ("T14", "T13"), ("T16", "T15"), ("T17", "T22"), ("T18", "T23"), ("T19", "T24"), ("X01", "T25"),
         ("T20", "T26"), ("T21", "T27"), ("X02", "T28"), ("T29", "Y01"), ("T30", "Y02"), ("X03", "Y03"),
         ("X04", "Y04"), ("X05", "Y05")]
"""CATLASS's before -> after pairs: retiling and swizzle (tuner), retiling (guide), swizzle <3,1> -> <4,1>,
BasicMatmul -> SingleCoreSplitkMatmul, QuantMatmul -> QuantMultiCoreSplitkMatmulTla (example 52's table),
QuantMatmul -> QuantMatmulFullLoadATla (example 44's table)."""

KNOWN_TIES = {("T29", "Y01")}
"""The published pair the model does not order (docs/performance-model.md, residuals): example 44's gain over
example 12 at 512x4096x1024 (published -4.6 %); the model predicts it within 7 % of a tie."""

FAST = ("T01", "T02", "T09", "T10", "T11", "T12", "T17", "T18", "T19", "T20", "T21", "X01")


def _predict(ids):
    points = {p.id: p for p in select(load_points(), ids)}
    return {pid: predict(points[pid]) for pid in ids}


@pytest.fixture(scope="module")
def fast():
    return _predict(FAST)


def _within(predicted: float, published: float) -> bool:
    return 1 / 1.25 <= predicted / published <= 1.25


@pytest.mark.parametrize("pid", FAST)
def test_quick_points_are_within_a_factor_1_25(fast, pid):
    predicted = fast[pid].predicted_us
    assert _within(predicted, PUBLISHED_US[pid]), f"{pid}: predicted {predicted:.2f} us, published {PUBLISHED_US[pid]}"


def test_quick_pairs_go_the_published_way(fast):
    us = {pid: p.predicted_us for pid, p in fast.items()}
    assert us["T02"] < us["T01"]  # the tuner's best configuration beats its baseline (12.74 vs 19.38 us)
    assert us["T10"] < us["T09"]  # 16x32x1024 tiles beat 128x128x256 for m = 1 (15.5 vs 36.3 us)
    assert us["T12"] < us["T11"]  # swizzle <4,1> beats <3,1> (35.3 vs 40.6 us)
    # The K slope of one 128x256 block of 12_quant_matmul (one core streams K): published 18.64 -> 78.52 us
    # for K 1024 -> 16384, i.e. 3.90 us per 1024 of K; the model within 20 %.
    slope = (us["T20"] - us["T17"]) / 15
    assert slope == pytest.approx((78.52 - 18.64) / 15, rel=0.2)


def test_the_launch_overheads_are_in_the_predictions(fast):
    small = fast["T02"].report  # AIC-only: 00_basic_matmul 256x512x1024, 12.74 us published
    assert small.launch_overhead_cycles > 0 and small.timeline_cycles < small.cycles
    mix = fast["T17"].report  # MIX: 12_quant_matmul, whose epilogue runs on the AIVs
    assert mix.launch_overhead_cycles / mix.clock_ghz > small.launch_overhead_cycles / small.clock_ghz


@pytest.mark.slow
def test_the_whole_table_meets_the_targets():
    preds = _predict(tuple(PUBLISHED_US))
    ratios = {pid: p.predicted_us / PUBLISHED_US[pid] for pid, p in preds.items()}
    outside = {pid: round(r, 3) for pid, r in ratios.items() if not 1 / 1.25 <= r <= 1.25}
    assert not outside
    geomean = math.exp(sum(abs(math.log(r)) for r in ratios.values()) / len(ratios)) - 1
    assert geomean <= 0.10
    for before, after in PAIRS:
        published = PUBLISHED_US[after] / PUBLISHED_US[before] - 1
        predicted = preds[after].predicted_us / preds[before].predicted_us - 1
        if (before, after) in KNOWN_TIES:
            assert abs(predicted) < 0.07, (before, after, predicted)  # a documented miss: the model sees a tie
            continue
        assert (published > 0) == (predicted > 0), (before, after)
    # the package's own summary and pair checks agree with the arithmetic above
    summary = summarize(preds.values())
    assert summary.meets_targets and summary.geomean_error == pytest.approx(geomean, rel=1e-9)
    checks = pair_checks(preds.values())
    assert len(checks) == len(PAIRS)
    assert {(c.before, c.after) for c in checks if not c.agrees} <= KNOWN_TIES
    held_out = [p for p in preds.values() if p.point.role == "held-out"]
    assert len(held_out) >= 25 and all(_within(p.predicted_us, PUBLISHED_US[p.point.id]) for p in held_out)
