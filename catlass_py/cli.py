"""The ``catlass-py`` command: list, run and tune the CATLASS examples (or a user's example script) on the simulated
machine.

    catlass-py list
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 [--cores N] [--seed S] [--json]
        [--trace out.json] [--timeline out.png] [--detect-races] [--seeds N] [--predict-only]
        [--set KEY=VALUE ...] [--arch NAME]
    catlass-py run path/to/my_kernel.py ARGS [same options]
    catlass-py run NAME --help              # also lists the example's assembly settings (--set)
    catlass-py tune 00_basic_matmul 256 512 1024 [--arch NAME] [--jobs N | --ray [ADDRESS]] [--out results.csv]

A user file defines what a shipped example does (``NAME``, ``USAGE``, ``run()``; :mod:`catlass_py.runner`) and
runs with every analysis option. :func:`~catlass_py.runner.load_script` is the one loader of example scripts.

``run`` prints CATLASS's verdict line ("Compare success." on stdout, or "Compare failed. Error count: N" on
stderr) and a summary table with the cost model's predicted device time, cube utilisation and per-pipe busy
fractions; ``--json`` prints one JSON object instead. ``--trace`` writes a Chrome/Perfetto trace,
``--timeline`` a PNG (matplotlib), ``--detect-races`` checks every GM access pair for a happens-before order
and reports unconsumed flag sets, ``--seeds N`` reruns under N adversarial interleavings and compares the
outputs. ``--predict-only`` runs timing only (``LaunchParams(numerics=False)``: the same instruction stream and
prediction, no numpy work, shape-only operands; for shapes too large to simulate numerically). ``--set KEY=VALUE``
sets a keyword of the example's ``assemble()`` (tile shapes, swizzle, stages, layouts, dtypes, policy;
:mod:`catlass_py.assemblies.settings`), checked by the assembly's own rules. ``--arch NAME`` prices the run with
another arch's cost parameters (and its core count as the default ``--cores``). ``tune`` is
:mod:`catlass_py.tune`. The exit status is 0 when the compare passes (or a timing-only run ends), 1 when it fails
(or a race is found, or the interleavings disagree) and 2 for bad arguments, a bad setting included (CATLASS itself
always exits 0).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError, CatlassError
from catlass_py.runner import (  # noqa: F401 - EXAMPLES_PACKAGE, example_names, load_script: re-exported
    EXAMPLES_PACKAGE,
    BlockProgress,
    ExampleResult,
    example_names,
    load_script,
)

#: options of ``run`` / ``tune`` that take a value (to find the example's name before parsing, for --help)
_VALUE_OPTIONS = {"--cores", "--seed", "--trace", "--timeline", "--seeds", "--set", "--arch", "--jobs", "--out",
                  "--plot", "--top", "--shapes", "--limit", "--space"}


def _parser(epilogs: dict | None = None) -> argparse.ArgumentParser:
    epilogs = epilogs or {}
    parser = argparse.ArgumentParser(prog="catlass-py", description="CATLASS examples on a simulated Ascend AI core.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the runnable examples")
    run = sub.add_parser("run", help="run an example with CATLASS's positional arguments",
                         epilog=epilogs.get("run"), formatter_class=argparse.RawDescriptionHelpFormatter)
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
    _common_options(run)
    run.add_argument("--predict-only", action="store_true",
                     help="timing only: the kernel's control flow, flags and instruction stream through the cost "
                          "model without the numpy work (shape-only operands, nothing compared); the same prediction "
                          "as a full run, for shapes too large to simulate numerically")
    tune = sub.add_parser("tune", help="rank an example's legal configurations by predicted time",
                          epilog=epilogs.get("tune"), formatter_class=argparse.RawDescriptionHelpFormatter)
    tune.add_argument("example", help="example name (or a unique prefix, e.g. 00)")
    tune.add_argument("args", nargs="*", help="the example's positional arguments (one problem shape)")
    tune.add_argument("--cores", type=int, default=None, help="AI cores to launch on (default: all of the arch)")
    _common_options(tune)
    tune.add_argument("--shapes", metavar="FILE", default=None,
                      help="tune every problem shape of FILE (one line of the example's arguments per shape) "
                           "instead of ARGS")
    tune.add_argument("--space", metavar="NAME", default=None,
                      help="the search space (default: the example's; 'catlass-py tune NAME --help' lists them)")
    tune.add_argument("--limit", type=int, default=None, metavar="N",
                      help="evaluate at most N configurations per shape (the first N of the enumeration)")
    tune.add_argument("--no-prune", action="store_true",
                      help="evaluate every legal configuration (no roofline pruning)")
    tune.add_argument("--jobs", type=int, default=None, metavar="N",
                      help="local worker processes (default: the machine's CPUs)")
    tune.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                      help="run the sweep as Ray tasks: on the cluster at ADDRESS (e.g. 'auto' or ray://host:10001), "
                           "or on a local Ray instance started for the run (needs pip install 'catlass-py[distributed]')")
    tune.add_argument("--out", metavar="PATH", default=None,
                      help="write every evaluated configuration to PATH (.csv or .json), streamed")
    tune.add_argument("--plot", metavar="PATH", default=None,
                      help="draw the search (predicted time of every configuration) to a PNG (needs matplotlib)")
    tune.add_argument("--top", type=int, default=10, metavar="N", help="rows of the ranked table (default 10)")
    tune.add_argument("--no-cache", action="store_true",
                      help="evaluate everything again (the result cache is still written)")
    tune.add_argument("--no-verify", action="store_true",
                      help="do not run the best configuration with numerics against the golden")
    tune.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
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
    spaces), derived from its ``assemble()``; None when the example cannot be loaded."""
    from catlass_py.assemblies.settings import settings_of

    try:
        example = load_script(name)
    except CatlassError:
        return None
    assemble = getattr(example, "assemble", None)
    lines = []
    if assemble is None:
        lines.append(f"{example.NAME} has no assemble(): no --set settings.")
    else:
        infos = settings_of(assemble)
        lines.append(f"assembly settings of {example.NAME} (--set KEY=VALUE; {assemble.__module__}.assemble):")
        width = max((len(i.name) for i in infos), default=0)
        for info in infos:
            lines.append(f"  {info.name:<{width}}  {info.syntax:<28} default {info.show(info.default)}")
    if command == "tune":
        from catlass_py.tune.space import describe_spaces

        lines.append("")
        lines.extend(describe_spaces(example.NAME))
    return "\n".join(lines)


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
    if result.numerics:
        table.add_row("max |error|", f"{result.max_abs_error:.6g}")
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
    table.add_row("host inputs", "shape-only" if not result.numerics else
                  "from the input cache" if result.inputs_cached else "generated")
    table.add_row("simulation time", f"{result.seconds:.3f} s")
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


def _analyse(example, ns, progress_hook) -> ExampleResult:
    """Run the example with the analyses the options ask for and fill ``result.analysis``."""
    from catlass_py.analysis import CostModel, explore_interleavings, write_chrome_trace
    from catlass_py.arch import LaunchParams
    from catlass_py.arch.spec import get_arch

    if ns.seeds < 0:
        raise ArgumentError(f"--seeds: expected a count >= 0, got {ns.seeds}")
    if ns.predict_only and ns.seeds:
        raise ArgumentError("--seeds compares the outputs of interleavings; a --predict-only run computes none")
    params = inspect.signature(example.run).parameters
    takes_options = "options" in params
    if not takes_options and (ns.detect_races or ns.seeds or ns.predict_only):
        raise ArgumentError(f"--detect-races/--seeds/--predict-only: example {example.NAME} does not take "
                            "launch options (its run() has no 'options' parameter)")
    extra = {}
    if takes_options:
        extra["options"] = LaunchParams(detect_races=ns.detect_races, numerics=not ns.predict_only)
    config = example_config(example, ns.set)
    if config:
        extra["config"] = config
    arch = get_arch(ns.arch) if ns.arch else None
    cores = ns.cores if ns.cores is not None or arch is None else arch.core_num
    cost = CostModel(arch, record=bool(ns.trace or ns.timeline))
    result = example.run(ns.args, cores=cores, seed=ns.seed, observers=(cost,), progress=progress_hook, **extra)
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

        draw_timeline(cost, ns.timeline)
        result.analysis["timeline"] = {"path": ns.timeline}
    if ns.seeds:
        if result.output_digest is None:
            raise ArgumentError("--seeds: this example does not report an output digest to compare")

        def once(opts):
            return example.run(ns.args, cores=cores, options=opts, **({"config": config} if config else {}))\
                .output_digest

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
    argv = sys.argv[1:] if argv is None else list(argv)
    asked = _example_for_help(argv)
    epilogs = {}
    if asked is not None:
        text = _settings_help(*asked)
        if text:
            epilogs[asked[0]] = text
    parser = _parser(epilogs)
    ns = parser.parse_args(argv)
    console = Console()
    err = Console(stderr=True)
    try:
        if ns.command == "list":
            return _list(console)
        if ns.command == "tune":
            from catlass_py.tune.command import tune_command

            return tune_command(ns, console, err)
        return _run(ns, console, err)
    except ArgumentError as exc:  # a bad setting (SettingError) included: exit 2
        err.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 2
    except CatlassError as exc:
        err.print(f"{type(exc).__name__}: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 1


def run_example_main(name: str, argv) -> int:
    """``python examples/NN_name.py args...`` behaves like ``catlass-py run NN_name args...`` (a user's script
    passes its path, ``__file__``)."""
    return main(["run", name, *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
