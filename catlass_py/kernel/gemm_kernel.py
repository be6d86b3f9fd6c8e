"""The base of the GEMM kernels and the block geometry they share.

Every CATLASS GEMM kernel is a template ``Kernel<BlockMmad, BlockEpilogue, BlockScheduler>`` whose cube cores
walk the blocks of C that the scheduler hands out and call the BlockMmad on each. :class:`GemmKernel` holds
what is common to all of them: the assembly checks (the BlockMmad's capabilities against what the kernel
needs, the epilogue, the scheduler), the host-side defaults (``CanImplement``, no workspace), and the call of a
BlockMmad with fixpipe callbacks whether the block is synchronous or not.

A kernel for :func:`catlass_py.arch.launch` / :class:`~catlass_py.kernel.DeviceGemm` is any object with

* ``Arguments`` (host-side arguments) and ``to_underlying_arguments(args, workspace) -> Params``;
* ``can_implement(args)`` and ``get_workspace_size(args)`` (bytes of GM workspace);
* ``aic(ctx, params)`` (the cube-core program) and/or ``aiv(ctx, params)`` (the vector-core program, run by
  both vector cores of every AI core); leave one None when the C++ ``operator()`` of that core type is empty;
* ``arch`` (the :class:`~catlass_py.arch.ArchSpec` it was assembled for).

The block geometry helpers (:func:`operand_layouts`, :func:`offset_a`, :func:`offset_b`, :func:`offset_c`,
:func:`block_count`) are the ``MakeLayout`` / ``GetOffset`` lines every CATLASS kernel repeats.
"""

from __future__ import annotations

from catlass_py.errors import ConfigError
from catlass_py.gemm.block.block_mmad import check_block_mmad
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadRequirement
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.coord import ceil_div


def operand_layouts(block_mmad, m: int, n: int, k: int) -> tuple:
    """``MakeLayout`` of A (m x k), B (k x n) and C (m x n) in the BlockMmad's operand layouts (the
    ``ToUnderlyingArguments`` of most kernels)."""
    mm = block_mmad
    return (mm.a_type.layout.make_layout(mm.element_a, m, k), mm.b_type.layout.make_layout(mm.element_b, k, n),
            mm.c_type.layout.make_layout(mm.element_c, m, n))


def offset_a(layout_a, block_coord, l1) -> int:
    """Where block ``block_coord``'s A panel starts: ``layoutA.GetOffset(blockCoord.GetCoordMK() *
    L1TileShape::ToCoordMK())``."""
    return layout_a.offset(block_coord.m * l1.m, block_coord.k * l1.k)


def offset_b(layout_b, block_coord, l1) -> int:
    """Where block ``block_coord``'s B panel starts (``GetCoordKN``)."""
    return layout_b.offset(block_coord.k * l1.k, block_coord.n * l1.n)


def offset_c(layout_c, block_coord, l1) -> int:
    """Where block ``block_coord`` of C starts (``GetCoordMN``)."""
    return layout_c.offset(block_coord.m * l1.m, block_coord.n * l1.n)


def block_count(l1, m: int, n: int) -> int:
    """``L1.M x L1.N`` blocks of an m x n C (what the identity swizzle's ``GetCoreLoops`` returns)."""
    return ceil_div(m, l1.m) * ceil_div(n, l1.n)


class GemmKernel:
    """Base of the kernels ``<BlockMmad, BlockEpilogue, BlockScheduler>``.

    Assembly checks, in order: the BlockMmad meets :attr:`block_mmad_needs` (its declared capabilities:
    call signature, synchronous or not, fixpipe callbacks), :meth:`check_block_epilogue` (default: the kernel
    takes ``BlockEpilogue = void``, i.e. None) and :meth:`check_block_scheduler` (default: a
    :class:`GemmIdentityBlockSwizzle`). A subclass states what it needs by overriding these. Sets
    ``block_mmad``, ``block_epilogue``, ``block_scheduler``, ``arch`` and ``block_mmad_capabilities``.
    """

    #: what the kernel needs from its BlockMmad (default: the plain call, synchronous or not)
    block_mmad_needs: BlockMmadRequirement = BlockMmadRequirement(PLAIN_CALL)
    #: why BlockEpilogue is void, for the error when it is not (default: CATLASS instantiates it with void)
    void_epilogue_reason = "CATLASS instantiates it with void"
    aiv = None  # no vector-core program unless a subclass defines one (the C++ AIV operator() is empty)

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        what = self.kernel_name()
        self.block_mmad_capabilities = check_block_mmad(what, block_mmad, self.block_mmad_needs)
        self.check_block_epilogue(block_epilogue)
        self.check_block_scheduler(block_scheduler)
        self.block_mmad = block_mmad
        self.block_epilogue = block_epilogue
        self.block_scheduler = block_scheduler
        self.arch = block_mmad.arch

    @classmethod
    def kernel_name(cls) -> str:
        """The name assembly errors start with: the CATLASS kernel's (the class name)."""
        return cls.__name__

    def check_block_epilogue(self, block_epilogue) -> None:
        """The kernel takes ``BlockEpilogue = void``: None."""
        if block_epilogue is not None:
            raise ConfigError(f"{self.kernel_name()}: BlockEpilogue must be void, None ({self.void_epilogue_reason}), "
                              f"got {block_epilogue!r}")

    def check_block_scheduler(self, block_scheduler) -> None:
        """The kernel walks blocks with a :class:`GemmIdentityBlockSwizzle`."""
        if not isinstance(block_scheduler, GemmIdentityBlockSwizzle):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be a GemmIdentityBlockSwizzle, got "
                              f"{block_scheduler!r}")

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args) -> bool:
        """CATLASS ``CanImplement``: always true (the ops layer validates user input)."""
        return True

    @staticmethod
    def get_workspace_size(args) -> int:
        """No workspace."""
        return 0

    # -- device side -----------------------------------------------------------------------------
    def call_block_mmad(self, block_mmad, args: tuple, before=None, after=None) -> None:
        """Call the per-core BlockMmad ``block_mmad`` with ``args`` and the callbacks the kernel runs right before
        and right after the block's fixpipe store (either may be None).

        An asynchronous block takes them after ``args`` (two callbacks: both; one: ``after``) and runs them when
        it stores the block, in a later call or in ``synchronize_block()``. A synchronous block has stored the
        block when it returns, so ``before`` runs before the call and ``after`` after it."""
        caps = self.block_mmad_capabilities
        if caps.asynchronous:
            block_mmad(*args, *((before, after) if caps.callbacks == 2 else (after,) if caps.callbacks == 1 else ()))
            return
        if before is not None:
            before()
        block_mmad(*args)
        if after is not None:
            after()


__all__ = ["GemmKernel", "block_count", "offset_a", "offset_b", "offset_c", "operand_layouts"]
