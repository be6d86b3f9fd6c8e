"""What runnable examples share: the result record, CATLASS-style argument parsing (:func:`parse_positional`,
:func:`parse_int`: ASCII digits, ``uint32`` values), a progress observer, and the host-side steps of ``run()``
around the launch (:func:`to_device`, :class:`ExampleRun` with its memory budget).

An example script - a shipped one (``examples/NN_name.py``, importable as ``catlass_py.examples.NN_name``) or a
user's file that ``catlass-py run path/to/file.py`` loads (:func:`load_script`, from :mod:`catlass_py.scripts`) -
defines:

* ``NAME``: its name (a user file defaults to the file's stem);
* ``USAGE``: the positional arguments, as CATLASS's usage line (e.g. ``"problem_count m n k [device_id]"``), and
  the options the script parses itself (``[--dtype DTYPE]``): ``catlass-py run`` refuses an argument that looks
  like an option (a '-' and not a number) for a script whose ``USAGE`` names none;
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
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from catlass_py import JSON_SCHEMA_VERSION
from catlass_py.analysis.schedule import output_digest
from catlass_py.analysis.workload import WorkloadRecorder
from catlass_py.arch.budget import Footprint, array_bytes, check_footprint, core_buffer_bytes, workspace_size
from catlass_py.arch.events import MarkerEvent, Observer
from catlass_py.arch.launch import blas_threads
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.pipes import CoreType
from catlass_py.data import cached_inputs, shape_only_fills
from catlass_py.errors import ArgumentError, CatlassError, ConfigError, SettingError
from catlass_py.integers import is_int
from catlass_py.numerics.compare import compare_peak_bytes
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.scripts import EXAMPLES_PACKAGE, example_names, load_script  # noqa: F401 - re-exported
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
    numerics: bool = True
    """False for a timing-only run (``LaunchParams(numerics=False)``): nothing was computed or compared
    (``passed`` is True, ``max_abs_error`` None, no output digest); the analyses (cost) are what it is for."""
    launch_result: Any = field(default=None, repr=False, compare=False)
    """The :class:`~catlass_py.arch.LaunchResult` of the run (not part of the JSON)."""

    @property
    def verdict(self) -> str:
        """CATLASS's line: 'Compare success.' or 'Compare failed. Error count: N' ('Predicted only ...' for a
        timing-only run)."""
        if not self.numerics:
            return "Predicted only (timing-only run: nothing computed or compared)."
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


def built_for(example):
    """The arch an example script's kernel is built for: the default ``arch`` of its ``assemble()`` (None when it
    has no ``assemble()`` or its ``arch`` has no default spec, as a user's script may not)."""
    from catlass_py.arch.spec import ArchSpec

    assemble = getattr(example, "assemble", None)
    param = inspect.signature(assemble).parameters.get("arch") if callable(assemble) else None
    return param.default if param is not None and isinstance(param.default, ArchSpec) else None


def check_launch(example, arch, cores: int | None, *, cores_given: bool):
    """The checks of ``--arch`` and ``--cores`` that ``catlass-py run`` and ``tune`` make before anything runs,
    against the arch the example's kernel is built for (:func:`built_for`; nothing to check when the example does
    not say): the ``--arch`` spec ``arch`` (or None) must be able to time it
    (:func:`catlass_py.analysis.cost.check_timing_arch`) and have ``cores``, and ``cores`` (given as ``--cores`` when
    ``cores_given``, else ``arch``'s core count) must fit on it. An :class:`ArgumentError` names the option. Returns
    the arch the kernel is built for (None when the example does not say)."""
    from catlass_py.analysis.cost import check_timing_arch

    built = built_for(example)
    if built is None:
        return None
    if arch is not None:
        check_timing_arch(arch, built, "--arch")
        if cores is not None and cores > arch.core_num:  # pricing more cores than the device has
            raise ArgumentError(f"--cores: {arch.name} (--arch) has {arch.core_num} AI cores, got {cores}")
    if cores is not None and cores > built.core_num:
        if cores_given or arch is None:
            raise ArgumentError(f"--cores: expected a count in 1..{built.core_num} ({built.name} AI cores, which "
                                f"{example.NAME}'s kernel is built for), got {cores}")
        raise ArgumentError(f"--arch: {arch.name} has {cores} AI cores, more than the {built.core_num} of {built.name} "
                            f"that {example.NAME}'s kernel is built for; give --cores 1..{built.core_num}")
    return built


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
    ``host`` holds the result after the launch. An example stores a logical matrix in its layout first
    (:func:`catlass_py.ops.operator.as_stored`: a column-major ``[m, k]`` matrix is the C++ host's ``k x m``
    buffer)."""
    return GlobalBuffer.from_array(host, name, read_only=read_only).tensor(host.dtype if dtype is None else dtype)


def host_dtype(element) -> np.dtype:
    """The numpy dtype of the host vector of an element type (a dtype registry name such as ``"bfloat16"``,
    ``ml_dtypes.bfloat16`` for bf16): what ``std::vector<Element>`` holds in the C++ host."""
    return np.dtype(get_dtype(element).numpy)


def compare_output(output, expect, k: int, valid: int | None = None):
    """CATLASS's compare of an output with its golden by the output's element type: ``CompareDataBfloat16`` for a
    bf16 output (``examples/common/golden/compare_data.hpp``: rtol 2**-7, 2**-6 from k = 2048), else
    ``CompareData`` (:func:`catlass_py.golden.compare_data`; integers are then exact in practice). For an example
    whose output type follows a setting (``--set out_element=bf16``); an example whose C++ output is bf16 keeps
    the C++'s ``CompareData``."""
    from catlass_py import golden

    if np.dtype(output.dtype).name == "bfloat16":
        return golden.compare_data_bfloat16(output, expect, k, valid)
    return golden.compare_data(output, expect, k, valid)


def _dtype_names(values: dict) -> dict:
    """The element-type values among ``values`` as dtype registry names: a dtype alias such as ``"bf16"`` given
    in a ``config`` dict becomes ``"bfloat16"``, as ``--set`` parses it (other strings are left alone)."""
    out = {}
    for key, value in values.items():
        if isinstance(value, str):
            try:
                out[key] = get_dtype(value).name
            except CatlassError:
                pass
    return out


def setting_text(value) -> str:
    """An assembly keyword's value as ``--set`` writes it: a class (a layout) by its name, a flag as true/false,
    None as ``auto``."""
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.__name__ if isinstance(value, type) else str(value)


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

    A timing-only run (``options=LaunchParams(numerics=False)``) draws shape-only inputs (:meth:`inputs`), makes
    shape-only outputs (:meth:`zeros`), computes no golden (``numerics`` is False: the example skips it) and
    passes ``compare=None`` to :meth:`result`. ``config`` holds keywords for the example's assembly
    (:meth:`assemble`, ``catlass-py run --set``).
    """

    def __init__(self, example: str, arch, cores: int | None = None, *, observers=(), progress=None, options=None,
                 config=None):
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
        self._blas_threads = (options or LaunchParams()).blas_threads
        self.footprint: Footprint | None = None
        self._observers = tuple(observers)
        self._progress = progress
        #: False for a timing-only run (``options=LaunchParams(numerics=False)``)
        self.numerics = options is None or options.numerics
        #: keywords for the example's assembly (:meth:`assemble`), e.g. from ``catlass-py run --set``
        self.config = dict(config or {})
        self._settings: dict[str, Any] = {}

    def reserve(self, kernel, *, inputs: dict, gm: dict | None = None, golden: int = 0, arguments=None,
                workspace: int = 0) -> Footprint:
        """Check what the run will allocate against the memory budget before it allocates anything
        (:mod:`catlass_py.arch.budget`; ``options.memory_limit``, else ``CATLASS_PY_MEMORY_LIMIT`` or the
        default): the host ``inputs`` it generates and the ``gm`` buffers it makes (outputs, copies stored in
        another layout), each a dict of name -> (shape, dtype); the ``golden``'s bytes
        (:func:`catlass_py.golden.peak_bytes`) and its compare's (a chunk of the largest of those arrays,
        :func:`catlass_py.numerics.compare_peak_bytes`); the on-chip buffers of ``core_num`` cores of ``kernel``'s core
        types; and ``kernel``'s workspace, asked with ``arguments(gm)`` over placeholder tensors of those names
        (a name in ``gm`` stands for its GM copy) when ``arguments`` is given, or ``workspace`` bytes the host
        computes itself (the attention kernels' tilings size their workspaces). A
        :class:`~catlass_py.errors.CapacityError` names the example, the figure and the budget; the figure is
        the result's ``memory_estimate``.

        A timing-only run allocates none of it (shape-only inputs and outputs, no golden, a workspace and on-chip
        buffers that are allocated on first use, which a timing-only core never makes): the footprint is computed
        (what a full run would allocate, e.g. its workspace) but not checked, and the result's
        ``memory_estimate`` is 0."""
        check = check_footprint if self.numerics else (lambda *_: None)
        gm = gm or {}
        footprint = Footprint()
        for name, (shape, dtype) in inputs.items():
            footprint = footprint.array("inputs", f"input {name}", shape, dtype)
        for name, (shape, dtype) in gm.items():
            footprint = footprint.array("gm", name, shape, dtype)
        footprint = footprint.add("golden", "golden", golden)
        if self.numerics:  # the compare of the output with the golden, a chunk at a time (numerics.compare)
            largest = max((math.prod(shape) for shape, _ in (*inputs.values(), *gm.values())), default=0)
            footprint = footprint.add("golden", "compare", compare_peak_bytes(largest))
        cores = core_buffer_bytes(self.arch, self.core_num, aic=getattr(kernel, "aic", None) is not None,
                                  aiv=getattr(kernel, "aiv", None) is not None)
        footprint = footprint.add("cores", "core buffers", cores).add("workspace", "workspace", workspace)
        check(footprint, self.example, self.memory_limit)
        if arguments is not None:
            sizes = {name: (array_bytes(shape, dtype), dtype) for name, (shape, dtype) in {**inputs, **gm}.items()}
            footprint = footprint.add("workspace", "workspace", workspace_size(kernel, arguments, sizes))
            check(footprint, self.example, self.memory_limit)
        self.footprint = footprint
        return footprint

    def inputs(self, make, *args, **kwargs):
        """``make(*args, **kwargs)``, the example's host inputs, through the on-disk input cache keyed by the
        example's name, ``make`` and the arguments (:func:`catlass_py.data.cached_inputs`); the result
        records whether they came from the cache. A timing-only run calls ``make`` inside
        :func:`catlass_py.data.shape_only_fills` instead (shape-only operands, a real group list; never cached)."""
        with self.phase("host inputs"):
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
        self._settings = {name: p.default for name, p in params.items()
                          if name != "arch" and p.default is not p.empty}
        self._settings.update(defaults)
        self._settings.update(self.config)
        self._settings.update(_dtype_names(self._settings))
        try:
            return assemble(arch=arch, **{**defaults, **self.config})
        except ConfigError as exc:
            if not self.config:
                raise
            raise SettingError(f"the assembly rejects the settings ({', '.join(self.config)}): {exc}"
                               f"{self._tile_hint(exc)}") from exc

    def _tile_hint(self, exc: ConfigError) -> str:
        """A hint for a rule on both tiles broken with one of ``l1_tile`` / ``l0_tile`` configured: the other kept its
        value (the assembly's default or the example's choice)."""
        given = [k for k in ("l1_tile", "l0_tile") if k in self.config]
        if len(given) != 1 or not ("L1" in str(exc) and "L0" in str(exc)):
            return ""
        other = "l0_tile" if given[0] == "l1_tile" else "l1_tile"
        if other not in self._settings:
            return ""
        value = self._settings[other]
        shown = "auto" if value is None else "x".join(str(v) for v in value) if isinstance(value, tuple) else value
        return f" ({other} is not set and stays {shown}: set {other} too)"

    def setting(self, name: str, assemble=None):
        """The value of the assembly keyword ``name`` the kernel was assembled with (:meth:`assemble`): the
        configured one (``--set``), else the example's own choice, else the assembly's default; None where the
        assembly chooses (``auto``). Before :meth:`assemble`, pass the assembly function: the configured value,
        else its default (for a host decision the assembly depends on, e.g. whether a layout needs padding).
        This is what the host side follows, as the C++ host follows the template parameters: the element type
        of the data it generates (``ElementA``) and the layout it stores a matrix in (``LayoutA``)."""
        if not self._settings:  # before assemble(): the configured value, else the assembly's default
            params = inspect.signature(assemble).parameters if assemble is not None else {}
            if name in self.config:
                return _dtype_names({name: self.config[name]}).get(name, self.config[name])
            if name in params and name != "arch":
                return params[name].default
        if name not in self._settings:
            raise ArgumentError(f"{self.example}: {name} is not a keyword of its assemble()")
        return self._settings[name]

    def require(self, name: str, allowed, why: str, assemble=None) -> None:
        """Refuse, before anything runs, a configured ``name`` whose value is not in ``allowed`` (values as
        :meth:`setting` gives them; ``assemble`` as there): a :class:`~catlass_py.errors.SettingError`
        ``"EXAMPLE: --set name=value: why (supported: ...)"``. For a combination the example's kernel, epilogue or
        host code does not support."""
        value = self.setting(name, assemble)
        allowed = tuple(allowed)
        if value not in allowed:
            shown = ", ".join(setting_text(v) for v in allowed)
            raise SettingError(f"{self.example}: --set {name}={setting_text(value)}: {why} (supported: {shown})")

    def require_supported(self, supported: dict, assemble=None) -> None:
        """:meth:`require` for every entry ``name: (allowed values, why)`` of an example's ``SUPPORTED_SETTINGS``
        (the values of its assembly's settings that its host code takes; ``run NAME --help`` lists them)."""
        for name, (allowed, why) in supported.items():
            self.require(name, allowed, why, assemble)

    @contextmanager
    def host_checks(self) -> Iterator[None]:
        """The host's input checks (an operator's ``validate_inputs``) inside the ``with`` block: on a run with
        settings, an :class:`ArgumentError` there is a :class:`~catlass_py.errors.SettingError` naming them (the
        host data follows the settings, so a rule they break shows there)."""
        try:
            yield
        except ArgumentError as exc:
            if not self.config or isinstance(exc, SettingError):
                raise
            raise SettingError(f"{self.example}: the host's input rules reject the settings "
                               f"({', '.join(self.config)}): {exc}") from exc

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
        phase entered twice add up) and tell the progress hook. The golden runs with the launch's BLAS thread
        limit (``LaunchParams.blas_threads``)."""
        if self._progress is not None and hasattr(self._progress, "phase"):
            self._progress.phase(name)
        t0 = time.perf_counter()
        try:
            with blas_threads(self._blas_threads if name == "golden" else None):
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
        (default: from ``golden``'s dtype, e.g. ``"fp32 golden"``). A timing-only run passes ``compare=None``
        (nothing was compared)."""
        out_dtype = getattr(output, "dtype", None)
        if not self.numerics:
            return ExampleResult(
                example=self.example, passed=True, error_count=0, max_abs_error=None, seconds=self.seconds,
                blocks_per_core=self.report.blocks_per_core(), shape=shape, cores=self.core_num, details=details,
                output_digest=None, inputs_cached=False, launch_result=launch_result, numerics=False,
                memory_estimate=None if self.footprint is None else 0,
                reference="nothing (timing-only run)",
                output_dtype="" if out_dtype is None else short_dtype(out_dtype), timings=dict(self.timings),
            )
        if reference is None:
            reference = "golden" if golden is None else f"{short_dtype(np.asarray(golden).dtype)} golden"
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
