"""The sweep: every legal configuration of a search space, for one or many problem shapes, predicted timing-only
on an executor (in-process, a local process pool, or Ray tasks), through the result cache, streamed.

:func:`sweep` yields one :class:`Row` per candidate configuration and shape, in a deterministic order that does not
depend on the executor: candidates go out in *waves* of a fixed size (ordered by their roofline bound when the
space has one, else in enumeration order), each wave is split into batches for the workers, and a wave's rows are
yielded in candidate order once all of it is back. Memory stays bounded by one shape's candidate list and one
wave; a :class:`Ranking` keeps the best ``top`` rows per shape, and :class:`RowWriter` streams every row to CSV or
JSON.

Pruning (spaces with a roofline): before each wave, a candidate whose lower bound
(:func:`catlass_py.tune.space.roofline_us`) exceeds the ``top``-th best prediction so far cannot enter the top
``top`` and is not evaluated (its row says ``pruned``). The ranked table is therefore exactly the one an exhaustive
sweep gives. If a prediction ever comes out below its bound (a cost model whose peak rates the bound does not know),
pruning stops for that shape and the pruned candidates are evaluated after all.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import heapq
import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Iterator

from catlass_py.errors import ArgumentError
from catlass_py.tune.cache import ResultCache, task_key
from catlass_py.tune.evaluate import Task, evaluate_batch, example_arch
from catlass_py.tune.space import SearchSpace, config_key, is_mix, legal_configs, roofline_us

#: fields of a row's prediction (the record of :func:`catlass_py.tune.evaluate.evaluate`)
RECORD_FIELDS = ("status", "time_us", "cycles", "bound_by", "cube_utilisation", "blocks", "error")


@dataclass
class Row:
    """One configuration of one shape: the ``config`` (keyword -> text), its prediction (``record``), the roofline
    bound (us, or None) and where the prediction came from (``source``: 'run', 'cache' or 'pruned')."""

    shape: tuple[str, ...]
    config: dict[str, str]
    record: dict
    bound_us: float | None
    source: str

    @property
    def key(self) -> str:
        return config_key(self.config)

    @property
    def time_us(self) -> float | None:
        return self.record.get("time_us")

    @property
    def ok(self) -> bool:
        return self.record.get("status") == "ok"

    def as_dict(self, columns: list[str]) -> dict:
        d = {"shape": " ".join(self.shape), "config": self.key}
        d.update({k: self.config.get(k, "") for k in columns})
        d.update({f: self.record.get(f) for f in RECORD_FIELDS})
        d["roofline_us"] = self.bound_us
        d["source"] = self.source
        return d


# -- executors ------------------------------------------------------------------------------------------


class SerialExecutor:
    """Runs batches in this process (tests, one-core machines)."""

    workers = 1

    def run(self, batches: list[list[Task]]) -> list[list[dict]]:
        return [evaluate_batch(b) for b in batches]

    def close(self) -> None:
        pass


class LocalExecutor:
    """A pool of ``jobs`` worker processes (default: the machine's CPUs), started fresh ('spawn': a fork would copy
    the caller's other threads' locks, e.g. BLAS's or a progress display's, in whatever state they were)."""

    def __init__(self, jobs: int | None = None):
        import concurrent.futures
        import multiprocessing

        self.workers = jobs or os.cpu_count() or 1
        if self.workers < 1:
            raise ArgumentError(f"--jobs: expected at least 1 worker, got {jobs}")
        self._pool = concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    def run(self, batches: list[list[Task]]) -> list[list[dict]]:
        return list(self._pool.map(evaluate_batch, batches))

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class RayExecutor:
    """Batches as Ray tasks: on the cluster at ``address`` ('auto', ``ray://host:port``, ...), on a Ray instance this
    process already started (``ray.init(...)``), or on a local one started for the sweep (``address`` None or '')
    and shut down by :meth:`close`. Needs the ``distributed`` extra (``pip install 'catlass-py[distributed]'``) and
    catlass_py importable on the cluster's workers."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise ArgumentError("--ray: Ray is not installed (pip install 'catlass-py[distributed]')") from None
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            try:
                if address:
                    _check_reachable(address)
                    ray.init(address=address, **kwargs)
                else:
                    ray.init(num_cpus=num_cpus, **kwargs)
            except (ConnectionError, TimeoutError, RuntimeError) as exc:
                where = f"the cluster at {address}" if address else "a local Ray instance"
                text = (str(exc).splitlines() or [type(exc).__name__])[0]
                raise ArgumentError(f"--ray: cannot start on {where}: {text}") from None
            self._owned = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(evaluate_batch)

    def run(self, batches: list[list[Task]]) -> list[list[dict]]:
        refs = [self._remote.remote(b) for b in batches]
        return self._ray.get(refs)

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()
            self._owned = False


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a Ray address ``host:port`` or ``ray://host:port`` that nothing answers within ``timeout`` seconds
    (``ray.init`` would retry for minutes): an :class:`ArgumentError`. Other forms ('auto', ...) are Ray's to
    resolve."""
    import socket

    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ArgumentError(f"--ray {address}: nothing answers at {host}:{port} ({exc.strerror or exc})") from None


# -- the sweep ------------------------------------------------------------------------------------------


@dataclass
class SweepStats:
    """Counts of a sweep (over all shapes) and its wall time."""

    candidates: int = 0
    illegal: int = 0
    evaluated: int = 0
    cached: int = 0
    pruned: int = 0
    errors: int = 0
    pruning_disabled: int = 0
    seconds: float = 0.0
    rejected: list = field(default_factory=list, repr=False)

    @property
    def throughput(self) -> float:
        """Configurations evaluated (not from the cache) per second of sweep time."""
        return self.evaluated / self.seconds if self.seconds > 0 else math.nan


def sweep(example, shapes, space: SearchSpace, *, arch, cores: int, executor, cache: ResultCache | None = None,
          fixed: dict[str, str] | None = None, prune: bool = True, top: int = 10, limit: int | None = None,
          wave: int = 32, batch: int = 4, stats: SweepStats | None = None, progress=None,
          example_id: str | None = None) -> Iterator[Row]:
    """Yield a :class:`Row` for every legal configuration of ``space`` and every shape (module doc).

    ``example`` is a loaded example script (:func:`catlass_py.runner.load_script`); ``shapes`` lists its
    positional arguments per problem (strings); ``arch`` is an arch name; ``fixed`` keywords join every
    configuration (one the space varies narrows it to the fixed value); ``limit`` keeps the first N legal candidates
    per shape; ``progress(n_done, n_total)`` is called as rows come in; ``example_id`` is what the workers load
    (default: the example's NAME; a user's script passes its path)."""
    from catlass_py.arch.spec import get_arch

    stats = stats if stats is not None else SweepStats()
    fixed = dict(fixed or {})
    spec = get_arch(arch)
    settings_arch = example_arch(example)
    if wave < 1 or batch < 1:
        raise ArgumentError(f"wave and batch must be >= 1, got {wave}, {batch}")
    t0 = time.perf_counter()
    try:
        # the legal candidates (each with the fixed settings) depend on the assembly alone: found once for every shape
        rejected: list = []
        legal = legal_configs(example.assemble, space, settings_arch, fixed, rejected)
        if limit is not None:
            legal = (c for _, c in zip(range(limit), legal))
        candidates = list(legal)
        # a MIX kernel's roofline includes its launch head
        mix = bool(prune and space.tiles is not None and candidates
                   and is_mix(example.assemble, candidates[0], settings_arch))
        for shape in shapes:
            shape = tuple(str(a) for a in shape)
            problem = space.problem_for(example, shape) if prune and space.tiles is not None else None
            if problem is not None and mix:
                problem = dataclasses.replace(problem, mix=True)
            stats.candidates += len(candidates) + len(rejected)
            stats.illegal += len(rejected)
            stats.rejected.extend((shape, c, r) for c, r in rejected[:100])
            yield from _sweep_shape(example_id or example.NAME, shape, candidates, problem, space, spec, cores,
                                    executor, cache, top, wave, batch, stats, progress)
    finally:
        stats.seconds += time.perf_counter() - t0


def _sweep_shape(example_id, shape, candidates, problem, space, spec, cores, executor, cache, top, wave, batch,
                 stats, progress) -> Iterator[Row]:
    l1_key = space.tiles.l1 if space.tiles is not None else None
    bounds = [roofline_us(problem, c[l1_key], spec, cores) if problem is not None else None for c in candidates]
    order = sorted(range(len(candidates)), key=lambda i: (bounds[i], i)) if problem is not None \
        else list(range(len(candidates)))
    best: list[float] = []  # max-heap (negated) of the best `top` predictions of this shape
    prune = problem is not None
    queue = collections.deque(order)
    pruned: list[int] = []
    done = 0
    while queue:
        take: list[int] = []
        while queue and len(take) < wave:
            i = queue.popleft()
            if prune and len(best) >= top and bounds[i] > -best[0]:
                pruned.append(i)
                continue
            take.append(i)
        if not take:
            break
        tasks = [Task(example_id, shape, tuple(candidates[i].items()), spec.name, cores) for i in take]
        keys = [task_key(t) for t in tasks]
        cached = cache.get_many(keys) if cache is not None else {}
        missing = [j for j, k in enumerate(keys) if k not in cached]
        results: dict[int, dict] = {}
        if missing:
            batches = [[tasks[j] for j in missing[s:s + batch]] for s in range(0, len(missing), batch)]
            flat = [r for out in executor.run(batches) for r in out]
            for j, rec in zip(missing, flat):
                results[j] = rec
            if cache is not None:
                cache.put_many([(keys[j], results[j]) for j in missing if results[j]["status"] != "error"])
        stats.evaluated += len(missing)
        stats.cached += len(take) - len(missing)
        violated = False
        for j, i in enumerate(take):
            rec = cached.get(keys[j]) or results[j]
            row = Row(shape, candidates[i], rec, bounds[i], "cache" if keys[j] in cached else "run")
            if rec["status"] == "error":
                stats.errors += 1
            if row.ok:
                t = row.time_us
                if bounds[i] is not None and t < bounds[i] * (1 - 1e-9):
                    violated = True
                if len(best) < top:
                    heapq.heappush(best, -t)
                elif t < -best[0]:
                    heapq.heapreplace(best, -t)
            done += 1
            yield row
        if progress is not None:
            progress(done, len(candidates))
        if violated and prune:
            prune = False
            stats.pruning_disabled += 1
            queue.extend(pruned)
            pruned = []
    for i in pruned:
        stats.pruned += 1
        yield Row(shape, candidates[i], {"status": "pruned"}, bounds[i], "pruned")
    if progress is not None:
        progress(len(candidates), len(candidates))


# -- results --------------------------------------------------------------------------------------------


class Ranking:
    """The best ``top`` rows of every shape (by predicted time, ties by configuration text), from a stream of
    rows, in bounded memory; plus the (time, label) points of every row for a picture of the search."""

    def __init__(self, top: int = 10, *, keep_points: bool = True):
        self.top = top
        self._heaps: dict[tuple, list] = {}
        self.points: dict[tuple, list] = {}
        self.keep_points = keep_points

    def add(self, row: Row) -> None:
        if self.keep_points:
            self.points.setdefault(row.shape, []).append((row.time_us, row.bound_us, row.source, row.key))
        if not row.ok:
            return
        heap = self._heaps.setdefault(row.shape, [])
        item = (-row.time_us, _Rev(row.key), row)
        if len(heap) < self.top:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)

    def shapes(self) -> list[tuple]:
        return list(self._heaps)

    def table(self, shape) -> list[Row]:
        """The best rows of ``shape``, best first (ties: configuration text)."""
        return [item[2] for item in sorted(self._heaps.get(tuple(shape), []), key=lambda it: (-it[0], it[1].s))]

    def best(self, shape) -> Row | None:
        rows = self.table(shape)
        return rows[0] if rows else None


class _Rev:
    """Orders strings in reverse (so that the heap evicts the lexicographically larger of equal times)."""

    __slots__ = ("s",)

    def __init__(self, s: str):
        self.s = s

    def __lt__(self, other) -> bool:
        return self.s > other.s

    def __eq__(self, other) -> bool:
        return self.s == other.s


class RowWriter:
    """Streams rows to ``path``: CSV (``.csv``) or a JSON array (``.json``, one row per line)."""

    def __init__(self, path: str, columns: list[str]):
        self.path = str(path)
        self.columns = list(columns)
        self.kind = "json" if self.path.lower().endswith(".json") else "csv"
        if not self.path.lower().endswith((".json", ".csv")):
            raise ArgumentError(f"--out: expected a .csv or .json path, got {path!r}")
        self._f = open(self.path, "w", newline="")
        self._first = True
        fields = ["shape", "config", *self.columns, *RECORD_FIELDS, "roofline_us", "source"]
        if self.kind == "csv":
            self._csv = csv.DictWriter(self._f, fieldnames=fields)
            self._csv.writeheader()
        else:
            self._f.write("[\n")

    def write(self, row: Row) -> None:
        d = row.as_dict(self.columns)
        if self.kind == "csv":
            self._csv.writerow(d)
        else:
            self._f.write(("" if self._first else ",\n") + json.dumps(d, sort_keys=False))
        self._first = False

    def close(self) -> None:
        if self._f is not None:
            if self.kind == "json":
                self._f.write("\n]\n")
            self._f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def draw_search(ranking: Ranking, path: str, *, title: str = "") -> None:
    """A picture of the search (needs matplotlib): per shape, every configuration's predicted time in rank order
    (and the roofline bounds of pruned ones), the best marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ArgumentError("--plot needs matplotlib: pip install 'catlass-py[plot]'") from None
    shapes = list(ranking.points)
    fig, axes = plt.subplots(len(shapes) or 1, 1, figsize=(8, 3.2 * max(1, len(shapes))), squeeze=False)
    for ax, shape in zip(axes[:, 0], shapes):
        pts = ranking.points[shape]
        ok = sorted(t for t, _, src, _ in pts if t is not None)
        ax.plot(range(1, len(ok) + 1), ok, ".", ms=3, label=f"predicted ({len(ok)} configurations)")
        pruned = sorted(b for t, b, src, _ in pts if src == "pruned" and b is not None)
        if pruned:
            ax.plot(range(len(ok) + 1, len(ok) + len(pruned) + 1), pruned, "x", ms=3, color="grey",
                    label=f"pruned: roofline bound ({len(pruned)})")
        if ok:
            best = ranking.best(shape)
            ax.plot([1], [ok[0]], "o", color="red", label=f"best {ok[0]:.2f} us: {best.key if best else ''}")
        ax.set_xlabel("configuration, by predicted time")
        ax.set_ylabel("predicted device time (us)")
        ax.set_title(f"{title} {' '.join(shape)}".strip(), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["LocalExecutor", "RECORD_FIELDS", "Ranking", "RayExecutor", "Row", "RowWriter", "SerialExecutor",
           "SweepStats", "draw_search", "sweep"]
