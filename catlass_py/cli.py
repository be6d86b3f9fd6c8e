"""The ``catlass-py`` command: list and run the CATLASS examples (or a user's example script) on the simulated
machine.

    catlass-py list
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 [--cores N] [--seed S] [--json]
        [--trace out.json] [--timeline out.png] [--detect-races] [--seeds N]
    catlass-py run path/to/my_kernel.py ARGS [same options]

A user file defines what a shipped example does (``NAME``, ``USAGE``, ``run()``; :mod:`catlass_py.runner`) and
runs with every analysis option. :func:`load_script` is the one loader of example scripts.

``run`` prints CATLASS's verdict line ("Compare success." on stdout, or "Compare failed. Error count: N" on
stderr) and a summary table with the cost model's predicted device time, cube utilisation and per-pipe busy
fractions; ``--json`` prints one JSON object instead. ``--trace`` writes a Chrome/Perfetto trace,
``--timeline`` a PNG (matplotlib), ``--detect-races`` checks every GM access pair for a happens-before order
and reports unconsumed flag sets, ``--seeds N`` reruns under N adversarial interleavings and compares the
outputs. The exit status is 0 when the compare passes, 1 when it fails (or a race is found, or the
interleavings disagree) and 2 for bad arguments (CATLASS itself always exits 0).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import pathlib
import pkgutil
import sys

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError, CatlassError
from catlass_py.runner import BlockProgress, ExampleResult

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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="catlass-py", description="CATLASS examples on a simulated Ascend AI core.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the runnable examples")
    run = sub.add_parser("run", help="run an example with CATLASS's positional arguments")
    run.add_argument("example", help="example name (or a unique prefix, e.g. 10), or a path to an example script")
    run.add_argument("args", nargs="*", help="the example's positional arguments (see 'catlass-py list')")
    run.add_argument("--cores", type=int, default=None, help="AI cores to launch on (default: all of the arch)")
    run.add_argument("--seed", type=int, default=None, help="interleaving seed of the simulated cores")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    run.add_argument("--trace", metavar="PATH", default=None,
                     help="write a Chrome/Perfetto trace of the predicted timeline (open in ui.perfetto.dev)")
    run.add_argument("--timeline", metavar="PATH", default=None,
                     help="draw a compact timeline PNG (needs matplotlib: pip install 'catlass-py[plot]')")
    run.add_argument("--detect-races", action="store_true",
                     help="check GM accesses of different cores for a happens-before order; report unconsumed flags")
    run.add_argument("--seeds", type=int, default=0, metavar="N",
                     help="also run N adversarial interleavings (seeds 0..N-1, switching after every flag set) "
                          "and report whether the outputs differ")
    return parser


def _list(console: Console) -> int:
    # One entry per example: the command line to type, then what it computes (wraps at any width).
    for name in example_names():
        mod = load_script(name)
        console.print(f"[bold]{name}[/bold] {getattr(mod, 'USAGE', '')}", highlight=False)
        console.print(f"    {getattr(mod, 'SUMMARY', '')}", highlight=False, markup=False)
    return 0


def _summary(result: ExampleResult) -> Table:
    table = Table(title=f"{result.example}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    table.add_row("shape", ", ".join(f"{k}={v}" for k, v in result.shape.items()))
    table.add_row("AI cores", str(result.cores))
    bpc = result.blocks_per_core
    if bpc:
        spread = f"min {min(bpc)}, max {max(bpc)}, total {sum(bpc)}"
        table.add_row("blocks per core", spread if len(bpc) > 12 else f"{bpc} ({spread})")
    for key, value in result.details.items():
        table.add_row(key.replace("_", " "), str(value))
    table.add_row("max |error|", f"{result.max_abs_error:.6g}")
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
    table.add_row("host inputs", "from the input cache" if result.inputs_cached else "generated")
    table.add_row("simulation time", f"{result.seconds:.3f} s")
    return table


def _analyse(example, ns, progress_hook) -> ExampleResult:
    """Run the example with the analyses the options ask for and fill ``result.analysis``."""
    from catlass_py.analysis import CostModel, explore_interleavings, write_chrome_trace
    from catlass_py.arch import LaunchParams

    if ns.seeds < 0:
        raise ArgumentError(f"--seeds: expected a count >= 0, got {ns.seeds}")
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

        draw_timeline(cost, ns.timeline)
        result.analysis["timeline"] = {"path": ns.timeline}
    if ns.seeds:
        if result.output_digest is None:
            raise ArgumentError("--seeds: this example does not report an output digest to compare")

        def once(opts):
            return example.run(ns.args, cores=ns.cores, options=opts).output_digest

        report = explore_interleavings(once, ns.seeds, detect_races=ns.detect_races, reference=result.output_digest)
        result.analysis["interleavings"] = report.summary()
    return result


def _run(ns, console: Console, err: Console) -> int:
    example = load_script(ns.example)
    progress_hook = None
    progress = None
    if not ns.json and console.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        task = progress.add_task("blocks", total=None)
        progress_hook = BlockProgress(lambda n: progress.advance(task, n),
                                      lambda total: progress.update(task, total=total))
        progress.start()
    try:
        result = _analyse(example, ns, progress_hook)
    finally:
        if progress is not None:
            progress.stop()
    inter = result.analysis.get("interleavings") or {}
    if ns.json:
        print(json.dumps(result.to_json()))
    else:
        (console if result.passed else err).print(result.verdict, highlight=False)
        console.print(_summary(result))
        if inter.get("outputs_differ"):
            err.print("Outputs differ between interleavings: the kernel has a race.", highlight=False)
    return 0 if result.passed and not inter.get("outputs_differ") else 1


def main(argv=None) -> int:
    """Entry point of the ``catlass-py`` console script."""
    parser = _parser()
    ns, extra = parser.parse_known_args(argv)
    if extra:  # an example's own options (CATLASS's --dtype ...) go to the example with its positional arguments
        if ns.command != "run":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        ns.args = list(ns.args) + extra
    console = Console()
    err = Console(stderr=True)
    try:
        if ns.command == "list":
            return _list(console)
        return _run(ns, console, err)
    except ArgumentError as exc:
        err.print(f"error: {exc}", highlight=False, markup=False)
        return 2
    except CatlassError as exc:
        err.print(f"{type(exc).__name__}: {exc}", highlight=False, markup=False)
        return 1


def run_example_main(name: str, argv) -> int:
    """``python examples/NN_name.py args...`` behaves like ``catlass-py run NN_name args...`` (a user's script
    passes its path, ``__file__``)."""
    return main(["run", name, *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
