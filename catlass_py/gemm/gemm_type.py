"""CATLASS ``GemmType<Element, Layout, Position>``: a pure type tag for one GEMM operand."""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.errors import ConfigError
from catlass_py.numerics.dtypes import DType, get_dtype


@dataclass(frozen=True)
class GemmType:
    """Element type + layout class (+ position, 'GM' by default) of one operand.

    ``GemmType("int8", RowMajor)`` is CATLASS ``GemmType<int8_t, layout::RowMajor>``.
    """

    element: DType
    layout: type
    position: str = "GM"

    def __init__(self, element, layout, position: str = "GM"):
        try:
            element = get_dtype(element)
        except Exception as exc:  # noqa: BLE001 - report as an assembly error
            raise ConfigError(f"GemmType: {exc}") from None
        if not isinstance(layout, type):
            raise ConfigError(f"GemmType: layout must be a layout class such as RowMajor, got {layout!r}")
        object.__setattr__(self, "element", element)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "position", position)

    def __repr__(self) -> str:
        return f"GemmType({self.element.name}, {self.layout.__name__})"
