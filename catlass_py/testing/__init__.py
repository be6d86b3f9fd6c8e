"""What tests of kernels and operators need: CATLASS's compare as an assertion (:func:`assert_compare`), and one
call that runs a kernel or an operator and checks everything the simulator can (:func:`check`: the golden
compare, the race detector, unconsumed flags, outputs under adversarial interleavings), and :class:`EventLog`, an
observer whose record of a launch's events compares equal to another launch's when both issued the same events
(e.g. a timing-only run and a full run of one kernel).

Installed with catlass_py, :mod:`catlass_py.testing.plugin` registers pytest fixtures through the ``pytest11``
entry point ``catlass_py``: ``catlass_check`` (:func:`check`), ``catlass_compare`` (:func:`assert_compare`),
``catlass_core`` (a standalone core for trying tile operations) and ``catlass_arch`` (the arch tests run on).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from catlass_py.analysis.schedule import InterleavingReport, explore_interleavings, output_digest
from catlass_py.arch.events import Observer
from catlass_py.arch.launch import LaunchResult
from catlass_py.arch.params import LaunchParams
from catlass_py.kernel.device_gemm import DeviceGemm
from catlass_py.numerics.compare import CompareResult, compare_data, compare_exact


def assert_compare(actual, golden, k: int | None = None, *, valid: int | None = None) -> CompareResult:
    """Assert CATLASS's compare rule: float results within the relative tolerance CATLASS's examples use for a
    reduction over ``k`` (:func:`catlass_py.numerics.compare.compare_data`), integer results bit for bit
    (``k`` may then be None). ``valid``: compare only the first ``valid`` elements (row-major). On failure the
    :class:`AssertionError` names the error count, the worst index and both values there. Returns the
    :class:`~catlass_py.numerics.compare.CompareResult`."""
    actual, golden = np.asarray(actual), np.asarray(golden)
    if actual.shape != golden.shape:
        raise AssertionError(f"shape: actual {actual.shape}, golden {golden.shape}")
    if np.issubdtype(actual.dtype, np.integer):
        result = compare_exact(actual, golden, valid)
    else:
        if k is None:
            raise TypeError("assert_compare: k (the length of the reduction) is needed to compare float results")
        result = compare_data(actual, golden, k, valid)
    if not result.passed:
        raise AssertionError(
            f"{result} of {result.checked} (rtol {result.rtol:.3g}); worst at index {result.worst_index}: actual "
            f"{result.worst_actual!r}, golden {result.worst_golden!r} (|error| {result.max_abs_error:.6g}, "
            f"relative {result.max_rel_error:.6g})")
    return result


@dataclass
class CheckResult:
    """What :func:`check` ran and found: the output (the op's, or the kernel's ``outputs``), the first launch's
    :class:`~catlass_py.arch.LaunchResult` (with the race detector when ``races``), the golden compare and the
    interleavings' report (None when not asked for)."""

    output: Any
    launch: LaunchResult
    compare: CompareResult | list[CompareResult] | None = None
    interleavings: InterleavingReport | None = None


class EventLog(Observer):
    """Every event of the launches it observes, as ``(event class name, text of every field but the sequence
    number)`` in :attr:`events`. A memory access names its memory by its name and by the order in which the memory
    first appeared (buffer ids differ from one launch to the next), so two launches that issued the same events
    leave equal logs."""

    interests = None

    def __init__(self):
        self.events: list[tuple[str, str]] = []
        self._ids: dict[int, int] = {}

    def _access(self, a):
        return (a.buffer, self._ids.setdefault(a.buffer_id, len(self._ids)), a.start, a.length, a.stride, a.count,
                a.space)

    def on_event(self, e) -> None:
        fields = {}
        for name in e.__dataclass_fields__:
            if name == "seq":
                continue
            v = getattr(e, name)
            if name in ("gm_reads", "gm_writes", "local_reads", "local_writes"):
                v = tuple(self._access(a) for a in v)
            fields[name] = v
        self.events.append((type(e).__name__, repr(sorted(fields.items()))))


def _is_kernel(x) -> bool:
    return hasattr(x, "to_underlying_arguments") and (hasattr(x, "aic") or hasattr(x, "aiv"))


def _digest(output) -> str:
    if isinstance(output, (list, tuple)):
        return output_digest(np.concatenate([np.ascontiguousarray(o).view(np.uint8).reshape(-1) for o in output]))
    return output_digest(output)


def _compare(output, golden, k):
    if isinstance(output, (list, tuple)):
        return [assert_compare(o, g, k) for o, g in zip(output, golden, strict=True)]
    return assert_compare(output, golden, k)


def check(kernel_or_op, *args, golden=None, k: int | None = None, races: bool = True, seeds: int = 0,
          flags: bool = True, outputs=None, core_num: int | None = None, **kwargs) -> CheckResult:
    """Run ``kernel_or_op`` and check it; return a :class:`CheckResult`.

    * An **operator** (a function of :mod:`catlass_py.ops`, or any function taking their launch keywords) is
      called as ``op(*args, **kwargs, options=..., return_launch=True)`` (``core_num`` passed on when given).
    * A **kernel** is run through :class:`~catlass_py.kernel.DeviceGemm` as ``check(kernel, arguments,
      outputs=..., core_num=N)``: ``arguments`` its host-side ``Arguments``, ``outputs`` the host array (or
      list of arrays) its output GM buffers wrap; they are restored to their first contents before every rerun.

    Checks: with ``races`` the launch runs the race detector (a :class:`~catlass_py.errors.RaceError` propagates);
    with ``flags`` every cross-core and intra-core flag set must have been consumed (the launch raises
    :class:`~catlass_py.errors.UnpairedFlagError`; ``flags=False`` allows unpaired sets); ``golden`` (an array, a
    list of arrays, or a function of ``args`` returning them) is compared by :func:`assert_compare` with ``k``;
    ``seeds`` N reruns the launch under N adversarial interleavings (seeds 0..N-1, switching cores after every
    flag set) and asserts that the outputs never differ.
    """
    if _is_kernel(kernel_or_op):
        if len(args) != 1:
            raise TypeError("check(kernel, arguments, outputs=..., core_num=...): one Arguments value expected")
        if outputs is None or core_num is None:
            raise TypeError("check(kernel, ...): outputs= (the host arrays it writes) and core_num= are needed")
        kernel, arguments = kernel_or_op, args[0]
        arrays = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        initial = [a.copy() for a in arrays]

        def run(options: LaunchParams):
            for array, first in zip(arrays, initial):
                array[...] = first
            op = DeviceGemm(kernel)
            if not op.can_implement(arguments):
                raise AssertionError(f"{type(kernel).__name__}: CanImplement rejected the arguments")
            op.initialize(arguments)
            result = op.run(core_num, options=options, **kwargs)
            return outputs, result
    else:
        op = kernel_or_op
        if core_num is not None:
            kwargs["core_num"] = core_num

        def run(options: LaunchParams):
            result = op(*args, **kwargs, options=options, return_launch=True)
            return result[0], result[-1]

    allow_unpaired = not flags
    output, launch = run(LaunchParams(detect_races=races, allow_unpaired_flags=allow_unpaired))
    reference = _digest(output)
    compare = None
    if golden is not None:
        want = golden(*args) if callable(golden) else golden
        compare = _compare(output, want, k)
    interleavings = None
    if seeds:
        interleavings = explore_interleavings(
            lambda opts: _digest(run(replace(opts, allow_unpaired_flags=allow_unpaired))[0]), seeds,
            detect_races=races, reference=reference)
        if interleavings.differ:
            raise AssertionError(f"outputs differ between interleavings: {interleavings.summary()}")
        run(LaunchParams(allow_unpaired_flags=allow_unpaired))  # leave the first run's output in place
    return CheckResult(output, launch, compare, interleavings)


__all__ = ["CheckResult", "EventLog", "assert_compare", "check"]
