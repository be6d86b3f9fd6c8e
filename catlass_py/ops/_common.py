"""Plumbing shared by the numpy-in / numpy-out operators of the issue-4 kernels: operand layouts, GM buffers
and running a kernel through :class:`~catlass_py.kernel.DeviceGemm` with an optional workload report."""

from __future__ import annotations

import importlib

import numpy as np

from catlass_py.analysis.workload import WorkloadRecorder
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.errors import ArgumentError
from catlass_py.kernel.device_gemm import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor

_LAYOUT_NAMES = {
    "rowmajor": RowMajor, "row_major": RowMajor, "row": RowMajor, "nd": RowMajor,
    "columnmajor": ColumnMajor, "column_major": ColumnMajor, "column": ColumnMajor, "col": ColumnMajor,
}


def layout_arg(name: str, value) -> type:
    """``RowMajor``/``ColumnMajor`` from a layout class or a name ('RowMajor', 'row_major', 'ColumnMajor', ...)."""
    if value in (RowMajor, ColumnMajor):
        return value
    if isinstance(value, str) and value.lower() in _LAYOUT_NAMES:
        return _LAYOUT_NAMES[value.lower()]
    raise ArgumentError(f"{name}: expected RowMajor or ColumnMajor (or 'row_major' / 'column_major'), got {value!r}")


def gm_storage(x: np.ndarray, layout: type) -> np.ndarray:
    """The bytes a CATLASS operand of logical shape ``x.shape`` occupies in GM: ``x`` itself (row-major) or
    its transpose (column-major). Never modifies ``x``; copies only when needed."""
    return np.ascontiguousarray(x.T if layout is ColumnMajor else x)


def gm_input(name: str, x: np.ndarray) -> GlobalTensor:
    """A read-only GM tensor over the host array ``x``."""
    arr = np.ascontiguousarray(x)
    return GlobalBuffer.from_array(arr, name, read_only=True).tensor(arr.dtype)


def gm_output(name: str, x: np.ndarray) -> GlobalTensor:
    """A writable GM tensor over the host array ``x`` (written in place)."""
    return GlobalBuffer.from_array(x, name).tensor(x.dtype)


def load_example(module: str):
    """The example module ``catlass_py.examples.<module>`` (the single source of each assembly)."""
    return importlib.import_module(f"catlass_py.examples.{module}")


def initialize_and_run(op: DeviceGemm, args, core_num: int, *, seed=None, observers=(), return_report: bool = False,
                       workspace=None, options=None):
    """``op.initialize`` (allocating a poisoned workspace unless one is given) and ``op.run`` on ``core_num`` AI
    cores with launch ``options`` (:class:`~catlass_py.arch.LaunchParams`), with a workload recorder when
    ``return_report``. Returns ``(workload report or None, LaunchResult)``."""
    op.initialize(args, workspace)
    recorder = WorkloadRecorder() if return_report else None
    obs = tuple(observers) + ((recorder,) if recorder else ())
    launch = op.run(core_num, seed=seed, observers=obs, options=options)
    return (recorder.report if recorder else None), launch


def run_kernel(kernel, args, core_num: int, *, seed=None, observers=(), return_report: bool = False, workspace=None,
               options=None):
    """``DeviceGemm(kernel)``: can_implement, then :func:`initialize_and_run`. Returns
    ``(workload report or None, LaunchResult)``."""
    op = DeviceGemm(kernel)
    op.can_implement(args)
    return initialize_and_run(op, args, core_num, seed=seed, observers=observers, return_report=return_report,
                              workspace=workspace, options=options)


def run_operator(kernel, args, out, core_num: int, *, seed=None, observers=(), return_report: bool = False,
                 return_launch: bool = False, options=None):
    """:func:`run_kernel`, then the operator's return value: the host array ``out`` the kernel wrote, and the
    workload report and/or LaunchResult when asked for (:func:`finish`)."""
    report, launch = run_kernel(kernel, args, core_num, seed=seed, observers=observers, return_report=return_report,
                                options=options)
    return finish(out, report, launch, return_report, return_launch)


def finish(out, report, launch, return_report: bool, return_launch: bool):
    """An operator's return value: ``out``, followed by the workload report and/or the LaunchResult when
    asked for (in that order)."""
    extra = ((report,) if return_report else ()) + ((launch,) if return_launch else ())
    return (out, *extra) if extra else out


def check_positive(name: str, value: int, what: str) -> None:
    """:class:`ArgumentError` unless ``value > 0``."""
    if value <= 0:
        raise ArgumentError(f"{name}: expected {what} > 0, got {value}")


def empty_result(shape, dtype, return_report: bool, return_launch: bool = False):
    """The result of an operator with an empty output (m == 0 or n == 0): nothing is launched, as on the
    device where no block would exist (the LaunchResult, when asked for, is None)."""
    from catlass_py.analysis.workload import WorkloadReport

    return finish(np.zeros(shape, dtype=dtype), WorkloadReport(), None, return_report, return_launch)
