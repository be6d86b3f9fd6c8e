"""What runnable examples share: the result record, CATLASS-style argument parsing, a progress observer, and the
host-side steps of ``run()`` around the launch (:func:`to_device`, :class:`ExampleRun`).

An example script - a shipped one (``examples/NN_name.py``, importable as ``catlass_py.examples.NN_name``) or a
user's file that ``catlass-py run path/to/file.py`` loads (:func:`catlass_py.cli.load_script`) - defines:

* ``NAME``: its name (a user file defaults to the file's stem);
* ``USAGE``: the positional arguments, as CATLASS's usage line (e.g. ``"problem_count m n k [device_id]"``);
* ``SUMMARY``: one line for ``catlass-py list``;
* ``run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult``:
  ``observers`` join the launch (cost model, trace, ...), ``options`` is the launch's
  :class:`~catlass_py.arch.LaunchParams` (``detect_races``, ``preempt_on_set``, ``numerics``), ``config`` a dict
  of keywords for the example's ``assemble()`` (``catlass-py run --set``; optional); the result carries a digest
  of the output (``output_digest``) and the :class:`~catlass_py.arch.LaunchResult` (``launch_result``);
* ``assemble`` (optional): the assembly function whose keywords ``config`` sets (``catlass-py run NAME --help``
  lists them).

The shipped examples build their kernels with :mod:`catlass_py.assemblies`. With
``options=LaunchParams(numerics=False)`` (``catlass-py run --predict-only``) an example runs timing-only:
:meth:`ExampleRun.inputs` gives shape-only operands (the group list stays real), the output is shape-only and
nothing is compared (:attr:`ExampleResult.numerics` is False).

:func:`load_script` is the one loader of example scripts (shipped ones by name, a user's by path).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from catlass_py.analysis.schedule import output_digest
from catlass_py.analysis.workload import WorkloadRecorder
from catlass_py.arch.events import MarkerEvent, Observer
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.arch.pipes import CoreType
from catlass_py.data import cached_inputs, shape_only_fills
from catlass_py.errors import ArgumentError, ConfigError, SettingError
from catlass_py.virtual import virtual_array


@dataclass
class ExampleResult:
    """Outcome of one example run: CATLASS's compare verdict plus what the simulation saw."""

    example: str
    passed: bool
    error_count: int
    max_abs_error: float | None
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
    launch_result: Any = field(default=None, repr=False, compare=False)
    """The :class:`~catlass_py.arch.LaunchResult` of the run (not part of the JSON)."""
    numerics: bool = True
    """False for a timing-only run (``LaunchParams(numerics=False)``): nothing was computed or compared
    (``passed`` is True, ``max_abs_error`` None, no output digest); the analyses (cost) are what it is for."""

    @property
    def verdict(self) -> str:
        """CATLASS's line: 'Compare success.' or 'Compare failed. Error count: N' ('Predicted only ...' for a
        timing-only run)."""
        if not self.numerics:
            return "Predicted only (timing-only run: nothing computed or compared)."
        return "Compare success." if self.passed else f"Compare failed. Error count: {self.error_count}"

    def to_json(self) -> dict:
        """The record as a JSON-ready dict (what ``catlass-py run --json`` prints)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "launch_result"}
        d = copy.deepcopy(d)
        d["verdict"] = self.verdict
        return d


def parse_positional(name: str, usage: str, argv: list[str]) -> list[int]:
    """CATLASS's option parsing: the required positional ints of ``usage`` (optional ones in brackets, e.g.
    ``[device_id]``), read with ``atoi`` semantics except that garbage is an error here."""
    words = usage.split()
    required = [w for w in words if not w.startswith("[")]
    if not len(required) <= len(argv) <= len(words):
        raise ArgumentError(f"usage: {name} {usage}")
    out = []
    for label, text in zip(words, argv):
        try:
            out.append(int(text, 10))
        except ValueError:
            raise ArgumentError(f"{label.strip('[]')}: expected an integer, got {text!r} (usage: {name} {usage})") from None
    return out


class BlockProgress(Observer):
    """Progress hook of a run: the example calls ``set_total(blocks)`` before launching; every output block a
    cube core starts (``ctx.mark('block')``) then calls ``advance(1)``."""

    interests = frozenset({"marker"})

    def __init__(self, advance, set_total=None):
        self.advance = advance
        self._set_total = set_total

    def set_total(self, total: int) -> None:
        if self._set_total is not None:
            self._set_total(total)

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
    of ``arch``, as ``aclrtGetDeviceInfo``), the host inputs (:meth:`inputs`, through the on-disk input cache),
    the launch's observers (a workload recorder, the caller's ``observers`` and ``progress``), its wall time,
    and the :class:`ExampleResult` with CATLASS's verdict.

    ::

        ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress)
        a, b = ex.inputs(make_inputs, m, n, k)      # host data, through the input cache
        with ex.timing():
            out = op(..., core_num=ex.core_num, observers=ex.observers(total_blocks))
        return ex.result(out, golden.compare_data(out, expect, k), shape=..., details=...)
    """

    def __init__(self, example: str, arch, cores: int | None = None, *, observers=(), progress=None, options=None,
                 config=None):
        self.example = example
        self.core_num = arch.core_num if cores is None else cores
        self.recorder = WorkloadRecorder()
        self.seconds = 0.0
        self.inputs_cached = False
        self._observers = tuple(observers)
        self._progress = progress
        #: False for a timing-only run (``options=LaunchParams(numerics=False)``)
        self.numerics = options is None or options.numerics
        #: keywords for the example's assembly (:meth:`assemble`), e.g. from ``catlass-py run --set``
        self.config = dict(config or {})

    def inputs(self, make, *args, **kwargs):
        """``make(*args, **kwargs)``, the example's host inputs, through the on-disk input cache keyed by the
        example's name, ``make`` and the arguments (:func:`catlass_py.data.cached_inputs`); the result
        records whether they came from the cache. A timing-only run calls ``make`` inside
        :func:`catlass_py.data.shape_only_fills` instead (shape-only operands, a real group list; never cached)."""
        if not self.numerics:
            with shape_only_fills():
                return make(*args, **kwargs)
        value, self.inputs_cached = cached_inputs(self.example, make, *args, **kwargs)
        return value

    def zeros(self, shape, dtype) -> np.ndarray:
        """The host array of an output: zeros, or a shape-only array on a timing-only run."""
        return np.zeros(shape, dtype) if self.numerics else virtual_array(shape, dtype)

    def assemble(self, assemble, arch, **defaults):
        """``assemble(arch=arch, **keywords)``: the example's own choices (``defaults``, e.g. the C++'s runtime
        branch) overridden by :attr:`config`. A key the assembly does not take is an :class:`ArgumentError`; an
        assembly rule a configured value breaks raises :class:`~catlass_py.errors.SettingError` (a
        ``ConfigError`` that is also a bad argument)."""
        params = inspect.signature(assemble).parameters
        unknown = sorted(k for k in self.config if k not in params or k == "arch")
        if unknown:
            raise ArgumentError(f"{self.example}: {', '.join(unknown)} is not a keyword of its assemble() (keywords: "
                                f"{', '.join(k for k in params if k != 'arch')})")
        try:
            return assemble(arch=arch, **{**defaults, **self.config})
        except ConfigError as exc:
            if not self.config:
                raise
            raise SettingError(f"the assembly rejects the settings ({', '.join(self.config)}): {exc}") from exc

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
    def timing(self):
        """Time the launch inside the ``with`` block (``seconds`` of the result)."""
        t0 = time.perf_counter()
        yield
        self.seconds = time.perf_counter() - t0

    def result(self, output, compare, *, shape: dict, details: dict, launch_result=None) -> ExampleResult:
        """The example's :class:`ExampleResult`: ``compare`` (a CATLASS golden compare) gives the verdict,
        ``output`` the digest. A timing-only run passes ``compare=None`` (nothing was compared)."""
        if not self.numerics:
            return ExampleResult(
                example=self.example, passed=True, error_count=0, max_abs_error=None, seconds=self.seconds,
                blocks_per_core=self.report.blocks_per_core(), shape=shape, cores=self.core_num, details=details,
                output_digest=None, inputs_cached=False, launch_result=launch_result, numerics=False,
            )
        return ExampleResult(
            example=self.example, passed=compare.passed, error_count=compare.error_count,
            max_abs_error=float(compare.max_abs_error), seconds=self.seconds,
            blocks_per_core=self.report.blocks_per_core(), shape=shape, cores=self.core_num, details=details,
            output_digest=output_digest(output), inputs_cached=self.inputs_cached, launch_result=launch_result,
        )


# -- example scripts ------------------------------------------------------------------------------------

EXAMPLES_PACKAGE = "catlass_py.examples"  # the shipped example scripts (examples/ in the repository)


def example_names() -> list[str]:
    """Names of the shipped examples, sorted."""
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(spec.submodule_search_locations) if not m.name.startswith("_"))


def _load_file(path: pathlib.Path):
    # As ``python path/to/file.py`` does, the script's directory goes on sys.path (for its sibling modules).
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"catlass_py_script_{abs(hash(str(path.resolve()))):x}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    if not callable(getattr(module, "run", None)):
        raise ArgumentError(f"example: {path} defines no run(argv, *, cores, seed, observers, progress, options) "
                            "(see catlass_py.runner for what an example script defines)")
    if not hasattr(module, "NAME"):
        module.NAME = path.stem
    return module


def load_script(name: str):
    """The example script ``name``: a path to a user's ``.py`` file (``catlass-py run path/to/my_kernel.py``), or
    a shipped example by name or unique prefix (such as ``10``)."""
    path = pathlib.Path(name)
    if name.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ArgumentError(f"example: no such file {name!r}")
        return _load_file(path)
    names = example_names()
    matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
    if len(matches) != 1:
        hint = f"one of {', '.join(names)}" if not matches else f"ambiguous: {', '.join(matches)}"
        raise ArgumentError(f"example: expected {hint} (or a path to an example script); got {name!r}")
    return importlib.import_module(f"{EXAMPLES_PACKAGE}.{matches[0]}")
