"""The published CATLASS timings the cost model is calibrated against (``data/catlass_published_timings.csv``).

Each row is one timing CATLASS prints in its repository (hicann/catlass at commit 0dfcf9d), with the file and
lines it comes from (``source``), the device set-up read from there (``setup``) and the catlass_py
:class:`~catlass_py.arch.ArchSpec` it is simulated on (``arch``). ``role`` says how the calibration uses it:
``fit`` (the cost parameters marked "fitted" were chosen on these), ``held-out`` (predicted only) or
``no-kernel`` (the example is not built in catlass_py).
"""

from __future__ import annotations

import csv
import io
import pathlib
from dataclasses import dataclass

from catlass_py.errors import ArgumentError

DATA_FILE = pathlib.Path(__file__).with_name("data") / "catlass_published_timings.csv"

DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "int8": "int8"}
LAYOUTS = {"Row": "row", "Col": "column", "zN": "zN", "nZ": "nZ"}
ROLES = ("fit", "held-out", "no-kernel")


def _triple(text: str) -> tuple[int, int, int] | None:
    return tuple(int(v) for v in text.split("x")) if text else None


@dataclass(frozen=True)
class PublishedPoint:
    """One published timing and the set-up to simulate it with."""

    id: str
    device: str
    arch: str
    example: str
    shape: tuple[int, int, int]
    dtype: str | None
    layout_a: str | None
    layout_b: str | None
    l1_tile: tuple[int, int, int] | None
    l0_tile: tuple[int, int, int] | None
    swizzle: tuple[int, int] | None
    cores: int | None
    published_us: float
    source: str
    setup: str
    note: str
    role: str
    slow: bool

    @property
    def modelled(self) -> bool:
        """Whether catlass_py builds the point's kernel (and so predicts it)."""
        return self.role != "no-kernel"

    @property
    def label(self) -> str:
        """A short description: the example, the shape and any non-default tiles or swizzle."""
        m, n, k = self.shape
        parts = [self.example, f"{m}x{n}x{k}"]
        if self.l1_tile:
            parts.append("L1 " + "x".join(map(str, self.l1_tile)))
        if self.swizzle:
            parts.append(f"<{self.swizzle[0]},{self.swizzle[1]}>")
        if self.layout_b in ("row", "zN") and self.example.startswith("21"):
            parts.append(f"B {self.layout_b}")
        return " ".join(parts)


def _point(row: dict) -> PublishedPoint:
    layouts = [LAYOUTS.get(v.strip(), v.strip()) for v in row["layouts"].split(",")] if row["layouts"] else [None, None]
    if row["role"] not in ROLES:
        raise ArgumentError(f"{row['id']}: role must be one of {ROLES}, got {row['role']!r}")
    shape = row["shape"].split(" ")[0]
    return PublishedPoint(
        id=row["id"], device=row["device"], arch=row["arch"], example=row["example"].split(" ")[0],
        shape=_triple(shape), dtype=DTYPES.get(row["dtype"], row["dtype"] or None), layout_a=layouts[0],
        layout_b=layouts[1], l1_tile=_triple(row["l1_tile"]), l0_tile=_triple(row["l0_tile"]),
        swizzle=tuple(int(v) for v in row["swizzle"].split(",")) if row["swizzle"] else None,
        cores=int(row["cores"]) if row["cores"] else None, published_us=float(row["published_us"]),
        source=row["source"], setup=row["setup"], note=row["note"], role=row["role"], slow=row["slow"] == "1",
    )


def load_points(path: str | pathlib.Path | None = None) -> list[PublishedPoint]:
    """Every row of the published-timings file (default :data:`DATA_FILE`), in file order."""
    text = pathlib.Path(path or DATA_FILE).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return [_point(row) for row in csv.DictReader(io.StringIO("\n".join(lines)))]


def select(points, ids=None, *, slow: bool = True, modelled: bool = True,
           label: str = "points") -> list[PublishedPoint]:
    """The points named by ``ids`` (any iterable of ids; None: all), without the slow ones unless ``slow``,
    only those whose kernel exists when ``modelled``. An unknown id is an :class:`ArgumentError` naming ``label``."""
    points = list(points)
    if ids is not None:
        ids = list(ids)
        known = {p.id for p in points}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ArgumentError(f"{label}: unknown id(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        points = [p for p in points if p.id in set(ids)]
    return [p for p in points if (slow or not p.slow) and (p.modelled or not modelled)]


__all__ = ["DATA_FILE", "DTYPES", "LAYOUTS", "ROLES", "PublishedPoint", "load_points", "select"]
