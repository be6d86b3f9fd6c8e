"""The tuner's on-disk result cache: one SQLite file, ``tune/results.sqlite`` in the input cache's directory
(:func:`catlass_py.data.cache_dir`: ``CATLASS_PY_CACHE_DIR``, else ``$XDG_CACHE_HOME/catlass_py`` or
``~/.cache/catlass_py``; ``CATLASS_PY_CACHE=0`` turns it off; ``CATLASS_PY_CACHE_MAX_BYTES`` bounds it, least
recently used rows first).

A record is keyed by everything its prediction depends on (:func:`task_key`): the example (and, for a user's
script, its text), its arguments, the arch (its whole spec, cost parameters included), the core count, the
configuration and the *model version* (:func:`model_version`: a digest of every source file of ``catlass_py``
and of the shipped examples, so that any change to the simulator, the kernels or the cost model invalidates what
it would change). A re-run of a sweep therefore evaluates nothing it has seen. Only the main process of a sweep
reads and writes the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import pathlib
import sqlite3
import time
from functools import lru_cache

from catlass_py.data import cache_dir, cache_max_bytes
from catlass_py.runner import EXAMPLES_PACKAGE
from catlass_py.tune.evaluate import Task

_FORMAT = 1  # layout of a record


@lru_cache(maxsize=1)
def model_version() -> str:
    """A digest of the source of ``catlass_py`` (every ``.py`` file, the shipped examples included): what a
    prediction depends on besides its inputs."""
    import catlass_py

    root = pathlib.Path(catlass_py.__file__).resolve().parent
    folders = [root]
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)  # the shipped examples (examples/ in the repository)
    if spec is not None and spec.submodule_search_locations:
        folders.extend(pathlib.Path(p).resolve() for p in spec.submodule_search_locations
                       if pathlib.Path(p).resolve() != root)
    h = hashlib.sha256(f"format {_FORMAT}".encode())
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:24]


@lru_cache(maxsize=64)
def _script_digest(example: str) -> str:
    path = pathlib.Path(example)
    if example.endswith(".py") and path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return ""


@lru_cache(maxsize=16)
def _arch_digest(arch: str) -> str:
    from catlass_py.arch.spec import get_arch

    return hashlib.sha256(get_arch(arch).model_dump_json().encode()).hexdigest()[:16]


def task_key(task: Task) -> str:
    """The cache key of ``task`` (a hex digest)."""
    key = {"example": task.example, "script": _script_digest(task.example), "args": list(task.args),
           "config": [list(kv) for kv in task.config], "arch": task.arch, "arch_spec": _arch_digest(task.arch),
           "cores": task.cores, "model": model_version()}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


class ResultCache:
    """Records of evaluated tasks on disk (module doc). ``directory=None`` uses :func:`cache_dir`; a cache that is
    turned off (``CATLASS_PY_CACHE=0``) or cannot be opened stores nothing and finds nothing."""

    def __init__(self, directory: str | os.PathLike | None = None, *, read: bool = True):
        base = cache_dir() if directory is None else pathlib.Path(directory)
        self.read = read
        self.path = None if base is None else pathlib.Path(base) / "tune" / "results.sqlite"
        self._db = None
        self.hits = self.stores = 0
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(self.path), timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, record TEXT NOT NULL, "
                                 "used REAL NOT NULL)")
                self._db.commit()
            except (OSError, sqlite3.Error):
                self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get_many(self, keys: list[str]) -> dict[str, dict]:
        """The cached records of ``keys`` (those found)."""
        if self._db is None or not self.read or not keys:
            return {}
        found: dict[str, dict] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self._db.execute(f"SELECT key, record FROM results WHERE key IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            for k, rec in rows:
                found[k] = json.loads(rec)
        if found:
            now = time.time()
            self._db.executemany("UPDATE results SET used = ? WHERE key = ?", [(now, k) for k in found])
            self._db.commit()
        self.hits += len(found)
        return found

    def put_many(self, items: list[tuple[str, dict]]) -> None:
        """Store ``(key, record)`` pairs (then keep the file under :func:`cache_max_bytes`)."""
        if self._db is None or not items:
            return
        now = time.time()
        self._db.executemany("INSERT OR REPLACE INTO results (key, record, used) VALUES (?, ?, ?)",
                             [(k, json.dumps(r, sort_keys=True), now) for k, r in items])
        self._db.commit()
        self.stores += len(items)
        self._bound()

    def _bound(self) -> None:
        try:
            size = self.path.stat().st_size
        except OSError:
            return
        limit = cache_max_bytes()
        if size <= limit:
            return
        (count,) = self._db.execute("SELECT COUNT(*) FROM results").fetchone()
        drop = max(1, count - int(count * 0.9 * limit / size))
        self._db.execute("DELETE FROM results WHERE key IN (SELECT key FROM results ORDER BY used LIMIT ?)", (drop,))
        self._db.commit()
        self._db.execute("VACUUM")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["ResultCache", "model_version", "task_key"]
