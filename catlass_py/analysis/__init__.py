"""Observers of the simulated machine: workload report, cost model and timeline trace (with its causality
check), race detector, and adversarial scheduling. None of them is known to tile or kernel code; each
subscribes to the event bus."""

from catlass_py.analysis.causality import AccessLog, CausalityViolation, causality_violations
from catlass_py.analysis.cost import CostModel, CostReport, roofline
from catlass_py.analysis.races import RaceAccess, RaceDetector
from catlass_py.analysis.schedule import InterleavingReport, explore_interleavings, output_digest
from catlass_py.analysis.trace import chrome_trace, draw_timeline, write_chrome_trace
from catlass_py.analysis.workload import CoreFlagTraffic, WorkloadRecorder, WorkloadReport

__all__ = [
    "AccessLog",
    "CausalityViolation",
    "CoreFlagTraffic",
    "CostModel",
    "CostReport",
    "InterleavingReport",
    "RaceAccess",
    "RaceDetector",
    "WorkloadRecorder",
    "WorkloadReport",
    "causality_violations",
    "chrome_trace",
    "draw_timeline",
    "explore_interleavings",
    "output_digest",
    "roofline",
    "write_chrome_trace",
]
