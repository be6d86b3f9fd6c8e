"""The ``catlass-py`` command: list and run the CATLASS examples (or a user's example script) on the simulated
machine::

    catlass-py list [--json]
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 [--cores N] [--seed S] [--json]
        [--trace out.json] [--timeline out.png [--timeline-cores 0-3,7]] [--detect-races] [--seeds N]
    catlass-py run path/to/my_kernel.py ARGS [same options]
    catlass-py --version          (also: python -m catlass_py ...)

A user file defines what a shipped example does (``NAME``, ``USAGE``, ``run()``; :mod:`catlass_py.runner`) and
runs with every analysis option. :func:`load_script` is the one loader of example scripts; :func:`script_info`
reads a script's ``NAME``, ``USAGE`` and ``SUMMARY`` without running it (``list`` imports nothing heavy).

``run`` prints CATLASS's verdict line ("Compare success." on stdout, or "Compare failed. Error count: N" on
stderr) and a summary table: what the output was compared with, the cost model's predicted device time, cube
utilisation and per-pipe busy fractions, and the wall time of each phase; ``--json`` prints one JSON object
instead (with ``schema_version``). ``--trace`` writes a Chrome/Perfetto trace, ``--timeline`` a PNG
(matplotlib), ``--detect-races`` checks every GM access pair for a happens-before order and reports unconsumed
flag sets, ``--seeds N`` reruns under N adversarial interleavings and compares the outputs. Output paths are
checked before anything runs (:func:`check_output_path`).

The exit status (:func:`exit_status`; CATLASS itself always exits 0):

* 0 - the compare passes;
* 1 - a finding about the kernel: the compare fails, the interleavings disagree, or the simulated run stops
  at a race, flag sets nobody waited for, a deadlock, or an error raised inside a simulated core (the full
  message is printed);
* 2 - the run could not be made: bad arguments, an assembly rule broken, the memory budget exceeded
  (:mod:`catlass_py.arch.budget`), the host out of memory, a file that cannot be read or written (``--trace``
  and ``--timeline`` paths are checked before the simulation starts); one line on stderr, never a traceback.
  An interrupt (Ctrl-C) exits 130.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import json
import os
import pathlib
import pkgutil
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

if TYPE_CHECKING:  # the CLI imports numpy, rich and the simulator only when it runs something
    from rich.console import Console
    from rich.table import Table

    from catlass_py.runner import ExampleResult

#: the largest value of CATLASS's ``uint32_t`` arguments (:data:`catlass_py.runner.UINT32_MAX`; written out here so
#: that ``--help`` and ``list`` import no numpy)
UINT32_MAX = (1 << 32) - 1

EXAMPLES_PACKAGE = "catlass_py.examples"  # the shipped example scripts (examples/ in the repository)


def example_names() -> list[str]:
    """Names of the shipped examples, sorted."""
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)
    assert spec is not None and spec.submodule_search_locations is not None
    return sorted(m.name for m in pkgutil.iter_modules(spec.submodule_search_locations) if not m.name.startswith("_"))


def _example_path(name: str) -> pathlib.Path:
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)
    assert spec is not None and spec.submodule_search_locations is not None
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / f"{name}.py"


def _resolve(name: str) -> pathlib.Path | str:
    """A user's script path, or the full name of the shipped example ``name`` (a name or a unique prefix)."""
    path = pathlib.Path(name)
    if name.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ArgumentError(f"example: no such file {name!r}")
        return path
    names = example_names()
    matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
    if not matches:
        raise ArgumentError(f"example: no example is called {name!r} (or starts with it); expected one of "
                            f"{', '.join(names)}, or a path to an example script")
    if len(matches) > 1:
        raise ArgumentError(f"example: {name!r} is ambiguous: {', '.join(matches)} all start with it; "
                            "give more of the name")
    return matches[0]


def script_info(name: str) -> dict[str, str]:
    """``name``, ``usage``, ``summary`` and ``path`` of an example script (shipped, by name or unique prefix, or
    a user's file), read from its source without importing it."""
    target = _resolve(name)
    path = target if isinstance(target, pathlib.Path) else _example_path(target)
    values = {"NAME": path.stem if isinstance(target, pathlib.Path) else target, "USAGE": "", "SUMMARY": ""}
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in values and isinstance(node.value, ast.Constant):
            values[node.targets[0].id] = str(node.value.value)
    return {"name": values["NAME"], "usage": values["USAGE"], "summary": values["SUMMARY"], "path": str(path)}


def _load_file(path: pathlib.Path):
    # As ``python path/to/file.py`` does, the script's directory goes on sys.path (for its sibling modules).
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"catlass_py_script_{abs(hash(str(path.resolve()))):x}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
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
    target = _resolve(name)
    if isinstance(target, pathlib.Path):
        return _load_file(target)
    return importlib.import_module(f"{EXAMPLES_PACKAGE}.{target}")


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


def _check_options(ns: argparse.Namespace) -> None:
    """Every option checked before the run: counts, output paths, the core selection, matplotlib."""
    if ns.cores is not None and ns.cores < 1:
        raise ArgumentError(f"--cores: expected a count >= 1, got {ns.cores}")
    if ns.seeds < 0:
        raise ArgumentError(f"--seeds: expected a count >= 0, got {ns.seeds}")
    if ns.trace is not None:
        check_output_path("--trace", ns.trace)
    if ns.timeline_cores is not None:
        if ns.timeline is None:
            raise ArgumentError("--timeline-cores: selects the cores of a --timeline picture; give --timeline PATH too")
        ns.timeline_cores = parse_core_selection("--timeline-cores", ns.timeline_cores)
        if ns.cores is not None and ns.timeline_cores[-1] >= ns.cores:
            raise ArgumentError(f"--timeline-cores: the run has AI cores 0..{ns.cores - 1} (--cores {ns.cores}), "
                                f"got core {ns.timeline_cores[-1]}")
    if ns.timeline is not None:
        check_output_path("--timeline", ns.timeline)
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="catlass-py", description="CATLASS examples on a simulated Ascend AI core.")
    parser.add_argument("--version", action="version", version=f"catlass-py {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    lst = sub.add_parser("list", help="list the runnable examples")
    lst.add_argument("--json", action="store_true", help="print one JSON object (with schema_version)")
    run = sub.add_parser("run", help="run an example with CATLASS's positional arguments")
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
                     help="draw a timeline PNG (needs matplotlib: pip install 'catlass-py[plot]')")
    run.add_argument("--timeline-cores", metavar="IDS", default=None,
                     help="AI cores the timeline draws, e.g. 0-3,7 (default: every core)")
    run.add_argument("--detect-races", action="store_true",
                     help="check GM accesses of different cores for a happens-before order; report unconsumed flags")
    run.add_argument("--seeds", type=_int_option("--seeds", 0, UINT32_MAX), default=0, metavar="N",
                     help="also run N adversarial interleavings (seeds 0..N-1, switching after every flag set) "
                          "and report whether the outputs differ")
    return parser


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
    table.add_row("AI cores", str(result.cores))
    bpc = result.blocks_per_core
    if bpc:
        spread = f"min {min(bpc)}, max {max(bpc)}, total {sum(bpc)}"
        table.add_row("blocks per core", spread if len(bpc) > 12 else f"{bpc} ({spread})")
    out = result.output_dtype or "output"
    for key, value in result.details.items():
        label = f"bit-exact vs {out}(golden)" if key == "bit_exact" else key.replace("_", " ")
        table.add_row(label, _detail_value(key, value))
    table.add_row(f"max |error| vs {result.reference}", f"{result.max_abs_error:.6g} "
                  f"({result.error_count} elements outside CATLASS's tolerance)")
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
    source = "from the input cache" if result.inputs_cached else "generated"
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


def _analyse(example, ns: argparse.Namespace, progress_hook) -> ExampleResult:
    """Run the example with the analyses the options ask for and fill ``result.analysis``."""
    from catlass_py.analysis import CostModel, explore_interleavings, write_chrome_trace
    from catlass_py.arch import LaunchParams

    takes_options = "options" in inspect.signature(example.run).parameters
    if not takes_options and (ns.detect_races or ns.seeds):
        raise ArgumentError(f"--detect-races/--seeds: example {example.NAME} does not take "
                            "launch options (its run() has no 'options' parameter)")
    extra = {"options": LaunchParams(detect_races=ns.detect_races)} if takes_options else {}
    cost = CostModel(record=bool(ns.trace or ns.timeline))
    result = example.run(ns.args, cores=ns.cores, seed=ns.seed, observers=(cost,), progress=progress_hook, **extra)
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
            return example.run(ns.args, cores=ns.cores, options=opts).output_digest

        report = explore_interleavings(once, ns.seeds, detect_races=ns.detect_races, reference=result.output_digest)
        result.analysis["interleavings"] = report.summary()
    return result


_PHASES = {"host inputs": "generating host inputs", "launch": "simulating blocks", "golden": "golden and compare"}


def _run(ns: argparse.Namespace, console: Console, err: Console) -> int:
    t0 = time.perf_counter()
    _check_options(ns)
    example = load_script(ns.example)
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
    parser = _parser()
    try:
        ns, extra = parser.parse_known_args(argv)
        if extra:  # an example's own options (CATLASS's --dtype ...) go to the example with its positional arguments
            if ns.command != "run":
                parser.error(f"unrecognized arguments: {' '.join(extra)}")
            ns.args = list(ns.args) + extra
    except SystemExit as exc:  # argparse printed the usage and the error (or the help)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if ns.command == "list":
            return _list(ns)
        from rich.console import Console

        return _run(ns, Console(), Console(stderr=True, soft_wrap=True))
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


def run_example_main(name: str, argv: Sequence[str]) -> int:
    """``python examples/NN_name.py args...`` behaves like ``catlass-py run NN_name args...`` (a user's script
    passes its path, ``__file__``)."""
    return main(["run", name, *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
