"""``catlass-py tune NAME ARGS``: sweep an example's search space, print the ranked table, write the rows, draw the
search, and run the best configuration with numerics against the golden.

    catlass-py tune 00_basic_matmul 256 512 1024                    # the default space, local process pool
    catlass-py tune 00 256 512 1024 --space quick --out top.csv --plot search.png
    catlass-py tune 08 16 512 1024 2048 --ray                       # Ray tasks on a local Ray instance
    catlass-py tune 10 --shapes moe_shapes.txt --ray auto --no-verify  # many shapes on an existing cluster

Exit status: 0 when the best configuration(s) passed the golden compare (or ``--no-verify``), 1 when one failed, 2
for bad arguments.
"""

from __future__ import annotations

import json
import math

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError
from catlass_py.tune.cache import ResultCache
from catlass_py.tune.evaluate import example_arch
from catlass_py.tune.space import space_of
from catlass_py.tune.sweep import (
    LocalExecutor,
    Ranking,
    RayExecutor,
    RowWriter,
    SerialExecutor,
    SweepStats,
    draw_search,
    sweep,
)


def read_shapes(path: str, *, numbered: bool = False) -> list:
    """The shapes of a ``--shapes`` file: one line of positional arguments each (blank lines and ``#`` comments
    skipped); with ``numbered``, ``(line number, arguments)`` pairs. A file that cannot be read is an
    :class:`ArgumentError` naming the option."""
    shapes = []
    try:
        with open(path) as f:
            lines = list(f)
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ArgumentError(f"--shapes: cannot read {path!r}: {why}") from None
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if line:
            words = line.replace(",", " ").split()
            shapes.append((number, words) if numbered else words)
    if not shapes:
        raise ArgumentError(f"--shapes: {path} lists no shape")
    return shapes


def check_shape(example, args) -> None:
    """Parse one problem's arguments as the example's ``run()`` will, before the sweep: with its ``parse_args``
    when it has one, else as CATLASS's positional integers of its ``USAGE``; a bad shape is the example's
    :class:`ArgumentError`."""
    from catlass_py.runner import parse_positional

    parse = getattr(example, "parse_args", None)
    usage = getattr(example, "USAGE", None)
    if callable(parse):
        parse(list(args))
    elif isinstance(usage, str) and usage and all(w.strip("[]").isidentifier() for w in usage.split()):
        parse_positional(example.NAME, usage, list(args))


def make_executor(ray_address, jobs):
    """The executor of a sweep: Ray (``ray_address`` not None; '' starts a local instance), a local pool, or this
    process for one job."""
    if ray_address is not None:
        return RayExecutor(ray_address or None, num_cpus=jobs)
    if jobs == 1:
        return SerialExecutor()
    return LocalExecutor(jobs)


def _ranked_table(example_name: str, shape, rows, columns: list[str], stats_line: str,
                  fixed: dict[str, str] | None = None) -> Table:
    """The ranked rows of one shape; the ``fixed`` settings (the same in every row) go in the title, not in
    columns, so that the table fits a narrow terminal."""
    columns = [c for c in columns if c not in (fixed or {})]
    with_set = "".join(f" {k}={v}" for k, v in (fixed or {}).items())
    title = f"{example_name} {' '.join(shape)}{with_set}: best predicted configurations"
    table = Table(title=title, caption=stats_line)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("us", justify="right", no_wrap=True)
    for c in columns:
        table.add_column(c, no_wrap=True)
    table.add_column("bound by", overflow="fold")
    table.add_column("cube", justify="right", no_wrap=True)
    table.add_column("from", no_wrap=True)
    for i, row in enumerate(rows, 1):
        table.add_row(str(i), f"{row.time_us:.3f}", *(row.config.get(c, "") for c in columns),
                      str(row.record.get("bound_by")).replace("gm_bandwidth", "GM bw"),
                      f"{row.record.get('cube_utilisation') or 0:.0%}", row.source)
    return table


def tune_command(ns, console: Console, err: Console) -> int:
    """The ``tune`` subcommand (module doc)."""
    from catlass_py.arch.spec import get_arch
    from catlass_py.assemblies.settings import parse_settings
    from catlass_py.runner import check_launch, load_script

    example = load_script(ns.example)
    if getattr(example, "assemble", None) is None:
        raise ArgumentError(f"tune: example {example.NAME} defines no assemble() to configure")
    space = space_of(example.NAME, ns.space)
    if ns.shapes and ns.args:
        raise ArgumentError("tune: give the problem either as ARGS or with --shapes, not both")
    if ns.shapes:
        shapes = []
        for number, args in read_shapes(ns.shapes, numbered=True):
            try:
                check_shape(example, args)
            except ArgumentError as exc:
                raise ArgumentError(f"--shapes: {ns.shapes} line {number}: {exc}") from None
            shapes.append(args)
    else:
        shapes = [list(ns.args)]
        check_shape(example, ns.args)
    arch_name = ns.arch or _launch_arch_name(example)
    spec = get_arch(arch_name)
    cores = ns.cores if ns.cores is not None else spec.core_num
    check_launch(example, spec if ns.arch else None, cores, cores_given=ns.cores is not None)
    fixed_pairs = dict(p.partition("=")[::2] for p in ns.set)
    parse_settings(example.assemble, fixed_pairs, example_arch(example))  # a bad --set fails before the sweep
    if ns.top < 1:
        raise ArgumentError(f"--top: expected at least 1 row, got {ns.top}")
    columns = [c for c in space.varying()] + [k for k in fixed_pairs if k not in space.varying()]
    ranking = Ranking(ns.top, keep_points=bool(ns.plot))
    stats = SweepStats()
    writer = RowWriter(ns.out, columns) if ns.out else None
    cache = ResultCache(read=not ns.no_cache)
    executor = make_executor(ns.ray, ns.jobs)
    progress_bar = None
    first_error = None
    try:
        if not ns.json and console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress_bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=console, transient=True)
            progress_bar.start()
        state = {"task": None, "done": -1}

        def progress(done, total):
            if progress_bar is None:
                return
            if state["task"] is None or done < state["done"]:  # a new shape
                state["task"] = progress_bar.add_task("configurations", total=total)
            state["done"] = done
            progress_bar.update(state["task"], completed=done, total=total)

        for row in sweep(example, shapes, space, arch=arch_name, cores=cores, executor=executor, cache=cache,
                         fixed=fixed_pairs, prune=not ns.no_prune, top=ns.top, limit=ns.limit, stats=stats,
                         progress=progress, example_id=ns.example if ns.example.endswith(".py") else example.NAME):
            if first_error is None and row.record.get("status") == "error":
                first_error = row.record.get("error")
            ranking.add(row)
            if writer is not None:
                writer.write(row)
    finally:
        if progress_bar is not None:
            progress_bar.stop()
        if writer is not None:
            writer.close()
        executor.close()
        cache.close()
    failed = f", {stats.errors} failed in the simulator (not cached)" if stats.errors else ""
    stats_line = (f"{stats.candidates} candidates, {stats.illegal} rejected by the assembly, {stats.evaluated} "
                  f"predicted ({stats.throughput:.1f}/s), {stats.cached} from the cache, {stats.pruned} pruned by "
                  f"the roofline{failed}; {arch_name}, {cores} cores, space '{space.name}'")
    verify = {}
    if not ns.no_verify:
        verify = _verify(example, ranking, cores, arch_name)
    if ns.plot:
        draw_search(ranking, ns.plot, title=example.NAME)
    if ns.json:
        print(json.dumps(_summary_json(example.NAME, ranking, stats, columns, verify, arch_name, cores, space.name)))
    else:
        for shape in ranking.shapes():
            console.print(_ranked_table(example.NAME, shape, ranking.table(shape), columns, stats_line, fixed_pairs))
        if not ranking.shapes():
            why = f"; the first failure: {first_error}" if first_error else ""
            err.print(f"no configuration could be predicted ({stats_line}){why}", highlight=False, markup=False)
        elif first_error:
            err.print(f"warning: {stats.errors} configuration(s) failed in the simulator and are not ranked (the rows "
                      f"with status=error in --out); the first failure: {first_error}", highlight=False, markup=False)
        for shape, (passed, verdict, key) in verify.items():
            (console if passed else err).print(f"best of {' '.join(shape)} ({key}), run with numerics: {verdict}",
                                               highlight=False, markup=False)
        if ns.out:
            console.print(f"rows: {ns.out}", highlight=False)
        if ns.plot:
            console.print(f"picture: {ns.plot}", highlight=False)
    if not ranking.shapes():
        return 1
    return 0 if all(passed for passed, _, _ in verify.values()) else 1


def _launch_arch_name(example) -> str:
    arch = example_arch(example)
    return getattr(arch, "name", None) or "AtlasA2"


def _verify(example, ranking: Ranking, cores: int, arch_name: str) -> dict:
    """Run each shape's best configuration with numerics and CATLASS's compare: ``{shape: (passed, verdict, key)}``."""
    from catlass_py.assemblies.settings import parse_settings

    out = {}
    for shape in ranking.shapes():
        best = ranking.best(shape)
        config = parse_settings(example.assemble, best.config, example_arch(example))
        result = example.run(list(shape), cores=min(cores, _launch_cores(example, cores)), config=config)
        out[shape] = (result.passed, result.verdict, best.key)
    return out


def _launch_cores(example, cores: int) -> int:
    arch = example_arch(example)
    return getattr(arch, "core_num", cores)


def _summary_json(name, ranking, stats, columns, verify, arch_name, cores, space) -> dict:
    shapes = []
    for shape in ranking.shapes():
        rows = [row.as_dict(columns) for row in ranking.table(shape)]
        entry = {"args": list(shape), "top": rows}
        if shape in verify:
            entry["verify"] = {"passed": verify[shape][0], "verdict": verify[shape][1]}
        shapes.append(entry)
    thr = stats.throughput
    return {"example": name, "arch": arch_name, "cores": cores, "space": space, "shapes": shapes,
            "stats": {"candidates": stats.candidates, "illegal": stats.illegal, "evaluated": stats.evaluated,
                      "cached": stats.cached, "pruned": stats.pruned, "errors": stats.errors,
                      "seconds": round(stats.seconds, 3),
                      "configs_per_second": None if math.isnan(thr) else round(thr, 3)}}


__all__ = ["make_executor", "read_shapes", "tune_command"]
