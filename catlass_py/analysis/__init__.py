"""Observers of the simulated machine: workload report, cost model and timeline trace (with its causality
check), race detector, and adversarial scheduling. None of them is known to tile or kernel code; each
subscribes to the event bus."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.analysis.causality import (
        AccessLog as AccessLog,
        CausalityViolation as CausalityViolation,
        causality_violations as causality_violations,
    )
    from catlass_py.analysis.cost import CostModel as CostModel, CostReport as CostReport, roofline as roofline
    from catlass_py.analysis.races import RaceAccess as RaceAccess, RaceDetector as RaceDetector
    from catlass_py.analysis.schedule import (
        InterleavingReport as InterleavingReport,
        explore_interleavings as explore_interleavings,
        output_digest as output_digest,
    )
    from catlass_py.analysis.trace import (
        chrome_trace as chrome_trace,
        draw_timeline as draw_timeline,
        write_chrome_trace as write_chrome_trace,
    )
    from catlass_py.analysis.workload import (
        CoreFlagTraffic as CoreFlagTraffic,
        WorkloadRecorder as WorkloadRecorder,
        WorkloadReport as WorkloadReport,
    )

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
