"""TLA: CATLASS's CuTe-style layout algebra (``include/tla`` of hicann/catlass) and its tensors.

CATLASS 2.x describes every operand as a TLA layout — a hierarchical shape and stride, a port of CuTe's
``Layout`` (``include/cute`` of NVIDIA/cutlass) — plus an origin shape holding the logical extent. This
package is that layer in Python, independent of the simulator:

* :mod:`~catlass_py.tla.int_tuple` — hierarchical int tuples (``flatten``, ``product``, ``prefix_product``,
  ``shape_div``, ``crd2idx``/``idx2crd``, ...).
* :mod:`~catlass_py.tla.layout` — :class:`Layout`, :func:`make_layout`, accessors (``size``, ``cosize``,
  ``rank``, ``depth``, ``get``, ``select``), :func:`coalesce`, :func:`filter_layout`, slicing.
* :mod:`~catlass_py.tla.composition`, :mod:`~catlass_py.tla.complement`, :mod:`~catlass_py.tla.divides`,
  :mod:`~catlass_py.tla.products` — CuTe's algebra (TLA ports the layout but not the algebra).
* :mod:`~catlass_py.tla.makers` — TLA's Ascend makers (``make_layout_tag`` = ``MakeLayout<Element,
  LayoutTag>``, ``make_layout_l0c``, ``get_tile_layout``) and :func:`make_layout_from_tag`, which turns a
  1.x ``catlass_py.layout`` layout into the TLA layout with the same offsets.
* :mod:`~catlass_py.tla.tensor` — :class:`Tensor` over a numpy buffer, ``get_tile``, ``tile_view``,
  ``make_tensor_like``, CuTe's ``local_tile``.
* :mod:`~catlass_py.tla.show` — the offset grid of a layout.

Names follow TLA/CuTe in snake_case; every function's docstring names its TLA and CuTe counterparts.
``None`` plays CuTe's and TLA's underscore ``_``. ``docs/tla.md`` has the name map and examples.
"""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from .complement import complement, left_inverse, right_inverse
    from .composition import composition
    from .divides import flat_divide, logical_divide, tiled_divide, zipped_divide
    from .int_tuple import (
        add,
        ceil_div,
        compact_col_major,
        compact_row_major,
        compatible,
        congruent,
        crd2idx,
        crd2offset,
        dice,
        elem_scale,
        flatten,
        has_none,
        idx2crd,
        inner_product,
        is_int,
        is_tuple,
        make_coord,
        make_shape,
        make_stride,
        prefix_product,
        product,
        round_up,
        shape_div,
        shape_mod,
        slice_,
        suffix_product,
        tuple_max,
        weakly_congruent,
    )
    from .layout import (
        Layout,
        append,
        coalesce,
        cosize,
        depth,
        filter_layout,
        filter_zeros,
        get,
        is_layout,
        make_layout,
        offsets,
        origin_shape,
        rank,
        select,
        shape,
        size,
        slice_and_offset,
        slice_layout,
        stride,
        take,
        zip_layouts,
    )
    from .makers import (
        C0_NUM_PER_FRACTAL,
        TAGS,
        get_tile_layout,
        make_layout_from_tag,
        make_layout_l0a,
        make_layout_l0b,
        make_layout_l0c,
        make_layout_tag,
    )
    from .products import blocked_product, flat_product, logical_product, raked_product, tiled_product, zipped_product
    from .show import show
    from .tensor import POSITIONS, Tensor, get_tile, local_tile, make_tensor, make_tensor_like, tile_view

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
