"""The keywords of an assembly as command-line settings: ``catlass-py run NAME ARGS --set l1_tile=64x128x128
--set swizzle=3,1``.

Every ``assemble(arch, **keywords)`` of :mod:`catlass_py.assemblies` annotates its keywords with the types
below (``typing.Annotated`` values carrying a :class:`Kind`: how a value is written, parsed and shown);
:func:`settings_of` reads them, with the defaults, from the signature, so the list ``catlass-py run NAME --help``
prints and what ``--set`` accepts come from the assembly itself, never from a hand-kept table. A keyword without
such an annotation is parsed after its default's type (int, bool, str). Parsing only turns text into values;
whether a value is legal is decided by the assembly's own checks (:class:`~catlass_py.errors.ConfigError`).

==================  =======================================================  ========================
type                written as                                               value
==================  =======================================================  ========================
:data:`TileShape`   ``MxNxK`` (``128x256x64``)                               :class:`GemmShape`
:data:`Swizzle`     ``OFFSET,DIRECTION`` (``3,1``)                           ``(offset, direction)``
:data:`Count`       an int (``2``)                                           int
:data:`Flag`        ``true``/``false`` (``1``/``0``, ``on``/``off``)         bool
:data:`Element`     a dtype name or alias (``float16``, ``fp16``, ``bf16``)  registry name
:data:`Layout`      ``RowMajor``/``row``, ``ColumnMajor``/``column``, ...    layout class
:data:`Policy`      ``Name`` or ``Name(key=value, ...)``                     dispatch policy instance
:data:`TileOp`      a tile op class name (``TileElemWiseSilu``)              the class
:data:`MatrixTile`  ``RxC`` (``32x256``)                                     ``(rows, cols)``
:data:`Scheduler`   ``Name<OFFSET,DIRECTION>``                               block scheduler instance
==================  =======================================================  ========================

Each may be ``X | None``-typed with a None default: ``auto`` (or ``none``) then selects the assembly's own
choice (usually the C++'s runtime branch).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable

from catlass_py.arch.spec import ArchSpec
from catlass_py.errors import ArgumentError, CatlassError
from catlass_py.gemm import GemmShape
from catlass_py.gemm import dispatch_policy as _policies
from catlass_py.layout import ColumnMajor, RowMajor, nN, nZ, zN, zZ
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile import vector_elementwise


@dataclass(frozen=True)
class Kind:
    """How an assembly keyword is written on the command line: ``syntax`` (for help texts), ``parse(text, arch)``
    and ``show(value)`` (the inverse: ``parse(show(v)) == v``)."""

    syntax: str
    parse: Callable[[str, ArchSpec], Any]
    show: Callable[[Any], str] = str


def _parse_ints(text: str, count: int | None, what: str) -> tuple[int, ...]:
    parts = [p for p in text.replace("x", ",").replace("X", ",").split(",") if p.strip() != ""]
    try:
        values = tuple(int(p.strip(), 10) for p in parts)
    except ValueError:
        raise ValueError(f"expected {what}") from None
    if count is not None and len(values) != count:
        raise ValueError(f"expected {what}")
    return values


def _parse_shape(text: str, arch) -> GemmShape:
    return GemmShape(*_parse_ints(text, 3, "MxNxK, e.g. 128x256x64"))


def _show_shape(v) -> str:
    return "x".join(str(int(x)) for x in v)


def _parse_swizzle(text: str, arch) -> tuple[int, int]:
    return _parse_ints(text, 2, "OFFSET,DIRECTION, e.g. 3,1")


def _show_pair(v) -> str:
    return ",".join(str(int(x)) for x in v)


def _parse_int(text: str, arch) -> int:
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise ValueError("expected an integer") from None


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _parse_bool(text: str, arch) -> bool:
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise ValueError("expected true or false")


def _show_bool(v) -> str:
    return "true" if v else "false"


def _parse_dtype(text: str, arch) -> str:
    try:
        return get_dtype(text.strip()).name
    except CatlassError:
        raise ValueError("expected a dtype name such as float16 (fp16), bfloat16 (bf16), int8") from None


_FRACTAL = {"zN": zN, "nZ": nZ, "zZ": zZ, "nN": nN}  # case matters: zN and nZ differ
_LAYOUTS = {"rowmajor": RowMajor, "row": RowMajor, "row_major": RowMajor, "columnmajor": ColumnMajor,
            "column": ColumnMajor, "col": ColumnMajor, "column_major": ColumnMajor}


def _parse_layout(text: str, arch) -> type:
    t = text.strip()
    layout = _FRACTAL.get(t) or _LAYOUTS.get(t.lower())
    if layout is None:
        raise ValueError("expected a layout: RowMajor (row), ColumnMajor (column), zN, nZ, zZ, nN")
    return layout


def _show_class(v) -> str:
    return v.__name__


def _policy_classes() -> dict[str, type]:
    return {name: cls for name, cls in vars(_policies).items()
            if isinstance(cls, type) and issubclass(cls, _policies.MmadBase) and cls is not _policies.MmadBase}


def _policy_fields(cls) -> list[str]:
    """The fields a dispatch policy's constructor takes (not ``arch``; not its class constants such as ``STAGES``)."""
    return [f.name for f in dataclasses.fields(cls) if f.init and f.name != "arch"] \
        if dataclasses.is_dataclass(cls) else []


def _parse_value(text: str):
    t = text.strip()
    if t.lower() in _TRUE[:1] + _FALSE[:1]:
        return t.lower() == "true"
    try:
        return int(t, 10)
    except ValueError:
        raise ValueError(f"policy field value {t!r}: expected an int or true/false") from None


def _parse_policy(text: str, arch):
    t = text.strip()
    name, _, rest = t.partition("(")
    classes = _policy_classes()
    cls = classes.get(name.strip())
    if cls is None:
        raise ValueError(f"expected a dispatch policy: one of {', '.join(sorted(classes))}, optionally with "
                         "fields, e.g. MmadAtlasA2PreloadAsync(l1_stages=2,l0a_stages=4)")
    fields = {}
    if rest:
        if not rest.endswith(")"):
            raise ValueError("expected Name(key=value, ...)")
        for item in filter(None, (p.strip() for p in rest[:-1].split(","))):
            key, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"policy field {item!r}: expected key=value")
            fields[key.strip()] = _parse_value(value)
    known = _policy_fields(cls)
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {', '.join(unknown)} (fields: {', '.join(known) or 'none'})")
    return cls(**fields, arch=arch)


def _show_policy(v) -> str:
    fields = _policy_fields(type(v))
    inner = ",".join(f"{f}={_show_bool(getattr(v, f)) if isinstance(getattr(v, f), bool) else getattr(v, f)}"
                     for f in fields)
    return f"{type(v).__name__}({inner})" if inner else type(v).__name__


def _parse_tile_op(text: str, arch) -> type:
    cls = getattr(vector_elementwise, text.strip(), None)
    base = vector_elementwise.TileElemWise
    if not (isinstance(cls, type) and issubclass(cls, base) and cls is not base):
        names = sorted(n for n in vector_elementwise.__all__ if n.startswith("TileElemWise") and n != base.__name__)
        raise ValueError(f"expected an element-wise tile op: {', '.join(names)}")
    return cls


def _parse_matrix(text: str, arch) -> tuple[int, int]:
    return _parse_ints(text, 2, "RxC, e.g. 32x256")


def _scheduler_classes() -> dict[str, type]:
    from catlass_py.gemm.block import GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad

    return {c.__name__: c for c in (GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad)}


def _parse_scheduler(text: str, arch):
    t = text.strip()
    name, _, rest = t.partition("<")
    classes = _scheduler_classes()
    cls = classes.get(name.strip())
    if cls is None or not rest.endswith(">"):
        raise ValueError(f"expected a block scheduler Name<OFFSET,DIRECTION>: {', '.join(sorted(classes))}, e.g. "
                         "GemmIdentityBlockSwizzleL1FullLoad<1,0>")
    return cls(*_parse_ints(rest[:-1], 2, "Name<OFFSET,DIRECTION>"))


def _show_scheduler(v) -> str:
    return f"{type(v).__name__}<{v.swizzle_offset},{v.swizzle_direction}>"


def _parse_str(text: str, arch) -> str:
    return text.strip()


SHAPE = Kind("MxNxK", _parse_shape, _show_shape)
SWIZZLE = Kind("OFFSET,DIRECTION", _parse_swizzle, _show_pair)
INT = Kind("int", _parse_int, str)
BOOL = Kind("true|false", _parse_bool, _show_bool)
DTYPE = Kind("dtype", _parse_dtype, str)
LAYOUT = Kind("RowMajor|ColumnMajor|zN|nZ", _parse_layout, _show_class)
POLICY = Kind("Policy(field=value,...)", _parse_policy, _show_policy)
TILE_OP = Kind("TileElemWise*", _parse_tile_op, _show_class)
STR = Kind("text", _parse_str, str)
MATRIX = Kind("RxC", _parse_matrix, _show_shape)
SCHEDULER = Kind("Name<OFFSET,DIRECTION>", _parse_scheduler, _show_scheduler)


def choice(*values: str) -> Kind:
    """A :class:`Kind` of one of ``values`` (strings)."""
    def parse(text: str, arch) -> str:
        t = text.strip()
        if t not in values:
            raise ValueError(f"expected one of {', '.join(values)}")
        return t
    return Kind("|".join(values), parse, str)


def mapping(table: dict[str, Any]) -> Kind:
    """A :class:`Kind` whose text is one of ``table``'s keys and whose value is the key's entry."""
    def parse(text: str, arch):
        t = text.strip()
        if t not in table:
            raise ValueError(f"expected one of {', '.join(table)}")
        return table[t]

    def show(v) -> str:
        for k, x in table.items():
            if x == v:
                return k
        return repr(v)
    return Kind("|".join(table), parse, show)


TileShape = Annotated[GemmShape, SHAPE]
"""An L1 or L0 tile shape (``GemmShape<M, N, K>``), written ``MxNxK``."""
Swizzle = Annotated[tuple, SWIZZLE]
"""A block swizzle's ``<SwizzleOffset, SwizzleDirection>``, written ``OFFSET,DIRECTION``."""
Count = Annotated[int, INT]
"""A stage count or length."""
Flag = Annotated[bool, BOOL]
"""A template flag (``ENABLE_UNIT_FLAG``, ...)."""
Element = Annotated[str, DTYPE]
"""An element type (a dtype registry name)."""
Layout = Annotated[type, LAYOUT]
"""An operand layout class."""
Policy = Annotated[object, POLICY]
"""A BlockMmad dispatch policy (``Gemm::MmadAtlasA2*``)."""
TileOp = Annotated[type, TILE_OP]
"""An element-wise epilogue tile op class."""
MatrixTile = Annotated[tuple, MATRIX]
"""A vector tile shape (``MatrixShape<ROW, COLUMN>``, e.g. an epilogue's compute tile), written ``RxC``."""
Scheduler = Annotated[object, SCHEDULER]
"""A block scheduler (``Gemm::Block::GemmIdentityBlockSwizzle*<OFFSET, DIRECTION>``)."""


@dataclass(frozen=True)
class SettingInfo:
    """One settable keyword of an assembly: its name, :class:`Kind`, default and whether ``auto`` (None) is
    allowed."""

    name: str
    kind: Kind
    default: Any
    optional: bool

    def parse(self, text: str, arch) -> Any:
        """The value of ``text`` (:class:`ArgumentError` naming the keyword and the syntax when it is not one)."""
        if self.optional and text.strip().lower() in ("auto", "none"):
            return None
        try:
            return self.kind.parse(text, arch)
        except (ValueError, TypeError, CatlassError) as exc:
            raise ArgumentError(f"--set {self.name}={text}: {exc}") from None

    def show(self, value) -> str:
        """``value`` as it is written on the command line."""
        return "auto" if value is None else self.kind.show(value)

    @property
    def syntax(self) -> str:
        return self.kind.syntax + ("|auto" if self.optional else "")


def _kind_of(hint, default) -> tuple[Kind, bool]:
    optional = False
    origin = typing.get_origin(hint)
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        hint = args[0] if len(args) == 1 else hint
    if typing.get_origin(hint) is Annotated:
        for meta in typing.get_args(hint)[1:]:
            if isinstance(meta, Kind):
                return meta, optional
    if isinstance(default, bool):
        return BOOL, optional
    if isinstance(default, int):
        return INT, optional
    if isinstance(default, str):
        return STR, optional
    if isinstance(default, tuple) and len(default) == 2 and all(isinstance(x, int) for x in default):
        return SWIZZLE, optional
    raise ArgumentError(f"cannot derive a command-line syntax for keyword of type {hint!r} (default {default!r})")


def settings_of(assemble) -> list[SettingInfo]:
    """The settable keywords of ``assemble(arch, **keywords)``, from its signature and annotations (``arch``
    itself is chosen with ``--arch``), in signature order."""
    try:
        hints = typing.get_type_hints(assemble, include_extras=True)
    except Exception:  # noqa: BLE001 - an unresolvable annotation: fall back to the defaults' types
        hints = {}
    out = []
    for name, p in inspect.signature(assemble).parameters.items():
        if name == "arch" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is p.empty:
            continue
        kind, optional = _kind_of(hints.get(name, Any), p.default)
        out.append(SettingInfo(name, kind, p.default, optional or p.default is None))
    return out


def parse_settings(assemble, pairs, arch) -> dict[str, Any]:
    """``KEY=VALUE`` strings (``--set`` options, or a dict of texts) as assembly keywords for ``arch``: an
    :class:`ArgumentError` names an unknown key (listing the known ones), a value that is not of its kind, or a
    key set twice to different values (which one was meant is not for the tool to guess)."""
    known = {s.name: s for s in settings_of(assemble)}
    items = pairs.items() if isinstance(pairs, dict) else (_split(p) for p in pairs)
    out: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for key, text in items:
        info = known.get(key)
        if info is None:
            raise ArgumentError(f"--set {key}: not a keyword of {assemble.__module__}.assemble (settable: "
                                f"{', '.join(known) or 'none'})")
        value = info.parse(str(text), arch)
        if key in out and out[key] != value:
            raise ArgumentError(f"--set {key}: set twice, to {texts[key]!r} and {str(text)!r}")
        out[key], texts[key] = value, str(text)
    return out


def show_settings(assemble, values: dict[str, Any]) -> dict[str, str]:
    """``values`` (assembly keywords) as their command-line texts (:meth:`SettingInfo.show`)."""
    known = {s.name: s for s in settings_of(assemble)}
    return {k: (known[k].show(v) if k in known else repr(v)) for k, v in values.items()}


def _split(pair: str) -> tuple[str, str]:
    key, eq, value = str(pair).partition("=")
    if not eq or not key.strip():
        raise ArgumentError(f"--set {pair!r}: expected KEY=VALUE, e.g. l1_tile=64x128x128")
    return key.strip(), value


__all__ = [
    "BOOL", "DTYPE", "INT", "LAYOUT", "MATRIX", "POLICY", "SCHEDULER", "SHAPE", "STR", "SWIZZLE", "TILE_OP",
    "Count", "Element", "Flag", "Kind", "Layout", "MatrixTile", "Policy", "Scheduler", "SettingInfo", "Swizzle",
    "TileOp", "TileShape",
    "choice", "mapping", "parse_settings", "settings_of", "show_settings",
]
