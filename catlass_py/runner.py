"""What runnable examples share: the result record, CATLASS-style argument parsing and a progress observer.

An example module (``examples/NN_name.py``, importable as ``catlass_py.examples.NN_name``) defines:

* ``USAGE``: the positional arguments, as CATLASS's usage line (e.g. ``"problem_count m n k [device_id]"``);
* ``SUMMARY``: one line for ``catlass-py list``;
* ``assemble(...)``: the kernel, built step by step like the C++ example;
* ``run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult``:
  ``observers`` join the launch (cost model, trace, ...), ``options`` is the launch's
  :class:`~catlass_py.arch.LaunchParams` (``detect_races``, ``preempt_on_set``); the result carries a digest
  of the output (``output_digest``) and the :class:`~catlass_py.arch.LaunchResult` (``launch_result``).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from catlass_py.arch.events import MarkerEvent, Observer
from catlass_py.arch.pipes import CoreType
from catlass_py.errors import ArgumentError


@dataclass
class ExampleResult:
    """Outcome of one example run: CATLASS's compare verdict plus what the simulation saw."""

    example: str
    passed: bool
    error_count: int
    max_abs_error: float
    seconds: float
    blocks_per_core: list[int]
    shape: dict[str, int]
    cores: int
    details: dict[str, Any] = field(default_factory=dict)
    output_digest: str | None = None
    """:func:`output_digest` of the operator's output: equal digests, equal bytes (used by ``--seeds``)."""
    analysis: dict[str, Any] = field(default_factory=dict)
    """What the analyses found (filled by the CLI): 'cost' (predicted time, utilisation), 'races',
    'interleavings', 'trace'."""
    launch_result: Any = field(default=None, repr=False, compare=False)
    """The :class:`~catlass_py.arch.LaunchResult` of the run (not part of the JSON)."""

    @property
    def verdict(self) -> str:
        """CATLASS's line: 'Compare success.' or 'Compare failed. Error count: N'."""
        return "Compare success." if self.passed else f"Compare failed. Error count: {self.error_count}"

    def to_json(self) -> dict:
        """The record as a JSON-ready dict (what ``catlass-py run --json`` prints)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "launch_result"}
        d = copy.deepcopy(d)
        d["verdict"] = self.verdict
        return d


def output_digest(array) -> str:
    """A short digest of an array's dtype, shape and bytes (16 hex digits of SHA-256)."""
    arr = np.ascontiguousarray(array)
    h = hashlib.sha256(f"{arr.dtype}|{arr.shape}|".encode())
    h.update(arr.view(np.uint8).reshape(-1).data if arr.size else b"")
    return h.hexdigest()[:16]


def parse_positional(name: str, usage: str, argv: list[str]) -> list[int]:
    """CATLASS's option parsing: the required positional ints of ``usage`` (optional ones in brackets, e.g.
    ``[device_id]``), read with ``atoi`` semantics except that garbage is an error here."""
    words = usage.split()
    required = [w for w in words if not w.startswith("[")]
    if not len(required) <= len(argv) <= len(words):
        raise ArgumentError(f"usage: {name} {usage}")
    out = []
    for label, text in zip(words, argv):
        try:
            out.append(int(text, 10))
        except ValueError:
            raise ArgumentError(f"{label.strip('[]')}: expected an integer, got {text!r} (usage: {name} {usage})") from None
    return out


def example_names() -> list[str]:
    """Names of the runnable examples, sorted."""
    import catlass_py.examples as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def load_example(name: str):
    """Import example ``name`` (or a unique prefix such as ``10``)."""
    names = example_names()
    matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
    if len(matches) != 1:
        hint = f"one of {', '.join(names)}" if not matches else f"ambiguous: {', '.join(matches)}"
        raise ArgumentError(f"example: expected {hint}; got {name!r}")
    return importlib.import_module(f"catlass_py.examples.{matches[0]}")


class BlockProgress(Observer):
    """Progress hook of a run: the example calls ``set_total(blocks)`` before launching; every output block a
    cube core starts (``ctx.mark('block')``) then calls ``advance(1)``."""

    interests = frozenset({"marker"})

    def __init__(self, advance, set_total=None):
        self.advance = advance
        self._set_total = set_total

    def set_total(self, total: int) -> None:
        if self._set_total is not None:
            self._set_total(total)

    def on_event(self, e) -> None:
        if isinstance(e, MarkerEvent) and e.kind == "block" and e.core.type is CoreType.AIC:
            self.advance(1)
