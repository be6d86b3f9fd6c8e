"""Calibration of the cost model (:class:`~catlass_py.analysis.CostModel`) against the kernel timings CATLASS
publishes in its repository.

:func:`load_points` reads the published timings (``data/catlass_published_timings.csv``: each with its CATLASS
source file and lines, the set-up read from there and the device variant it is simulated on);
:func:`predict` simulates one point (:func:`~catlass_py.calibration.cases.launch_point`: the example's kernel with
the point's tiles, swizzle, layouts and dtype) and times it; :func:`summarize` and :func:`pair_checks` state the
targets (every point within x1.25, geometric-mean error at most 10 %, every published before -> after pair in the
same direction); :mod:`catlass_py.calibration.fit` is how the parameters marked "fitted" were chosen. The
``catlass-py calibrate`` command and ``benchmarks/calibrate.py`` print the table.
"""

from catlass_py.calibration.cases import RUNNERS, basic_matmul_kernel, launch_point
from catlass_py.calibration.fit import (
    FITTED,
    fit,
    load_or_record,
    nelder_mead,
    record,
    with_params,
)
from catlass_py.calibration.points import DATA_FILE, PublishedPoint, load_points, select
from catlass_py.calibration.predict import (
    GEOMEAN_TARGET,
    PAIRS,
    TOLERANCE,
    EventRecorder,
    PairCheck,
    Prediction,
    Summary,
    pair_checks,
    predict,
    replay,
    summarize,
)
from catlass_py.calibration.report import rich_table, scatter_plot, table_markdown

__all__ = [
    "DATA_FILE",
    "FITTED",
    "GEOMEAN_TARGET",
    "PAIRS",
    "RUNNERS",
    "TOLERANCE",
    "EventRecorder",
    "PairCheck",
    "Prediction",
    "PublishedPoint",
    "Summary",
    "basic_matmul_kernel",
    "fit",
    "launch_point",
    "load_or_record",
    "load_points",
    "nelder_mead",
    "pair_checks",
    "predict",
    "record",
    "replay",
    "rich_table",
    "scatter_plot",
    "select",
    "summarize",
    "table_markdown",
    "with_params",
]
