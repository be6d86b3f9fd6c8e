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
    from .complement import complement as complement, left_inverse as left_inverse, right_inverse as right_inverse
    from .composition import composition as composition
    from .divides import (
        flat_divide as flat_divide,
        logical_divide as logical_divide,
        tiled_divide as tiled_divide,
        zipped_divide as zipped_divide,
    )
    from .int_tuple import (
        add as add,
        ceil_div as ceil_div,
        compact_col_major as compact_col_major,
        compact_row_major as compact_row_major,
        compatible as compatible,
        congruent as congruent,
        crd2idx as crd2idx,
        crd2offset as crd2offset,
        dice as dice,
        elem_scale as elem_scale,
        flatten as flatten,
        has_none as has_none,
        idx2crd as idx2crd,
        inner_product as inner_product,
        is_int as is_int,
        is_tuple as is_tuple,
        make_coord as make_coord,
        make_shape as make_shape,
        make_stride as make_stride,
        prefix_product as prefix_product,
        product as product,
        round_up as round_up,
        shape_div as shape_div,
        shape_mod as shape_mod,
        slice_ as slice_,
        suffix_product as suffix_product,
        tuple_max as tuple_max,
        weakly_congruent as weakly_congruent,
    )
    from .layout import (
        Layout as Layout,
        append as append,
        coalesce as coalesce,
        cosize as cosize,
        depth as depth,
        filter_layout as filter_layout,
        filter_zeros as filter_zeros,
        get as get,
        is_layout as is_layout,
        make_layout as make_layout,
        offsets as offsets,
        origin_shape as origin_shape,
        rank as rank,
        select as select,
        shape as shape,
        size as size,
        slice_and_offset as slice_and_offset,
        slice_layout as slice_layout,
        stride as stride,
        take as take,
        zip_layouts as zip_layouts,
    )
    from .makers import (
        C0_NUM_PER_FRACTAL as C0_NUM_PER_FRACTAL,
        TAGS as TAGS,
        get_tile_layout as get_tile_layout,
        make_layout_from_tag as make_layout_from_tag,
        make_layout_l0a as make_layout_l0a,
        make_layout_l0b as make_layout_l0b,
        make_layout_l0c as make_layout_l0c,
        make_layout_tag as make_layout_tag,
    )
    from .products import (
        blocked_product as blocked_product,
        flat_product as flat_product,
        logical_product as logical_product,
        raked_product as raked_product,
        tiled_product as tiled_product,
        zipped_product as zipped_product,
    )
    from .show import show as show
    from .tensor import (
        POSITIONS as POSITIONS,
        Tensor as Tensor,
        get_tile as get_tile,
        local_tile as local_tile,
        make_tensor as make_tensor,
        make_tensor_like as make_tensor_like,
        tile_view as tile_view,
    )

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
