"""The hazard detector as an analysis: :class:`RaceDetector` finds unordered conflicting accesses between cores
and between pipes of one core. It lives with the machine (:mod:`catlass_py.arch.hazards`, on the pipe model of
:mod:`catlass_py.arch.pipe_order`) because ``LaunchParams(detect_races=True)`` switches it on."""

from catlass_py.arch.hazards import RaceAccess, RaceDetector, overlap

__all__ = ["RaceAccess", "RaceDetector", "overlap"]
