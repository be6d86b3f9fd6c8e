"""Observers of the simulated machine: workload report, cost model and timeline trace (with its causality
check), race detector, and adversarial scheduling. None of them is known to tile or kernel code; each
subscribes to the event bus."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.analysis.causality import AccessLog, CausalityViolation, causality_violations
    from catlass_py.analysis.cost import CostModel, CostReport, roofline
    from catlass_py.analysis.races import RaceAccess, RaceDetector
    from catlass_py.analysis.schedule import InterleavingReport, explore_interleavings, output_digest
    from catlass_py.analysis.trace import chrome_trace, draw_timeline, write_chrome_trace
    from catlass_py.analysis.workload import CoreFlagTraffic, WorkloadRecorder, WorkloadReport

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
