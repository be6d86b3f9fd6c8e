"""``BlockMmadSparseTla<SparseMatmulMultiBlockOnKAxis, L1TileShape, L0TileShape, ElementA, ElementB, ElementC,
ElementBias, TileCopy>`` (CATLASS ``gemm/block/block_mmad_sparse_tla.hpp``): the block of the 4:2 sparse matmul
(example 41).

Synchronous: one call computes one ``m x n`` block of C over the whole K and stores it. Per K tile of ``L1_K`` the
L1 stage (A zN, the dense B nZ, its index nZ; two stages, A at 0, B after A's stages, the index after B's) is
loaded, then per ``L0_K`` A and B go to their L0 ping-pong buffer (``L0A_SIZE / 2`` and ``L0B_SIZE / 2`` apart;
``LoadDataWithSparse`` for B) and one ``MmadWithSparse`` accumulates. Events as CATLASS: ``MTE1_MTE2`` ids 0-1 (A),
2-3 (B), 4-5 (index); ``MTE2_MTE1`` the same ids, all three waited right after the loads; ``M_MTE1`` 0-1 (L0A;
L0B's 2-3 are set at construction and waited at the destructor only, the L0A ids guarding both buffers);
``MTE1_M`` on the L0A id; ``FIX_M`` / ``M_FIX`` id 0 around the accumulator. The loads of a K tile go to stage
``next`` (the first K tile of the first block to stage 1).
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.capabilities import SPARSE_TLA_CALL, BlockMmadCapabilities
from catlass_py.gemm.coord import GemmShape, ceil_div
from catlass_py.gemm.dispatch_policy import SparseMatmulMultiBlockOnKAxis
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.copy_sparse_tla import INDEX_LAYOUT_DTYPE, SparseTileCopyTla, TileMmadSparse
from catlass_py.tile.copy_tla import make_tensor
from catlass_py.tla import get_tile, make_layout_l0c, make_layout_tag

#: dense B holds k/2 rows, the index k/8 bytes per column (DENSE_MATRIX_B_OFFSET, INDEX_MATRIX_OFFSET)
DENSE_MATRIX_B_OFFSET, INDEX_MATRIX_OFFSET = 2, 8
#: a Mmad whose (m / 16) * (n / 16) is below this is followed by a PIPE_M barrier (LIMIT_MNSIZE)
LIMIT_MNSIZE = 10


class BlockMmadSparseTla:
    """Assembled CATLASS ``BlockMmadSparseTla`` (see the module). ``tile_copy`` is a
    :class:`~catlass_py.tile.copy_sparse_tla.SparseTileCopyTla` (default: int8 A RowMajor, int8 B ColumnMajor, int32
    C RowMajor).

    Checks, CATLASS's ``static_assert``\\ s: ``(L1A_TILE_SIZE + L1B_TILE_SIZE + L1B_IDX_TILE_SIZE) * STAGES <=
    L1_SIZE``, ``L0A_TILE_SIZE <= L0A_SIZE`` (B, C likewise), ``L1_M == L0_M && L1_N == L0_N``, ``L0_K <= L1_K``,
    int8 x int8 -> int32, B ColumnMajor. And what the block's addressing assumes without checking (stated as this
    simulator's rules): an L0A / L0B tile fits its ping-pong half (``L0A_SIZE / STAGES``), ``L0_K`` a multiple of
    64 (a K step of L0 is whole 32-row fractals of the dense B: ``LoadDataWithSparse`` starts at ``kIndex * L0_K / 2
    * N`` bytes), ``L1_K`` a multiple of ``L0_K`` (the tail K step is taken from K mod ``L0_K``)."""

    CAPABILITIES = BlockMmadCapabilities(SPARSE_TLA_CALL)
    name = "BlockMmadSparseTla"

    def __init__(self, policy, l1_tile_shape, l0_tile_shape, element_a="int8", element_b="int8",
                 element_c="int32", element_bias=None, tile_copy=None, tile_mmad=None):
        if not isinstance(policy, SparseMatmulMultiBlockOnKAxis):
            raise ConfigError(f"BlockMmadSparseTla: the dispatch policy must be SparseMatmulMultiBlockOnKAxis, got "
                              f"{policy!r}")
        self.policy = policy
        self.arch = arch = policy.arch
        what = self.what = "BlockMmadSparseTla<SparseMatmulMultiBlockOnKAxis>"
        self.l1_tile_shape = l1 = GemmShape(*l1_tile_shape).check(f"{what}: L1TileShape")
        self.l0_tile_shape = l0 = GemmShape(*l0_tile_shape).check(f"{what}: L0TileShape")
        ea, eb, ec = get_dtype(element_a), get_dtype(element_b), get_dtype(element_c)
        if (ea.name, eb.name, ec.name) != ("int8", "int8", "int32"):
            raise ConfigError(f"{what}: Unsupported dtype (ElementA, ElementB int8_t and ElementC int32_t only), got "
                              f"{ea}, {eb}, {ec}")
        if element_bias is not None:
            raise ConfigError(f"{what}: ElementBias must be void (the block has no bias path)")
        if tile_copy is None:
            tile_copy = SparseTileCopyTla(arch, ea, "RowMajor", eb, "ColumnMajor", ec, "RowMajor")
        if not isinstance(tile_copy, SparseTileCopyTla):
            raise ConfigError(f"{what}: TileCopy must be a SparseTileCopyTla, got {tile_copy!r}")
        if tile_copy.arch != arch:
            raise ConfigError(f"{what}: the TileCopy bundle is for {tile_copy.arch.name}, the policy for {arch.name}")
        self.tile_copy = tile_copy
        self.tile_mmad = tile_mmad if tile_mmad is not None else TileMmadSparse(arch)
        self.element_a, self.element_b, self.element_c = ea, eb, ec
        self.element_accumulator = tile_copy.element_accumulator
        self.layout_tag_a, self.layout_tag_b, self.layout_tag_c = "RowMajor", "ColumnMajor", "RowMajor"
        stages = policy.STAGES
        self.l1a_tile_size = ea.nbytes(l1.m * l1.k)
        self.l1b_tile_size = eb.nbytes(l1.n * l1.k) // DENSE_MATRIX_B_OFFSET
        self.l1b_idx_tile_size = eb.nbytes(l1.n * l1.k) // INDEX_MATRIX_OFFSET
        self.l0a_tile_size = ea.nbytes(l0.m * l0.k)
        self.l0b_tile_size = eb.nbytes(l0.k * l0.n)
        self.l0c_tile_size = self.element_accumulator.nbytes(l0.m * l0.n)
        self.l0a_pingpong = arch.l0a_size // stages
        self.l0b_pingpong = arch.l0b_size // stages
        l1_need = (self.l1a_tile_size + self.l1b_tile_size + self.l1b_idx_tile_size) * stages
        if l1_need > arch.l1_size:
            raise ConfigError(f"{what}: L1TileShape exceeding the L1 space! ((L1A_TILE_SIZE + L1B_TILE_SIZE + "
                              f"L1B_IDX_TILE_SIZE) * STAGES <= L1_SIZE: {l1_need} > {arch.l1_size})")
        for label, need, have in (("L0A", self.l0a_tile_size, arch.l0a_size), ("L0B", self.l0b_tile_size,
                                  arch.l0b_size), ("L0C", self.l0c_tile_size, arch.l0c_size)):
            if need > have:
                raise ConfigError(f"{what}: L0TileShape exceeding the {label} space! ({label}_TILE_SIZE <= "
                                  f"{label}_SIZE: {need} > {have})")
        if not (l1.m == l0.m and l1.n == l0.n):
            raise ConfigError(f"{what}: The situation where the basic blocks of L1 and L0 differ on the m and n axes "
                              f"is not supported yet (L1_M == L0_M && L1_N == L0_N): L1 {tuple(l1)}, L0 {tuple(l0)}")
        if l0.k > l1.k:
            raise ConfigError(f"{what}: L0TileShape::K cannot exceed L1TileShape::K (L0_K <= L1_K): {l0.k} > {l1.k}")
        # what the addressing assumes (not checked by CATLASS)
        for label, need, have in (("L0A", self.l0a_tile_size, self.l0a_pingpong),
                                  ("L0B", self.l0b_tile_size, self.l0b_pingpong)):
            if need > have:
                raise ConfigError(f"{what}: an {label} tile of {need} bytes does not fit its ping-pong half "
                                  f"({label}_SIZE / STAGES = {have}); the two stages would overlap (not checked by "
                                  f"CATLASS)")
        if l0.k % 64:
            raise ConfigError(f"{what}: L0TileShape::K must be a multiple of 64: a K step of L0 must start at a whole "
                              f"32-row fractal of the dense B (LoadDataWithSparse reads from kIndex * L0_K / 2 * N; "
                              f"not checked by CATLASS), got {l0.k}")
        if l1.k % l0.k:
            raise ConfigError(f"{what}: L1TileShape::K must be a multiple of L0TileShape::K: the last K step of L0 is "
                              f"taken from K mod L0_K (not checked by CATLASS), got {l1.k} and {l0.k}")
        if l1.m % 16 or l1.n % 16:
            raise ConfigError(f"{what}: L1TileShape::M and ::N must be multiples of 16 (whole fractals of C; not "
                              f"checked by CATLASS), got {l1.m} x {l1.n}")

    def __call__(self, resource) -> "_SparseTlaBlock":
        return _SparseTlaBlock(self, resource)

    def __repr__(self) -> str:
        return f"{self.name}({self.policy!r}, L1 {tuple(self.l1_tile_shape)}, L0 {tuple(self.l0_tile_shape)})"


class _SparseTlaBlock(CloseOnExit):
    """One cube core's :class:`BlockMmadSparseTla` (the C++ constructor ``Init``, ``operator()`` and destructor
    ``End``)."""

    def __init__(self, spec: BlockMmadSparseTla, resource):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        stages = spec.policy.STAGES
        ea, eb = spec.element_a, spec.element_b
        l1b_offset = spec.l1a_tile_size * stages
        idx_offset = l1b_offset + spec.l1b_tile_size * stages
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, spec.l1a_tile_size * i) for i in range(stages)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_offset + spec.l1b_tile_size * i) for i in range(stages)]
        self.l1b_idx = [resource.l1_buf.get_buffer_by_byte("uint8", idx_offset + spec.l1b_idx_tile_size * i)
                        for i in range(stages)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong * i) for i in range(stages)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong * i) for i in range(stages)]
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.l1a_event = list(range(stages))
        self.l1b_event = [i + stages for i in range(stages)]
        self.l1b_idx_event = [i + 2 * stages for i in range(stages)]
        self.l0a_event = list(range(stages))
        self.l0b_event = [i + stages for i in range(stages)]
        for i in range(stages):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_idx_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.set_flag(HardEvent.FIX_M, 0)
        self.l1_id = self.l0a_id = self.l0b_id = 0

    def close(self) -> None:
        """``End``: wait for every buffer-free event."""
        ctx = self.ctx
        for i in range(self.spec.policy.STAGES):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_idx_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.wait_flag(HardEvent.FIX_M, 0)

    def __call__(self, tensor_c, tensor_a, tensor_b, tensor_idx, actual_shape) -> None:
        """Compute and store one block: ``tensor_c``, ``tensor_a``, ``tensor_b`` (the dense k/2 x n B) and
        ``tensor_idx`` (its NZ index) are the kernel's whole tensors seen from the block's pointers;
        ``actual_shape`` is the block's ``(m, n, k[, b])``."""
        spec, ctx = self.spec, self.ctx
        m, n, k = (int(v) for v in tuple(actual_shape)[:3])
        if k <= 0 or k % 8:
            raise ArgumentError(f"{spec.name}: k = {k} must be a positive multiple of 8")
        for t, label in ((tensor_c, "C"), (tensor_a, "A"), (tensor_b, "B"), (tensor_idx, "Idx")):
            if getattr(t, "builtin", None) is None or t.position != "GM":
                raise ConfigError(f"{spec.name}: tensor{label} must be a TLA tensor over a GM tensor "
                                  f"(catlass_py.tile.copy_tla.make_tensor), got {t!r}")
        l1, l0, tc = spec.l1_tile_shape, spec.l0_tile_shape, spec.tile_copy
        stages = spec.policy.STAGES
        m_iter, n_iter, k_outer_iter = ceil_div(m, l0.m), ceil_div(n, l0.n), ceil_div(k, l1.k)
        tail_m, tail_n = m % l0.m or l0.m, n % l0.n or l0.n
        tail_k, tail_l1k = k % l0.k or l0.k, k % l1.k or l1.k
        for mi in range(m_iter):
            for ni in range(n_iter):
                m_part = tail_m if mi + 1 == m_iter else l0.m
                n_part = tail_n if ni + 1 == n_iter else l0.n
                l0c_layout = make_layout_l0c(m_part, n_part)
                ctx.wait_flag(HardEvent.FIX_M, 0)
                for ko in range(k_outer_iter):
                    nxt = (self.l1_id + 1) % stages
                    last_k = ko + 1 == k_outer_iter
                    l1k = tail_l1k if last_k else l1.k
                    # -- Step 1: GM -> L1 (A, then B and its index)
                    l1a_t = make_tensor(self.l1a[nxt], make_layout_tag(spec.element_a, tc.layout_tag_l1a, m_part, l1k))
                    ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[nxt])
                    src_a = make_tensor(tensor_a.builtin, tensor_a.layout, coord=(mi * l0.m, ko * l1.k))
                    tc.copy_gm_to_l1_a(l1a_t, src_a)
                    ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[nxt])
                    l1b_t = make_tensor(self.l1b[nxt], make_layout_tag(spec.element_b, tc.layout_tag_l1b,
                                                                       l1k // DENSE_MATRIX_B_OFFSET, n_part))
                    ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[nxt])
                    src_b = get_tile(tensor_b, (ko * l1.k // DENSE_MATRIX_B_OFFSET, ni * l0.n),
                                     (l1k // DENSE_MATRIX_B_OFFSET, n_part))
                    idx_t = make_tensor(self.l1b_idx[nxt], make_layout_tag(INDEX_LAYOUT_DTYPE, tc.layout_tag_l1b_idx,
                                                                           l1k // INDEX_MATRIX_OFFSET, n_part))
                    ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_idx_event[nxt])
                    src_idx = make_tensor(tensor_idx.builtin, tensor_idx.layout,
                                          coord=(ko * l1.k // INDEX_MATRIX_OFFSET, ni * l0.n))
                    tc.copy_gm_to_l1_b(l1b_t, src_b)
                    tc.copy_gm_to_l1_b_idx(idx_t, src_idx)
                    ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[nxt])
                    ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_idx_event[nxt])
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[nxt])
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[nxt])
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_idx_event[nxt])
                    k_inner_iter = ceil_div(tail_l1k if last_k else l1.k, l0.k)
                    for ki in range(k_inner_iter):
                        base_k = tail_k if last_k and ki + 1 == k_inner_iter else l0.k
                        # -- Step 2: L1 -> L0
                        ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                        l0a_t = make_tensor(self.l0a[self.l0a_id], make_layout_tag(spec.element_a, "zZ", m_part,
                                                                                   base_k))
                        tc.copy_l1_to_l0a(l0a_t, make_tensor(l1a_t.builtin, l1a_t.layout, coord=(0, ki * l0.k)))
                        l0b_t = make_tensor(self.l0b[self.l0b_id], make_layout_tag(
                            spec.element_b, "nZ", base_k // DENSE_MATRIX_B_OFFSET, n_part))
                        tc.copy_l1_to_l0b(l0b_t, make_tensor(l1b_t.builtin, l1b_t.layout,
                                                             coord=(ki * l0.k // DENSE_MATRIX_B_OFFSET, 0)), idx_t)
                        ctx.set_flag(HardEvent.MTE1_M, self.l0a_event[self.l0a_id])
                        ctx.wait_flag(HardEvent.MTE1_M, self.l0a_event[self.l0a_id])
                        # -- Step 3: compute
                        mmad_m = 16 if m_part == 1 else m_part  # GEMV mode avoided: one row as 16
                        spec.tile_mmad(self.l0c, self.l0a[self.l0a_id], self.l0b[self.l0b_id], mmad_m, n_part,
                                       base_k, ko == 0 and ki == 0, 0)
                        if (m_part // 16) * (n_part // 16) < LIMIT_MNSIZE:
                            ctx.pipe_barrier(Pipe.M)
                        ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                        self.l0a_id = (self.l0a_id + 1) % stages
                        self.l0b_id = (self.l0b_id + 1) % stages
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[nxt])
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[nxt])
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_idx_event[nxt])
                    self.l1_id = nxt
                ctx.set_flag(HardEvent.M_FIX, 0)
                ctx.wait_flag(HardEvent.M_FIX, 0)
                # -- Step 4: L0C -> GM
                tc.copy_l0c_to_gm(tensor_c, make_tensor(self.l0c, l0c_layout, coord=(mi * l0.m, ni * l0.n)))
                ctx.set_flag(HardEvent.FIX_M, 0)


__all__ = ["BlockMmadSparseTla", "DENSE_MATRIX_B_OFFSET", "INDEX_MATRIX_OFFSET"]
