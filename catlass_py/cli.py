"""The ``catlass-py`` command: list, run and tune the CATLASS examples (or a user's example script) on the
simulated machine::

    catlass-py list [--json]
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 [--cores N] [--seed S] [--json]
        [--trace out.json] [--timeline out.png [--timeline-cores 0-3,7]] [--detect-races] [--seeds N]
        [--predict-only] [--set KEY=VALUE ...] [--arch NAME]
    catlass-py run path/to/my_kernel.py ARGS [same options]
    catlass-py run NAME --help    (also lists the example's assembly settings, --set)
    catlass-py tune 00_basic_matmul 256 512 1024 [--arch NAME] [--jobs N | --ray [ADDRESS]] [--out results.csv]
    catlass-py --version          (also: python -m catlass_py ...)
    catlass-py calibrate [--points T01,T02] [--slow] [--plot calibration.png] [--json]

A user file defines what a shipped example does (``NAME``, ``USAGE``, ``run()``; :mod:`catlass_py.runner`) and
runs with every analysis option. :func:`load_script` (:mod:`catlass_py.scripts`) is the one loader of example
scripts; :func:`script_info` reads a script's ``NAME``, ``USAGE`` and ``SUMMARY`` without running it (``list``
imports nothing heavy).

``run`` prints CATLASS's verdict line ("Compare success." on stdout, or "Compare failed. Error count: N" on
stderr) and a summary table: what the output was compared with, the cost model's predicted device time, cube
utilisation and per-pipe busy fractions, and the wall time of each phase; ``--json`` prints one JSON object
instead (with ``schema_version``). ``--trace`` writes a Chrome/Perfetto trace, ``--timeline`` a picture (PNG,
SVG, PDF, ...; matplotlib), ``--detect-races`` checks every pair of accesses to the same bytes (global memory and
every on-chip buffer; from two cores or two pipes of one core) for a happens-before order and reports unconsumed
flag sets, ``--seeds N`` reruns under N adversarial interleavings and compares the outputs. Output paths (and a
picture's format) are checked before anything runs (:func:`check_output_path`, :func:`check_picture_path`).

``--predict-only`` runs timing only (``LaunchParams(numerics=False)``: the same instruction stream and prediction,
no numpy work, shape-only operands; for shapes too large to simulate numerically). ``--set KEY=VALUE`` sets a
keyword of the example's ``assemble()`` (tile shapes, swizzle, stages, layouts, dtypes, policy;
:mod:`catlass_py.assemblies.settings`), checked by the assembly's own rules. ``--arch NAME`` prices the run with
another arch's cost parameters (and its core count as the default ``--cores``). ``tune`` is
:mod:`catlass_py.tune`.

The exit status (:func:`exit_status`; CATLASS itself always exits 0):

* 0 - the compare passes (or a timing-only run ends);
* 1 - a finding about the kernel: the compare fails, the interleavings disagree, or the simulated run stops
  at a race, flag sets nobody waited for, a deadlock, or an error raised inside a simulated core (the full
  message is printed);
* 2 - the run could not be made: bad arguments (a rejected ``--set`` included), an assembly rule broken, the memory budget exceeded
  (:mod:`catlass_py.arch.budget`), the host out of memory, a file that cannot be read or written (``--trace``
  and ``--timeline`` paths are checked before the simulation starts); one line on stderr, never a traceback.
  An interrupt (Ctrl-C) exits 130; a standard output closed by its reader (``| head``) ends the command quietly
  with 141 (128 + SIGPIPE, as a shell reports a command killed by a broken pipe).
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import inspect
import json
import os
import pathlib
import re
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from catlass_py import JSON_SCHEMA_VERSION, __version__
from catlass_py.errors import (
    ArgumentError,
    CatlassError,
    DeadlockError,
    FlagOverflowError,
    KernelError,
    RaceError,
    UnpairedFlagError,
)
from catlass_py.scripts import (  # noqa: F401 - EXAMPLES_PACKAGE, example_names, script_info: re-exported
    EXAMPLES_PACKAGE,
    example_names,
    load_script,
    script_info,
)

if TYPE_CHECKING:  # the CLI imports numpy, rich and the simulator only when it runs something
    from rich.console import Console
    from rich.table import Table

    from catlass_py.runner import ExampleResult

#: the largest value of CATLASS's ``uint32_t`` arguments (:data:`catlass_py.runner.UINT32_MAX`; written out here so
#: that ``--help`` and ``list`` import no numpy)
UINT32_MAX = (1 << 32) - 1

#: options of ``run`` / ``tune`` that take a value (to find the example's name before parsing, for --help)
_VALUE_OPTIONS = {"--cores", "--seed", "--trace", "--timeline", "--timeline-cores", "--seeds", "--set", "--arch",
                  "--jobs", "--out", "--plot", "--top", "--shapes", "--limit", "--space"}


# -- options --------------------------------------------------------------------------------------------


def check_output_path(option: str, path: str) -> pathlib.Path:
    """The one check of an output path given on the command line (``--trace``, ``--timeline``, ...), made before
    anything runs: ``path`` must name a file (not a directory) in an existing directory, and the file must be
    creatable or writable there - tried for real, without truncating an existing file (a file created by the
    check is removed again). An :class:`ArgumentError` names the option and the path the user typed."""
    p = pathlib.Path(path)
    if path == "" or p.is_dir():
        raise ArgumentError(f"{option}: expected a file path, got {path!r} (a directory)" if path else
                            f"{option}: expected a file path, got ''")
    parent = p.parent
    if not parent.is_dir():
        why = "does not exist" if not parent.exists() else "is not a directory"
        raise ArgumentError(f"{option}: cannot write {path!r}: the directory {str(parent)!r} {why}")
    try:
        if p.exists():
            with open(p, "ab"):
                pass
        else:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            os.unlink(p)
    except OSError as exc:
        raise ArgumentError(f"{option}: cannot write {path!r}: {exc.strerror or exc}") from None
    return p


def check_picture_path(option: str, path: str) -> pathlib.Path:
    """:func:`check_output_path` for a picture matplotlib draws (``--timeline``, ``tune --plot``, ``calibrate
    --plot``), and, when matplotlib is installed, the format the path's extension asks for: one matplotlib writes
    (a path without an extension gets a PNG). An :class:`ArgumentError` names the option, the extension and the
    supported ones."""
    p = check_output_path(option, path)
    if p.suffix and importlib.util.find_spec("matplotlib") is not None:
        from matplotlib.backend_bases import FigureCanvasBase

        supported = sorted(FigureCanvasBase.get_supported_filetypes())
        if p.suffix[1:].lower() not in supported:
            raise ArgumentError(f"{option}: cannot draw {path!r}: matplotlib does not write {p.suffix!r} files "
                                f"(supported: {', '.join('.' + f for f in supported)})")
    return p


def parse_core_selection(option: str, text: str) -> tuple[int, ...]:
    """``"0-3,7"`` -> ``(0, 1, 2, 3, 7)``: AI core ids as ranges and single ids, comma-separated."""
    cores: set[int] = set()
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first = int(lo, 10)
            last = int(hi, 10) if sep else first
        except ValueError:
            raise ArgumentError(f"{option}: expected AI core ids like '0-3,7', got {text!r}") from None
        if first < 0 or last < first:
            raise ArgumentError(f"{option}: expected ascending ranges of ids >= 0 like '0-3,7', got {text!r}")
        cores.update(range(first, last + 1))
    return tuple(sorted(cores))


def _check_timeline_cores(selected: tuple[int, ...], cores: int, why: str) -> None:
    """The ``--timeline-cores`` selection must name AI cores of a run on ``cores`` cores (``why`` says whence)."""
    if selected[-1] >= cores:
        raise ArgumentError(f"--timeline-cores: the run has AI cores 0..{cores - 1} ({why}), got core {selected[-1]}")


def _check_options(ns: argparse.Namespace) -> None:
    """Every option checked before the run: counts, output paths, the core selection, matplotlib."""
    if ns.cores is not None and ns.cores < 1:
        raise ArgumentError(f"--cores: expected a count >= 1, got {ns.cores}")
    if ns.seeds == 1 or ns.seeds < 0:  # (0: the default, no extra interleavings)
        raise ArgumentError(f"--seeds: expected a count >= 2 (the outputs of N interleavings are compared), got "
                            f"{ns.seeds}")
    if ns.trace is not None:
        check_output_path("--trace", ns.trace)
    if ns.timeline_cores is not None:
        if ns.timeline is None:
            raise ArgumentError("--timeline-cores: selects the cores of a --timeline picture; give --timeline PATH too")
        ns.timeline_cores = parse_core_selection("--timeline-cores", ns.timeline_cores)
        if ns.cores is not None:  # (without --cores: _analyse, once the example's default is known)
            _check_timeline_cores(ns.timeline_cores, ns.cores, f"--cores {ns.cores}")
    if ns.timeline is not None:
        check_picture_path("--timeline", ns.timeline)
        if importlib.util.find_spec("matplotlib") is None:
            raise ArgumentError("--timeline: drawing a timeline needs matplotlib: pip install 'catlass-py[plot]'")


def _int_option(option: str, low: int, high: int):
    """argparse ``type`` of an integer option: ASCII digits (and a leading '-' when negative values are
    allowed) in ``[low, high]`` (:func:`catlass_py.runner.parse_int`)."""

    def parse(text: str) -> int:
        from catlass_py.runner import parse_int

        try:
            return parse_int(option, text, low=low, high=high)
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option}: ")) from None

    return parse


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors: ``error: argument --cores: ... (see catlass-py run --help)`` and
    argparse's usage-error status (2), without the usage block (the subcommands' parsers are of this class too)."""

    def error(self, message: str):
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _parser(epilogs: dict | None = None) -> argparse.ArgumentParser:
    epilogs = epilogs or {}
    parser = _Parser(prog="catlass-py", description="CATLASS examples on a simulated Ascend AI core.")
    parser.add_argument("--version", action="version", version=f"catlass-py {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    lst = sub.add_parser("list", help="list the runnable examples")
    lst.add_argument("--json", action="store_true", help="print one JSON object (with schema_version)")
    run = sub.add_parser("run", help="run an example with CATLASS's positional arguments",
                         epilog=epilogs.get("run"), formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("example", help="example name (or a unique prefix, e.g. 10), or a path to an example script")
    run.add_argument("args", nargs="*", help="the example's positional arguments (see 'catlass-py list')")
    run.add_argument("--cores", type=_int_option("--cores", 1, UINT32_MAX), default=None,
                     help="AI cores to launch on (default: all of the arch)")
    run.add_argument("--seed", type=_int_option("--seed", -(1 << 63), (1 << 63) - 1), default=None,
                     help="interleaving seed of the simulated cores")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    run.add_argument("--trace", metavar="PATH", default=None,
                     help="write a Chrome/Perfetto trace of the predicted timeline (open in ui.perfetto.dev)")
    run.add_argument("--timeline", metavar="PATH", default=None,
                     help="draw a timeline picture (.png, .svg, .pdf, ...; needs matplotlib: "
                          "pip install 'catlass-py[plot]')")
    run.add_argument("--timeline-cores", metavar="IDS", default=None,
                     help="AI cores the timeline draws, e.g. 0-3,7 (default: every core)")
    run.add_argument("--detect-races", action="store_true",
                     help="check every pair of accesses to the same bytes (global memory and every on-chip buffer; "
                          "from two cores or two pipes of one core) for a happens-before order; report flag sets "
                          "nobody consumed")
    run.add_argument("--seeds", type=_int_option("--seeds", 0, UINT32_MAX), default=0, metavar="N",
                     help="also run N adversarial interleavings (seeds 0..N-1, switching after every flag set) "
                          "and report whether the outputs differ")
    _common_options(run)
    run.add_argument("--predict-only", action="store_true",
                     help="timing only: the kernel's control flow, flags and instruction stream through the cost "
                          "model without the numpy work (shape-only operands, nothing compared); the same prediction "
                          "as a full run, for shapes too large to simulate numerically")
    tune = sub.add_parser("tune", help="rank an example's legal configurations by predicted time",
                          epilog=epilogs.get("tune"), formatter_class=argparse.RawDescriptionHelpFormatter)
    tune.add_argument("example", help="example name (or a unique prefix, e.g. 00)")
    tune.add_argument("args", nargs="*", help="the example's positional arguments (one problem shape)")
    tune.add_argument("--cores", type=_int_option("--cores", 1, UINT32_MAX), default=None,
                      help="AI cores to launch on (default: all of the arch)")
    _common_options(tune)
    tune.add_argument("--shapes", metavar="FILE", default=None,
                      help="tune every problem shape of FILE (one line of the example's arguments per shape) "
                           "instead of ARGS")
    tune.add_argument("--space", metavar="NAME", default=None,
                      help="the search space (default: the example's; 'catlass-py tune NAME --help' lists them)")
    tune.add_argument("--limit", type=_int_option("--limit", 1, UINT32_MAX), default=None, metavar="N",
                      help="evaluate at most N configurations per shape (the first N of the enumeration)")
    tune.add_argument("--no-prune", action="store_true",
                      help="evaluate every legal configuration (no roofline pruning)")
    tune.add_argument("--jobs", type=_int_option("--jobs", 1, UINT32_MAX), default=None, metavar="N",
                      help="local worker processes (default: the machine's CPUs)")
    tune.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                      help="run the sweep as Ray tasks: on the cluster at ADDRESS (e.g. 'auto' or ray://host:10001), "
                           "or on a local Ray instance started for the run (needs pip install 'catlass-py[distributed]')")
    tune.add_argument("--out", metavar="PATH", default=None,
                      help="write every evaluated configuration to PATH (.csv or .json), streamed")
    tune.add_argument("--plot", metavar="PATH", default=None,
                      help="draw the search (predicted time of every configuration) to a picture (.png, .svg, ...; "
                           "needs matplotlib)")
    tune.add_argument("--top", type=_int_option("--top", 1, UINT32_MAX), default=10, metavar="N",
                      help="rows of the ranked table (default 10)")
    tune.add_argument("--no-cache", action="store_true",
                      help="evaluate everything again (the result cache is still written)")
    tune.add_argument("--no-verify", action="store_true",
                      help="do not run the best configuration with numerics against the golden")
    tune.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    cal = sub.add_parser("calibrate", help="predict CATLASS's published timings and compare (the cost model's "
                                           "calibration, catlass_py.calibration)")
    cal.add_argument("--points", default=None, help="comma-separated point ids (default: every modelled point)")
    cal.add_argument("--slow", action="store_true", help="include the points that take minutes to simulate")
    cal.add_argument("--plot", metavar="PATH", default=None, help="write the log-log picture (needs matplotlib)")
    cal.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def _common_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="set a keyword of the example's assemble() (repeatable; the list: NAME --help)")
    p.add_argument("--arch", metavar="NAME", default=None,
                   help="price the run with this arch's cost parameters (e.g. AtlasA2); its core count is the "
                        "default --cores")


def _example_for_help(argv) -> tuple[str, str] | None:
    """(command, example) of a ``run``/``tune`` command line asking for --help with an example named."""
    argv = list(argv)
    if len(argv) < 2 or argv[0] not in ("run", "tune") or not any(a in ("-h", "--help") for a in argv):
        return None
    rest = iter(argv[1:])
    for token in rest:
        if token.startswith("-"):
            if token in _VALUE_OPTIONS:
                next(rest, None)
            continue
        return argv[0], token
    return None


def _settings_help(command: str, name: str) -> str | None:
    """The epilog of ``catlass-py run NAME --help``: the example's assembly settings (and for ``tune`` its search
    spaces), derived from its ``assemble()``; None when the example cannot be loaded. (This loads the example, so
    it imports the simulator; ``--help`` without an example does not.)"""
    from catlass_py.assemblies.settings import settings_of
    from catlass_py.runner import setting_text

    try:
        example = load_script(name)
    except CatlassError:
        return None
    assemble = getattr(example, "assemble", None)
    lines = [f"arguments of {example.NAME}: {getattr(example, 'USAGE', '')}".rstrip(), ""]
    if assemble is None:
        lines.append(f"{example.NAME} has no assemble(): no --set settings.")
    else:
        infos = settings_of(assemble)
        # the values the example's host takes where it narrows the assembly's (SUPPORTED_SETTINGS)
        supported = getattr(example, "SUPPORTED_SETTINGS", {})
        lines.append(f"assembly settings of {example.NAME} (--set KEY=VALUE; {assemble.__module__}.assemble):")
        width = max((len(i.name) for i in infos), default=0)
        syntaxes = ["|".join(map(setting_text, supported[i.name][0])) if i.name in supported else i.syntax
                    for i in infos]
        column = max([28, *map(len, syntaxes)])
        for info, syntax in zip(infos, syntaxes):
            lines.append(f"  {info.name:<{width}}  {syntax:<{column}} default {info.show(info.default)}")
    if command == "tune":
        from catlass_py.tune.space import describe_spaces

        lines.append("")
        lines.extend(describe_spaces(example.NAME))
    return "\n".join(lines)


# -- list -----------------------------------------------------------------------------------------------


def _list(ns: argparse.Namespace) -> int:
    infos = [script_info(name) for name in example_names()]
    if ns.json:
        print(json.dumps({"schema_version": JSON_SCHEMA_VERSION, "version": __version__, "examples": [
            {"name": i["name"], "usage": i["usage"], "summary": i["summary"],
             "command": f"catlass-py run {i['name']} {i['usage']}".rstrip()} for i in infos]}))
        return 0
    bold = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for i in infos:  # the command line to type, then what it computes
        name = f"\033[1m{i['name']}\033[0m" if bold else i["name"]
        print(f"{name} {i['usage']}".rstrip())
        print(f"    {i['summary']}")
    return 0


# -- run ------------------------------------------------------------------------------------------------

#: a per-core list or dict longer than this is summarised (min / max) in the table; --json has it whole
LONG_DETAIL = 8


def _detail_value(key: str, value: Any) -> str:
    if isinstance(value, dict) and len(value) > LONG_DETAIL and all(isinstance(v, (int, float)) for v in value.values()):
        unit = os.path.commonprefix([str(k) for k in value]).rstrip("0123456789.") or "entries"
        vals = list(value.values())
        return f"min {min(vals)}, max {max(vals)}, total {sum(vals)} over {len(vals)} {unit}s (each: --json)"
    if isinstance(value, list) and len(value) > LONG_DETAIL and all(isinstance(v, (int, float)) for v in value):
        return f"min {min(value)}, max {max(value)}, total {sum(value)} over {len(value)} entries (each: --json)"
    return str(value)


def _summary(result: ExampleResult) -> Table:
    from rich.table import Table

    table = Table(title=f"{result.example}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    table.add_row("shape", ", ".join(f"{k}={v}" for k, v in result.shape.items()))
    used = result.details.get("cores_used")
    launched = f" (launched on {used}: min(cores, blocks), as its C++ host does)" if used not in (None, result.cores) \
        else ""
    table.add_row("AI cores", f"{result.cores}{launched}")
    bpc = result.blocks_per_core
    if bpc:
        spread = f"min {min(bpc)}, max {max(bpc)}, total {sum(bpc)}"
        table.add_row("blocks per core", spread if len(bpc) > 12 else f"{bpc} ({spread})")
    out = result.output_dtype or "output"
    for key, value in result.details.items():
        label = f"bit-exact vs {out}(golden)" if key == "bit_exact" else key.replace("_", " ")
        table.add_row(label, _detail_value(key, value))
    if result.numerics:
        table.add_row(f"max |error| vs {result.reference}", f"{result.max_abs_error:.6g} "
                      f"({result.error_count} elements outside CATLASS's tolerance)")
    else:
        table.add_row("numerics", "none (timing-only run)")
    cost = result.analysis.get("cost")
    if cost:
        launches = f"{cost['launches']} launches, " if cost.get("launches", 1) > 1 else ""
        table.add_row("predicted device time", f"{cost['predicted_device_time_us']:.1f} us ({launches}{cost['arch']}, "
                      f"{cost['clock_ghz']} GHz; bound by {cost['bound_by'].replace('_', ' ')})")
        table.add_row("cube utilisation", f"{cost['cube_utilisation']:.1%}")
        for ctype in ("AIC", "AIV"):
            busy = [(k.split(".", 1)[1], v) for k, v in cost["pipe_busy"].items() if k.startswith(ctype + ".")]
            if busy:
                table.add_row(f"{ctype} pipes busy", "  ".join(f"{p} {v:.0%}" for p, v in busy))
    races = result.analysis.get("races")
    if races:
        checked = races["checked_accesses"]
        table.add_row("races", "none" + (f" ({checked} accesses checked)"
                                         if checked is not None else ""))
    inter = result.analysis.get("interleavings")
    if inter:
        verdict = ("outputs DIFFER: " + f"{inter['distinct_outputs']} distinct (seeds {inter['differing_seeds']})"
                   if inter["outputs_differ"] else "outputs identical")
        table.add_row("interleavings", f"{inter['seeds']} seeds: {verdict}")
    for key in ("trace", "timeline"):
        if key in result.analysis:
            table.add_row(key, str(result.analysis[key]["path"]))
    t = result.timings
    source = ("shape-only" if not result.numerics else
              "from the input cache" if result.inputs_cached else "generated")
    table.add_row("host inputs", f"{source}" + (f" in {t['host_inputs']:.3f} s" if "host_inputs" in t else ""))
    table.add_row("launch (simulation)", f"{result.seconds:.3f} s")
    if "golden" in t:
        table.add_row("golden and compare", f"{t['golden']:.3f} s")
    if "wall" in t:
        parts = [f"{t['load']:.3f} s loading the library and the example"] if "load" in t else []
        rest = t["wall"] - sum(t.get(k, 0.0) for k in ("load", "host_inputs", "launch", "golden"))
        parts.append(f"{max(rest, 0.0):.3f} s assembly, analyses and output")
        table.add_row("wall time", f"{t['wall']:.3f} s (with {', '.join(parts)})")
    return table


def example_config(example, pairs) -> dict:
    """The ``--set KEY=VALUE`` pairs as keywords of the example's ``assemble()`` (parsed by
    :func:`catlass_py.assemblies.settings.parse_settings` for the arch the assembly defaults to)."""
    if not pairs:
        return {}
    from catlass_py.assemblies.settings import parse_settings

    assemble = getattr(example, "assemble", None)
    if assemble is None or "config" not in inspect.signature(example.run).parameters:
        raise ArgumentError(f"--set: example {example.NAME} has no assemble() keywords to set (it defines no "
                            "'assemble' or its run() takes no 'config')")
    default_arch = inspect.signature(assemble).parameters.get("arch")
    arch = default_arch.default if default_arch is not None else None
    return parse_settings(assemble, pairs, arch)


#: an option word of an example's USAGE (``[--dtype DTYPE]``)
_OPTION_WORD = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_example_options(example, args: Sequence[str], shown: str) -> None:
    """Refuse, before the run, an argument that looks like an option (it starts with '-' and is not a number) given
    to an example whose ``USAGE`` names no option: neither the CLI nor the example knows it. An example whose
    ``USAGE`` names options (``[--dtype DTYPE]``) parses them itself and names an unknown one."""
    if _OPTION_WORD.search(str(getattr(example, "USAGE", "") or "")):
        return
    for token in args:
        if len(token) > 1 and token.startswith("-") and not _is_number(token):
            raise ArgumentError(f"unknown option {token} (see catlass-py run {shown} --help)")


def _run_script(example, ns: argparse.Namespace, run):
    """``run()``, the example's ``run`` called: its ExampleResult. A user's script (a path) that raises anything
    but the library's errors, or returns something else, is an ArgumentError naming the line of the script (a
    shipped example's own failure keeps its traceback: a bug to report)."""
    from catlass_py.runner import ExampleResult
    from catlass_py.scripts import script_error

    path = ns.example if ns.example.endswith(".py") else None
    try:
        result = run()
    except (CatlassError, MemoryError, OSError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if path is None:
            raise
        raise ArgumentError(f"example: {path}: run() raised {script_error(exc, path)}") from exc
    if not isinstance(result, ExampleResult):
        raise ArgumentError(f"example: {path or example.NAME}: run() returned {type(result).__name__}, not the "
                            "ExampleResult of catlass_py.runner (ExampleRun.result makes it)")
    return result


def _analyse(example, ns: argparse.Namespace, progress_hook) -> ExampleResult:
    """Run the example with the analyses the options ask for and fill ``result.analysis``."""
    from catlass_py.analysis import CostModel, explore_interleavings, write_chrome_trace
    from catlass_py.arch import LaunchParams
    from catlass_py.arch.spec import get_arch
    from catlass_py.runner import check_launch

    if ns.predict_only and ns.seeds:
        raise ArgumentError("--seeds compares the outputs of interleavings; a --predict-only run computes none")
    takes_options = "options" in inspect.signature(example.run).parameters
    if not takes_options and (ns.detect_races or ns.seeds or ns.predict_only):
        raise ArgumentError(f"--detect-races/--seeds/--predict-only: example {example.NAME} does not take "
                            "launch options (its run() has no 'options' parameter)")
    extra: dict[str, Any] = {}
    if takes_options:
        extra["options"] = LaunchParams(detect_races=ns.detect_races, numerics=not ns.predict_only)
    config = example_config(example, ns.set)
    if config:
        extra["config"] = config
    arch = get_arch(ns.arch) if ns.arch else None
    cores = ns.cores if ns.cores is not None or arch is None else arch.core_num
    built = check_launch(example, arch, cores, cores_given=ns.cores is not None)
    run_cores = cores if cores is not None else getattr(built, "core_num", None)
    if ns.timeline_cores and ns.cores is None and run_cores is not None:
        # the default core count is the example's (a given --cores was checked before the example was loaded)
        _check_timeline_cores(ns.timeline_cores, run_cores, f"every AI core of {(arch or built).name}")
    cost = CostModel(arch, record=bool(ns.trace or ns.timeline))
    result = _run_script(example, ns, lambda: example.run(ns.args, cores=cores, seed=ns.seed, observers=(cost,),
                                                          progress=progress_hook, **extra))
    if ns.set:
        result.details["settings"] = " ".join(ns.set)
    rep = cost.report
    if rep is not None:
        result.analysis["cost"] = {"arch": rep.arch, "clock_ghz": rep.clock_ghz, **rep.summary()}
    launch_result = getattr(result, "launch_result", None)
    if ns.detect_races:
        det = getattr(launch_result, "race_detector", None)
        result.analysis["races"] = {"races": 0, "checked_accesses": det.accesses if det is not None else None}
    if ns.trace:
        n = write_chrome_trace(cost, ns.trace)
        result.analysis["trace"] = {"path": ns.trace, "events": n}
    if ns.timeline:
        from catlass_py.analysis import draw_timeline

        drawn = draw_timeline(cost, ns.timeline, cores=ns.timeline_cores)
        result.analysis["timeline"] = {"path": ns.timeline, "cores": drawn["cores"], "arrows": drawn["arrows"],
                                       "stalls": drawn["stalls"]}
    if ns.seeds:
        if result.output_digest is None:
            raise ArgumentError("--seeds: this example does not report an output digest to compare")

        def once(opts):
            return example.run(ns.args, cores=cores, options=opts, **({"config": config} if config else {}))\
                .output_digest

        report = explore_interleavings(once, ns.seeds, detect_races=ns.detect_races, reference=result.output_digest)
        result.analysis["interleavings"] = report.summary()
    return result


_PHASES = {"host inputs": "generating host inputs", "launch": "simulating blocks", "golden": "golden and compare"}


def _run(ns: argparse.Namespace, console: Console, err: Console) -> int:
    t0 = time.perf_counter()
    _check_options(ns)
    example = load_script(ns.example)
    check_example_options(example, ns.args, ns.example if ns.example.endswith(".py") else example.NAME)
    loaded = time.perf_counter() - t0
    progress_hook = None
    progress = None
    if not ns.json and console.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TimeElapsedColumn

        from catlass_py.runner import BlockProgress

        progress = Progress(SpinnerColumn(), "[progress.description]{task.description}", BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
        task = progress.add_task("loading", total=None)
        progress_hook = BlockProgress(lambda n: progress.advance(task, n),
                                      lambda total: progress.update(task, total=total, completed=0),
                                      lambda phase: progress.update(task, description=_PHASES.get(phase, phase),
                                                                    total=None, completed=0))
        progress.start()
    try:
        result = _analyse(example, ns, progress_hook)
    finally:
        if progress is not None:
            progress.stop()
    result.timings["load"] = loaded
    result.timings["wall"] = time.perf_counter() - t0
    inter = result.analysis.get("interleavings") or {}
    if ns.json:
        print(json.dumps(result.to_json()))
    else:
        (console if result.passed else err).print(result.verdict, highlight=False)
        console.print(_summary(result))
        if inter.get("outputs_differ"):
            err.print("Outputs differ between interleavings: the kernel has a race.", highlight=False)
    return 0 if result.passed and not inter.get("outputs_differ") else 1


def _error(message: str) -> None:
    # plain stderr, never wrapped: a message is one line a user can grep and a test can match
    print(message, file=sys.stderr, flush=True)


#: errors that are findings about the kernel when the simulated run raises them (exit 1)
FINDINGS = (RaceError, UnpairedFlagError, DeadlockError, FlagOverflowError, KernelError)


def exit_status(exc: BaseException) -> int:
    """The exit status of a run that raised ``exc`` (module doc): 1 for a finding about the kernel - a race,
    unconsumed flag sets, a deadlock, a flag overflow, or any error raised inside a simulated core (it names
    the core) unless the host ran out of memory there - and 2 for everything else."""
    cause = exc.__cause__ if isinstance(exc, KernelError) else None
    if isinstance(exc, (MemoryError, OSError)) or isinstance(cause, (MemoryError, OSError)):
        return 2
    if isinstance(exc, FINDINGS) or getattr(exc, "core", None) is not None:
        return 1
    return 2


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catlass-py`` console script: the command's exit status (module doc). An error is
    one line on stderr (a finding its whole message), never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    epilogs = {}
    try:
        asked = _example_for_help(argv)
        if asked is not None:  # 'run NAME --help' lists the example's settings (this loads the example)
            text = _settings_help(*asked)
            if text:
                epilogs[asked[0]] = text
    except Exception:  # noqa: BLE001 - the help text must come out even when the example cannot be loaded
        pass
    parser = _parser(epilogs)
    try:
        ns, extra = parser.parse_known_args(argv)
        if extra:  # an example's own options (CATLASS's --dtype ...) go to the example with its positional arguments
            if ns.command != "run":
                parser.exit(2, f"error: unrecognized arguments: {' '.join(extra)} "
                               f"(see catlass-py {ns.command} --help)\n")
            ns.args = list(ns.args) + extra
    except SystemExit as exc:  # argparse printed the error (or the help)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        status = _command(ns)
        sys.stdout.flush()  # a reader gone from stdout shows here, not in Python's last flush at exit
        return status
    except BrokenPipeError:  # stdout's reader went away (| head): exit quietly, as a process SIGPIPE ends would
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except (CatlassError, MemoryError, OSError) as exc:
        status = exit_status(exc)
        if isinstance(exc, ArgumentError):
            text = f"error: {_one_line(exc)}"
        elif status == 1:
            text = f"{type(exc).__name__}: {exc}"
        elif isinstance(exc, MemoryError):
            text = f"error: out of memory ({_one_line(exc) or 'MemoryError'}); CATLASS_PY_MEMORY_LIMIT lowers the budget"
        else:
            text = f"error: {type(exc).__name__}: {_one_line(exc)}"
        _error(text)
        return status


def _consoles() -> tuple[Console, Console]:
    """rich consoles for stdout and stderr whose broken pipe is a :class:`BrokenPipeError` for :func:`main` (rich
    itself exits 1 there)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _Console(), _Console(stderr=True, soft_wrap=True)


def _command(ns: argparse.Namespace) -> int:
    if ns.command == "list":
        return _list(ns)
    if getattr(ns, "plot", None):  # tune --plot, calibrate --plot: checked before anything runs
        check_picture_path("--plot", ns.plot)
    if ns.command == "tune" and ns.out:
        check_output_path("--out", ns.out)
    console, err = _consoles()
    if ns.command == "tune":
        from catlass_py.tune.command import tune_command

        return tune_command(ns, console, err)
    if ns.command == "calibrate":
        from catlass_py.calibration.command import calibrate

        return calibrate(ns, console)
    return _run(ns, console, err)


def _quiet_stdout() -> None:
    # the Python docs' note on SIGPIPE: stdout to /dev/null, so that the flush at exit cannot fail again
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a test's capture)
        pass


def run_example_main(name: str, argv: Sequence[str]) -> int:
    """``python examples/NN_name.py args...`` behaves like ``catlass-py run NN_name args...`` (a user's script
    passes its path, ``__file__``). A script run as ``__main__`` that passes its own ``NAME`` which is not a shipped
    example's (a copy of an example with a new ``NAME``) runs that script's file."""
    main_module = sys.modules.get("__main__")
    path = getattr(main_module, "__file__", None)
    if path and name == getattr(main_module, "NAME", None) and name not in example_names():
        name = path
    return main(["run", name, *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
