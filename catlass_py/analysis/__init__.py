"""Observers of the simulated machine: workload report (and, later, trace, cost model, race detector)."""

from catlass_py.analysis.workload import CoreFlagTraffic, WorkloadRecorder, WorkloadReport

__all__ = ["CoreFlagTraffic", "WorkloadRecorder", "WorkloadReport"]
