"""Adversarial scheduling: run one launch under several core interleavings and compare the outputs.

A correctly synchronised kernel produces the same bytes under every interleaving; differing outputs are a
symptom of a race even without the race detector. Each run uses ``LaunchParams(seed=s, preempt_on_set=True)``:
the scheduler picks the next core at random among the runnable ones and also switches after every
cross-core flag set, which explores far more orders than switching only when a core blocks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from catlass_py.arch.params import LaunchParams
from catlass_py.errors import ArgumentError
from catlass_py.integers import is_int


def output_digest(array) -> str:
    """A short digest of an array's dtype, shape and bytes (16 hex digits of SHA-256): equal digests, equal
    outputs."""
    arr = np.ascontiguousarray(array)
    h = hashlib.sha256(f"{arr.dtype}|{arr.shape}|".encode())
    h.update(arr.view(np.uint8).reshape(-1).data if arr.size else b"")
    return h.hexdigest()[:16]


@dataclass
class InterleavingReport:
    """Digest of the output under each seed, and the reference digest (None: the first seed's)."""

    seeds: list[int]
    digests: list[str]
    reference: str | None = None
    groups: dict[str, list[int]] = field(default_factory=dict)

    @property
    def distinct(self) -> int:
        """Number of different outputs seen (including the reference)."""
        return len(set(self.digests) | ({self.reference} if self.reference else set()))

    @property
    def differ(self) -> bool:
        return self.distinct > 1

    def summary(self) -> dict:
        return {"seeds": len(self.seeds), "distinct_outputs": self.distinct, "outputs_differ": self.differ,
                "differing_seeds": [s for s, d in zip(self.seeds, self.digests)
                                    if d != (self.reference or self.digests[0])]}


def explore_interleavings(run_once: Callable[[LaunchParams], "np.ndarray | str"], seeds: "int | Iterable[int]", *,
                          preempt_on_set: bool = True, detect_races: bool = False,
                          reference: "np.ndarray | str | None" = None) -> InterleavingReport:
    """Call ``run_once(options)`` once per seed (``seeds``: a count N for 0..N-1, or the seeds) and compare
    what it returns (an output array, or a digest from :func:`output_digest`).

    ``reference``: the output (or digest) of a normal run to compare against as well.
    """
    if is_int(seeds):
        if seeds < 1:
            raise ArgumentError(f"seeds: expected at least 1 interleaving, got {seeds}")
        seeds = range(seeds)
    seeds = [int(s) for s in seeds]
    ref = output_digest(reference) if isinstance(reference, np.ndarray) else reference
    digests: list[str] = []
    groups: dict[str, list[int]] = {}
    for s in seeds:
        out = run_once(LaunchParams(seed=s, preempt_on_set=preempt_on_set, detect_races=detect_races))
        d = out if isinstance(out, str) else output_digest(out)
        digests.append(d)
        groups.setdefault(d, []).append(s)
    return InterleavingReport(seeds, digests, ref, groups)
