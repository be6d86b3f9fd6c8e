"""Predicting the published points: one simulated launch per point timed by the cost model, the ratio to the
published time, the summary the calibration targets are stated in, the published before -> after pairs, and
recordings of a point's event stream that the cost model can replay under other parameters (the fit).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from catlass_py.analysis.cost import CostModel, CostReport
from catlass_py.arch.events import LaunchInfo, Observer
from catlass_py.calibration.cases import launch_point
from catlass_py.calibration.points import PublishedPoint

TOLERANCE = 1.25
"""Every modelled point within this factor of its published time."""
GEOMEAN_TARGET = 0.10
"""Geometric-mean error target: exp(mean |ln(predicted / published)|) - 1 at most 10 %."""

PAIRS = (
    ("T01", "T02", "retiling and swizzle <3,0> -> <3,1> (tuner baseline -> best)"),
    ("T03", "T04", "retiling 128x256 -> 256x128 (load balance)"),
    ("T05", "T06", "retiling 128x256x256 -> 32x320x128, B zN"),
    ("T07", "T08", "retiling 128x256x256 -> 32x320x128, B row-major (slower: rows of 640 bytes)"),
    ("T09", "T10", "retiling 128x128x256 -> 16x32x1024, fp32, m = 1"),
    ("T11", "T12", "swizzle <3,1> -> <4,1>"),
    ("T14", "T13", "kernel variant: BasicMatmul -> SingleCoreSplitkMatmul, 2048x4096x4000"),
    ("T16", "T15", "kernel variant: BasicMatmul -> SingleCoreSplitkMatmul, 4096x4096x8000"),
    *((b, a, f"kernel variant: QuantMatmul -> QuantMultiCoreSplitkMatmulTla (split K), {shape}") for b, a, shape in (
        ("T17", "T22", "128x256x1024"), ("T18", "T23", "128x256x2048"), ("T19", "T24", "128x256x4096"),
        ("X01", "T25", "128x256x8192"), ("T20", "T26", "128x256x16384"), ("T21", "T27", "256x512x16384"),
        ("X02", "T28", "256x1024x16384"))),
    *((b, a, f"kernel variant: QuantMatmul -> QuantMatmulFullLoadATla (A's panel kept in L1), {shape}")
      for b, a, shape in (("T29", "Y01", "512x4096x1024"), ("T30", "Y02", "128x16384x1024"),
                          ("X03", "Y03", "1024x4096x1024"), ("X04", "Y04", "512x8192x1024"),
                          ("X05", "Y05", "128x16384x2048"))),
)
"""CATLASS's published before -> after pairs: (before, after, what changes)."""


@dataclass
class Prediction:
    """A point, the cost model's report on its launch(es) and how long the simulation took."""

    point: PublishedPoint
    report: CostReport
    seconds: float = 0.0

    @property
    def predicted_us(self) -> float:
        return self.report.microseconds

    @property
    def ratio(self) -> float:
        """Predicted / published."""
        return self.predicted_us / self.point.published_us

    @property
    def error(self) -> float:
        """|ln(predicted / published)|."""
        return abs(math.log(self.ratio))

    @property
    def within(self) -> bool:
        return 1 / TOLERANCE <= self.ratio <= TOLERANCE


class EventRecorder(Observer):
    """Keeps every event of the launches it observes (with a :class:`LaunchInfo` stripped of the kernel and its
    parameters, so that the GM buffers are not kept alive), for :func:`replay`."""

    def __init__(self):
        self.launches: list[tuple[LaunchInfo, list]] = []

    def on_launch_start(self, info: LaunchInfo) -> None:
        self.launches.append((LaunchInfo(info.arch, info.block_dim, info.cores, None, None), []))

    def on_event(self, event) -> None:
        self.launches[-1][1].append(event)


def replay(launches, arch=None) -> CostReport:
    """The cost model's report on recorded launches (:class:`EventRecorder`), timed with ``arch``'s cost
    parameters (default: the recorded launch's)."""
    model = CostModel(arch=arch)
    for info, events in launches:
        model.on_launch_start(info)
        for event in events:
            model.on_event(event)
        model.on_launch_end(info, None)
    return model.report


def predict(point: PublishedPoint, *, arch=None, options=None, recorder: EventRecorder | None = None) -> Prediction:
    """Simulate ``point`` (on its device variant, or ``arch``) and time it with the cost model; ``recorder``
    also keeps the event stream."""
    model = CostModel()
    observers = (model,) if recorder is None else (model, recorder)
    start = time.perf_counter()
    launch_point(point, observers=observers, options=options, arch=arch)
    return Prediction(point, model.report, time.perf_counter() - start)


@dataclass
class Summary:
    """The calibration's numbers over a set of predictions: count, geometric-mean error, worst factor, the
    points outside the tolerance, and the same for the fitted and held-out points."""

    count: int
    geomean_error: float
    worst_factor: float
    outside: list[str] = field(default_factory=list)
    by_role: dict[str, tuple[int, float, float]] = field(default_factory=dict)

    @property
    def meets_targets(self) -> bool:
        return not self.outside and self.geomean_error <= GEOMEAN_TARGET


def _stats(preds) -> tuple[int, float, float]:
    if not preds:
        return 0, 0.0, 1.0
    mean = sum(p.error for p in preds) / len(preds)
    return len(preds), math.exp(mean) - 1, max(max(p.ratio, 1 / p.ratio) for p in preds)


def summarize(predictions) -> Summary:
    """The :class:`Summary` of ``predictions``; the geometric-mean error is exp(mean |ln ratio|) - 1."""
    predictions = list(predictions)
    count, geomean, worst = _stats(predictions)
    roles = {}
    for role in ("fit", "held-out"):
        members = [p for p in predictions if p.point.role == role]
        if members:
            roles[role] = _stats(members)
    return Summary(count, geomean, worst, [p.point.id for p in predictions if not p.within], roles)


@dataclass(frozen=True)
class PairCheck:
    """One published before -> after pair: the published and predicted relative change and whether their
    directions agree."""

    before: str
    after: str
    what: str
    published_change: float
    predicted_change: float

    @property
    def agrees(self) -> bool:
        return (self.published_change > 0) == (self.predicted_change > 0)


def pair_checks(predictions) -> list[PairCheck]:
    """The :data:`PAIRS` whose two points are both among ``predictions``."""
    by_id = {p.point.id: p for p in predictions}
    out = []
    for before, after, what in PAIRS:
        if before in by_id and after in by_id:
            b, a = by_id[before], by_id[after]
            out.append(PairCheck(before, after, what, a.point.published_us / b.point.published_us - 1,
                                 a.predicted_us / b.predicted_us - 1))
    return out


__all__ = [
    "GEOMEAN_TARGET",
    "PAIRS",
    "TOLERANCE",
    "EventRecorder",
    "PairCheck",
    "Prediction",
    "Summary",
    "pair_checks",
    "predict",
    "replay",
    "summarize",
]
