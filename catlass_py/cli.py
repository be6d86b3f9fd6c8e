"""The ``catlass-py`` command: list and run the CATLASS examples on the simulated machine.

    catlass-py list
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 [--cores N] [--seed S] [--json]

``run`` prints CATLASS's verdict line ("Compare success." on stdout, or "Compare failed. Error count: N" on
stderr) and a summary table; ``--json`` prints one JSON object instead. The exit status is 0 when the
compare passes, 1 when it fails and 2 for bad arguments (CATLASS itself always exits 0).
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError, CatlassError
from catlass_py.runner import BlockProgress, ExampleResult, example_names, load_example


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="catlass-py", description="CATLASS examples on a simulated Ascend AI core.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the runnable examples")
    run = sub.add_parser("run", help="run an example with CATLASS's positional arguments")
    run.add_argument("example", help="example name (or a unique prefix, e.g. 10)")
    run.add_argument("args", nargs="*", help="the example's positional arguments (see 'catlass-py list')")
    run.add_argument("--cores", type=int, default=None, help="AI cores to launch on (default: all of the arch)")
    run.add_argument("--seed", type=int, default=None, help="interleaving seed of the simulated cores")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    return parser


def _list(console: Console) -> int:
    names = example_names()
    table = Table(title="catlass-py examples", show_lines=False)
    # Names are what users type: never truncate them, let the description wrap instead.
    table.add_column("example", no_wrap=True, min_width=max(map(len, names), default=7))
    table.add_column("arguments")
    table.add_column("what it computes")
    for name in names:
        mod = load_example(name)
        table.add_row(name, getattr(mod, "USAGE", ""), getattr(mod, "SUMMARY", ""))
    console.print(table)
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
    table.add_row("simulation time", f"{result.seconds:.3f} s")
    return table


def _run(ns, console: Console, err: Console) -> int:
    example = load_example(ns.example)
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
        result = example.run(ns.args, cores=ns.cores, seed=ns.seed, progress=progress_hook)
    finally:
        if progress is not None:
            progress.stop()
    if ns.json:
        print(json.dumps(result.to_json()))
    else:
        (console if result.passed else err).print(result.verdict, highlight=False)
        console.print(_summary(result))
    return 0 if result.passed else 1


def main(argv=None) -> int:
    """Entry point of the ``catlass-py`` console script."""
    parser = _parser()
    ns = parser.parse_args(argv)
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
    """``python examples/NN_name.py args...`` behaves like ``catlass-py run NN_name args...``."""
    return main(["run", name, *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
