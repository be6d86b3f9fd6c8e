"""One configuration's prediction: the example run timing-only (``LaunchParams(numerics=False)``) with the
configuration's assembly keywords and a cost model, turned into a plain record (picklable, JSON-ready).

:func:`evaluate_batch` is what the tuner's workers run (local processes or Ray tasks): it takes and returns only
plain data (example name, arguments, configuration texts, arch name, core count), so any executor can carry it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from catlass_py.errors import ArgumentError, CatlassError, SettingError

_SCRIPTS: dict = {}


@dataclass(frozen=True)
class Task:
    """One evaluation: ``example`` (a shipped example's name or a script path) run with ``args`` on ``cores``
    cores, its ``assemble()`` keywords ``config`` (texts), priced for ``arch`` (a name)."""

    example: str
    args: tuple[str, ...]
    config: tuple[tuple[str, str], ...]
    arch: str
    cores: int


def _script(name: str):
    mod = _SCRIPTS.get(name)
    if mod is None:
        from catlass_py.runner import load_script

        mod = _SCRIPTS[name] = load_script(name)
    return mod


def example_arch(example) -> object:
    """The arch an example's assembly defaults to (what its ``--set`` texts are parsed for)."""
    import inspect

    p = inspect.signature(example.assemble).parameters.get("arch")
    return None if p is None else p.default


def evaluate(task: Task) -> dict:
    """The record of ``task``: ``status`` ('ok', 'illegal' for a configuration the assembly rejects, 'error' for
    one that fails later), the predicted time (``time_us``, ``cycles``), what bounds it (``bound_by``), the cube
    utilisation, the blocks, and the wall time of the simulation (``sim_seconds``)."""
    from catlass_py.analysis import CostModel
    from catlass_py.arch import LaunchParams
    from catlass_py.arch.spec import get_arch
    from catlass_py.assemblies.settings import parse_settings

    t0 = time.perf_counter()
    record = {"status": "ok", "time_us": None, "cycles": None, "bound_by": None, "cube_utilisation": None,
              "blocks": None, "error": None}
    try:
        example = _script(task.example)
        config = parse_settings(example.assemble, dict(task.config), example_arch(example))
        cost = CostModel(get_arch(task.arch))
        result = example.run(list(task.args), cores=task.cores, observers=(cost,),
                             options=LaunchParams(numerics=False), config=config)
        rep = cost.report
        record.update(time_us=rep.microseconds, cycles=rep.cycles, bound_by=rep.bound,
                      cube_utilisation=rep.cube_utilisation, blocks=sum(result.blocks_per_core))
    except SettingError as exc:
        record.update(status="illegal", error=str(exc).splitlines()[0])
    except ArgumentError as exc:
        record.update(status="illegal" if "CanImplement" in str(exc) else "error", error=str(exc).splitlines()[0])
    except CatlassError as exc:
        record.update(status="error", error=f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
    record["sim_seconds"] = time.perf_counter() - t0
    return record


def evaluate_batch(tasks: list[Task]) -> list[dict]:
    """:func:`evaluate` of every task, in order (what one worker job runs)."""
    return [evaluate(t) for t in tasks]


__all__ = ["Task", "evaluate", "evaluate_batch", "example_arch"]
