"""What runnable examples share: the result record, CATLASS-style argument parsing (:func:`parse_positional`,
:func:`parse_int`: ASCII digits, ``uint32`` values), a progress observer, and the host-side steps of ``run()``
around the launch (:func:`to_device`, :class:`ExampleRun` with its memory budget).

An example script - a shipped one (``examples/NN_name.py``, importable as ``catlass_py.examples.NN_name``) or a
user's file that ``catlass-py run path/to/file.py`` loads (:func:`catlass_py.cli.load_script`) - defines:

* ``NAME``: its name (a user file defaults to the file's stem);
* ``USAGE``: the positional arguments, as CATLASS's usage line (e.g. ``"problem_count m n k [device_id]"``);
* ``SUMMARY``: one line for ``catlass-py list``;
* ``run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult``:
  ``observers`` join the launch (cost model, trace, ...), ``options`` is the launch's
  :class:`~catlass_py.arch.LaunchParams` (``detect_races``, ``preempt_on_set``); the result carries a digest
  of the output (``output_digest``) and the :class:`~catlass_py.arch.LaunchResult` (``launch_result``).

The shipped examples build their kernels with :mod:`catlass_py.assemblies`.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterator, Sequence
import contextlib
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from catlass_py import JSON_SCHEMA_VERSION
from catlass_py.analysis.schedule import output_digest
from catlass_py.analysis.workload import WorkloadRecorder
from catlass_py.arch.budget import Footprint, array_bytes, check_footprint, core_buffer_bytes, workspace_size
from catlass_py.arch.events import MarkerEvent, Observer
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.arch.pipes import CoreType
from catlass_py.data import cached_inputs
from catlass_py.errors import ArgumentError
from catlass_py.integers import is_int


@dataclass
class ExampleResult:
    """Outcome of one example run: CATLASS's compare verdict plus what the simulation saw."""

    example: str
    passed: bool
    error_count: int
    max_abs_error: float
    seconds: float
    blocks_per_core: list[int]
    shape: dict[str, int]
    cores: int
    details: dict[str, Any] = field(default_factory=dict)
    output_digest: str | None = None
    """:func:`output_digest` of the operator's output: equal digests, equal bytes (used by ``--seeds``)."""
    inputs_cached: bool = False
    """True when the host inputs came from the on-disk input cache (:func:`catlass_py.data.cached_inputs`)
    instead of being generated."""
    analysis: dict[str, Any] = field(default_factory=dict)
    """What the analyses found (filled by the CLI): 'cost' (predicted time, utilisation), 'races',
    'interleavings', 'trace'."""
    memory_estimate: int | None = None
    """The bytes the run computed it would allocate before allocating anything (:meth:`ExampleRun.reserve`:
    host inputs, GM buffers, workspace, core buffers, golden), or None for a script that does not say."""
    reference: str = "golden"
    """What the output was compared with, e.g. ``"fp32 golden"`` (``max_abs_error`` is against it)."""
    output_dtype: str = ""
    """The output's element type, e.g. ``"bf16"``: a ``bit_exact`` detail compares with ``<output_dtype>(golden)``,
    the golden rounded to the output type."""
    timings: dict[str, float] = field(default_factory=dict)
    """Wall seconds per phase: ``host_inputs`` (generated or loaded), ``launch`` (= ``seconds``), ``golden``
    (the reference and the compare) and, filled by the CLI, ``load`` (importing the library and the example
    script) and ``wall`` (the whole command)."""
    launch_result: Any = field(default=None, repr=False, compare=False)
    """The :class:`~catlass_py.arch.LaunchResult` of the run (not part of the JSON)."""

    @property
    def verdict(self) -> str:
        """CATLASS's line: 'Compare success.' or 'Compare failed. Error count: N'."""
        return "Compare success." if self.passed else f"Compare failed. Error count: {self.error_count}"

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (what ``catlass-py run --json`` prints), with ``schema_version``
        (:data:`catlass_py.JSON_SCHEMA_VERSION`) first."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "launch_result"}
        d = {"schema_version": JSON_SCHEMA_VERSION, **copy.deepcopy(d)}
        d["verdict"] = self.verdict
        return d


#: the largest value of CATLASS's ``uint32_t`` example arguments
UINT32_MAX = (1 << 32) - 1
_DECIMAL = re.compile(r"[0-9]+")


def parse_int(label: str, text, *, low: int = 0, high: int = UINT32_MAX, hint: str = "") -> int:
    """``text`` as an int in ``[low, high]``: a decimal string of ASCII digits (after an optional ``-`` when
    ``low < 0``; no sign, space, underscore or other script's digits), or an int / numpy integer. Anything else
    is an :class:`ArgumentError` naming ``label`` (and ``hint``)."""
    if is_int(text):
        value = int(text)
    elif isinstance(text, str) and _DECIMAL.fullmatch(text[1:] if low < 0 and text[:1] == "-" else text):
        value = int(text)
    else:
        raise ArgumentError(f"{label}: expected a decimal integer (ASCII digits), got {text!r}{hint}")
    if not low <= value <= high:
        raise ArgumentError(f"{label}: expected an integer in [{low}, {high}], got {value}{hint}")
    return value


def parse_positional(name: str, usage: str, argv: list[str]) -> list[int]:
    """CATLASS's option parsing: the required positional ints of ``usage`` (optional ones in brackets, e.g.
    ``[device_id]``), each a ``uint32_t`` as in the C++ (:func:`parse_int`: ASCII digits, or ints); garbage, a
    sign or a value past 4294967295 is an error here where ``atoi`` would read or wrap it."""
    words = usage.split()
    required = [w for w in words if not w.startswith("[")]
    if isinstance(argv, (str, bytes)) or not len(required) <= len(argv) <= len(words):
        raise ArgumentError(f"usage: {name} {usage}")
    return [parse_int(label.strip("[]"), text, hint=f" (usage: {name} {usage})") for label, text in zip(words, argv)]


class BlockProgress(Observer):
    """Progress hook of a run: :class:`ExampleRun` calls ``phase(name)`` as a run moves on (``"host inputs"``,
    ``"launch"``, ``"golden"``), ``set_total(blocks)`` before launching; every output block a cube core starts
    (``ctx.mark('block')``) then calls ``advance(1)``."""

    interests = frozenset({"marker"})

    def __init__(self, advance: Callable[[int], object], set_total: Callable[[int], object] | None = None,
                 set_phase: Callable[[str], object] | None = None):
        self.advance = advance
        self._set_total = set_total
        self._set_phase = set_phase

    def set_total(self, total: int) -> None:
        if self._set_total is not None:
            self._set_total(total)

    def phase(self, name: str) -> None:
        """The run entered phase ``name``."""
        if self._set_phase is not None:
            self._set_phase(name)

    def on_event(self, e) -> None:
        if isinstance(e, MarkerEvent) and e.kind == "block" and e.core.type is CoreType.AIC:
            self.advance(1)


def to_device(name: str, host: np.ndarray, *, read_only: bool = True, dtype=None) -> GlobalTensor:
    """A GM tensor over the host array (the C++ host's ``aclrtMalloc`` + ``aclrtMemcpy``), typed ``dtype``
    (default: the array's). An input is read-only; an output (``read_only=False``) is written in place, so
    ``host`` holds the result after the launch."""
    return GlobalBuffer.from_array(host, name, read_only=read_only).tensor(host.dtype if dtype is None else dtype)


class ExampleRun:
    """The part of an example's ``run()`` around its launch: the cores to use (``cores``, default every AI core
    of ``arch``, as ``aclrtGetDeviceInfo``; checked), the memory budget (:meth:`reserve`, before anything is
    allocated), the host inputs (:meth:`inputs`, through the on-disk input cache), the launch's observers (a
    workload recorder, the caller's ``observers`` and ``progress``), its wall time, and the
    :class:`ExampleResult` with CATLASS's verdict.

    ::

        ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options)
        ex.reserve(kernel, inputs={"a": ((m, k), "float16"), ...}, gm={"c": ((m, n), "float16")},
                   golden=golden.peak_bytes("matmul", m=m, n=n, k=k))
        a, b = ex.inputs(make_inputs, m, n, k)      # host data, through the input cache
        with ex.timing():                           # the launch
            out = op(..., core_num=ex.core_num, observers=ex.observers(total_blocks))
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            compare = golden.compare_data(out, expect, k)
        return ex.result(out, compare, golden=expect, shape=..., details=...)

    Each phase (``host inputs``, ``launch``, ``golden``) is timed (:attr:`ExampleResult.timings`) and announced
    to the progress hook.
    """

    def __init__(self, example: str, arch, cores: int | None = None, *, observers=(), progress=None, options=None):
        self.example = example
        self.arch = arch
        if cores is not None and (not is_int(cores) or not 1 <= cores <= arch.core_num):
            raise ArgumentError(f"cores: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {cores!r}")
        self.core_num = arch.core_num if cores is None else int(cores)
        self.recorder = WorkloadRecorder()
        self.seconds = 0.0
        self.timings: dict[str, float] = {}
        self.inputs_cached = False
        self.memory_limit = getattr(options, "memory_limit", None)
        self.footprint: Footprint | None = None
        self._observers = tuple(observers)
        self._progress = progress

    def reserve(self, kernel, *, inputs: dict, gm: dict | None = None, golden: int = 0, arguments=None) -> Footprint:
        """Check what the run will allocate against the memory budget before it allocates anything
        (:mod:`catlass_py.arch.budget`; ``options.memory_limit``, else ``CATLASS_PY_MEMORY_LIMIT`` or the
        default): the host ``inputs`` it generates and the ``gm`` buffers it makes (outputs, copies stored in
        another layout), each a dict of name -> (shape, dtype); the ``golden``'s bytes
        (:func:`catlass_py.golden.peak_bytes`); the on-chip buffers of ``core_num`` cores of ``kernel``'s core
        types; and ``kernel``'s workspace, asked with ``arguments(gm)`` over placeholder tensors of those names
        (a name in ``gm`` stands for its GM copy) when ``arguments`` is given. A
        :class:`~catlass_py.errors.CapacityError` names the example, the figure and the budget; the figure is
        the result's ``memory_estimate``."""
        gm = gm or {}
        footprint = Footprint()
        for name, (shape, dtype) in inputs.items():
            footprint = footprint.array("inputs", f"input {name}", shape, dtype)
        for name, (shape, dtype) in gm.items():
            footprint = footprint.array("gm", name, shape, dtype)
        footprint = footprint.add("golden", "golden", golden)
        cores = core_buffer_bytes(self.arch, self.core_num, aic=getattr(kernel, "aic", None) is not None,
                                  aiv=getattr(kernel, "aiv", None) is not None)
        footprint = footprint.add("cores", "core buffers", cores)
        check_footprint(footprint, self.example, self.memory_limit)
        if arguments is not None:
            sizes = {name: (array_bytes(shape, dtype), dtype) for name, (shape, dtype) in {**inputs, **gm}.items()}
            footprint = footprint.add("workspace", "workspace", workspace_size(kernel, arguments, sizes))
            check_footprint(footprint, self.example, self.memory_limit)
        self.footprint = footprint
        return footprint

    def inputs(self, make, *args, **kwargs):
        """``make(*args, **kwargs)``, the example's host inputs, through the on-disk input cache keyed by the
        example's name, ``make`` and the arguments (:func:`catlass_py.data.cached_inputs`); the result
        records whether they came from the cache."""
        with self.phase("host inputs"):
            value, self.inputs_cached = cached_inputs(self.example, make, *args, **kwargs)
        return value

    @property
    def report(self):
        """The launch's :class:`~catlass_py.analysis.WorkloadReport`."""
        return self.recorder.report

    def observers(self, total_blocks: int) -> tuple:
        """The observers of the launch: the workload recorder, the caller's, and the progress hook (which learns
        that ``total_blocks`` blocks are coming)."""
        progress = ()
        if self._progress is not None:
            self._progress.set_total(total_blocks)
            progress = (self._progress,)
        return (self.recorder, *self._observers, *progress)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as phase ``name`` (``"host inputs"``, ``"launch"``, ``"golden"``; times of a
        phase entered twice add up) and tell the progress hook."""
        if self._progress is not None and hasattr(self._progress, "phase"):
            self._progress.phase(name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            key = name.replace(" ", "_")
            self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - t0
            if key == "launch":
                self.seconds = self.timings[key]

    def timing(self) -> contextlib.AbstractContextManager[None]:
        """Time the launch inside the ``with`` block (``seconds`` of the result): ``phase("launch")``."""
        return self.phase("launch")

    def result(self, output, compare, *, shape: dict[str, int], details: dict[str, Any], launch_result=None,
               golden=None, reference: str | None = None) -> ExampleResult:
        """The example's :class:`ExampleResult`: ``compare`` (a CATLASS golden compare) gives the verdict,
        ``output`` the digest and the output type; ``reference`` names what ``output`` was compared with
        (default: from ``golden``'s dtype, e.g. ``"fp32 golden"``)."""
        if reference is None:
            reference = "golden" if golden is None else f"{short_dtype(np.asarray(golden).dtype)} golden"
        out_dtype = getattr(output, "dtype", None)
        return ExampleResult(
            example=self.example, passed=compare.passed, error_count=compare.error_count,
            max_abs_error=float(compare.max_abs_error), seconds=self.seconds,
            blocks_per_core=self.report.blocks_per_core(), shape=shape, cores=self.core_num, details=details,
            output_digest=output_digest(output), inputs_cached=self.inputs_cached, launch_result=launch_result,
            memory_estimate=None if self.footprint is None else self.footprint.total,
            reference=reference, output_dtype="" if out_dtype is None else short_dtype(out_dtype),
            timings=dict(self.timings),
        )


_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}


def short_dtype(dtype) -> str:
    """The short name of a numpy dtype as the summary writes it: fp32, fp16, bf16, int32, ..."""
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)
