"""What a BlockMmad can do, declared on the block itself, and what a kernel needs from it.

A kernel drives its BlockMmad through one call signature; CATLASS fixes it by template (a kernel written for
``MmadAtlasA2Pingpong`` does not compile with ``MmadAtlasA2Preload``, whose call also takes the next block's
tensors). Here every BlockMmad class declares ``CAPABILITIES`` (a :class:`BlockMmadCapabilities`): its call
signature, whether a call returns before the block is stored (asynchronous: the fixpipe runs in a later call or
in ``synchronize_block()``) and how many fixpipe callbacks it takes. A kernel declares a
:class:`BlockMmadRequirement` and checks it at assembly (:func:`catlass_py.gemm.block.check_block_mmad`), so an
unfit policy is a :class:`ConfigError` naming the policy, what the kernel needs and the registered policies
that fit - never a ``TypeError`` inside a core.

=========================================  ===================  ============  =========  =====================
BlockMmad (policy)                         call                 asynchronous  callbacks  callbacks run
=========================================  ===================  ============  =========  =====================
``MmadAtlasA2Pingpong``                    plain                no            0          -
``MmadAtlasA2PreloadAsync``                plain                yes           1          after the fixpipe
``MmadAtlasA2PreloadAsyncWithCallback``    plain                yes           2          before and after it
``MmadAtlasA2Preload``                     preload              no            0          -
``MmadAtlasA2PingpongBias``                bias                 no            0          -
``MmadAtlasA2Streamk``                     streamk              no            0          -
``MmadAtlasA2SingleCoreSplitk``            single_core_splitk   no            0          -
``MmadPingpong`` (``BlockMmadTla``)        tla                  no            0          -
``MmadPingpongTlaV2`` (``BlockMmadTla``)   tla_v2               no            0          -
``MmadFullLoadA`` (``BlockMmadTla``)       full_load_a          no            0          -
``MmadAtlasA2Preload`` (``BlockMmadTla``)  preload_tla          no            0          -
=========================================  ===================  ============  =========  =====================
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.errors import ConfigError


@dataclass(frozen=True)
class BlockMmadCall:
    """A BlockMmad call signature: a short name and the argument list (CATLASS's parameter names)."""

    name: str
    arguments: str

    def __str__(self) -> str:
        return f"BlockMmad{self.arguments}"


PLAIN_CALL = BlockMmadCall("plain", "(gmA, layoutA, gmB, layoutB, gmC, layoutC, actualShape)")
PRELOAD_CALL = BlockMmadCall(
    "preload", "(gmA, layoutA, gmB, layoutB, gmC, layoutC, gmNextA, gmNextB, actualShape, nextActualShape, "
               "isFirstBlock, hasNextBlock)")
BIAS_CALL = BlockMmadCall("bias", "(gmA, layoutA, gmB, layoutB, gmC, layoutC, gmBias, actualShape)")
STREAMK_CALL = BlockMmadCall(
    "streamk", "(gmA, layoutA, gmB, layoutB, gmC, layoutC, gmW, layoutW, gmNextA, gmNextB, actualShape, "
               "nextActualShape, isFirstBlock, hasNextBlock, isSkBlock)")
TLA_CALL = BlockMmadCall("tla", "(tensorA, tensorB, tensorC, actualShape)")
TLA_V2_CALL = BlockMmadCall("tla_v2", "(tensorA, tensorB, tensorC)")
PRELOAD_TLA_CALL = BlockMmadCall(
    "preload_tla", "(tensorA, tensorB, tensorC, tensorNextA, tensorNextB, actualShape, nextActualShape, isFirstBlock, "
                   "hasNextBlock)")
SPARSE_TLA_CALL = BlockMmadCall("sparse_tla", "(tensorC, tensorA, tensorB, tensorIdx, actualShape)")
FULL_LOAD_A_CALL = BlockMmadCall("full_load_a", "(tensorA, tensorB, tensorC, actualShape, needLoadL1)")
SINGLE_CORE_SPLITK_CALL = BlockMmadCall(
    "single_core_splitk", "(gmA, layoutA, gmB, layoutB, gmC, layoutC, gmNextA, gmNextB, actualShape, "
                          "nextActualShape, needLoadNextA, needLoadNextB, atomicAdd)")

#: what the fixpipe callbacks of an asynchronous call are, by count
CALLBACKS = {0: "no callbacks", 1: "one callback, run after the fixpipe",
             2: "two callbacks, run before and after the fixpipe"}


@dataclass(frozen=True)
class BlockMmadCapabilities:
    """What a BlockMmad implementation offers: its ``call`` signature; ``asynchronous``: a call returns before
    the block is stored (its last K tiles, the fixpipe store and the callbacks run in a later call or in
    ``synchronize_block()``); ``callbacks``: how many fixpipe callbacks an asynchronous call takes after its
    arguments (1: after the store; 2: before and after it)."""

    call: BlockMmadCall
    asynchronous: bool = False
    callbacks: int = 0

    def __post_init__(self):
        if self.callbacks not in CALLBACKS or (self.callbacks and not self.asynchronous):
            raise ConfigError(f"BlockMmadCapabilities: a synchronous block takes no callbacks and an asynchronous one "
                              f"0, 1 or 2; got asynchronous={self.asynchronous}, callbacks={self.callbacks}")

    def __str__(self) -> str:
        if not self.asynchronous:
            return f"a synchronous {self.call}"
        return f"an asynchronous {self.call} with {CALLBACKS[self.callbacks]}"


@dataclass(frozen=True)
class BlockMmadRequirement:
    """What a kernel needs from its BlockMmad: the ``call`` it makes; ``asynchronous`` None (either), False (the
    kernel acts on a block right after the call returns) or True; ``callbacks``: the callback counts it can pass
    to an asynchronous block (None: any). ``reason`` says why, for the error message."""

    call: BlockMmadCall = PLAIN_CALL
    asynchronous: bool | None = None
    callbacks: tuple[int, ...] | None = None
    reason: str = ""

    def accepts(self, capabilities: BlockMmadCapabilities) -> bool:
        """Whether a block with ``capabilities`` fits."""
        if capabilities.call != self.call:
            return False
        if self.asynchronous is not None and capabilities.asynchronous != self.asynchronous:
            return False
        return not (capabilities.asynchronous and self.callbacks is not None
                    and capabilities.callbacks not in self.callbacks)

    def __str__(self) -> str:
        timing = {None: "", False: "synchronous ", True: "asynchronous "}[self.asynchronous]
        text = f"a {timing}{self.call}"
        if self.callbacks is not None and self.asynchronous is not False:
            text += " (asynchronous: with " + " or ".join(CALLBACKS[c] for c in self.callbacks) + ")"
        return text + (f": {self.reason}" if self.reason else "")


__all__ = [
    "BIAS_CALL",
    "FULL_LOAD_A_CALL",
    "BlockMmadCall",
    "BlockMmadCapabilities",
    "BlockMmadRequirement",
    "CALLBACKS",
    "PLAIN_CALL",
    "PRELOAD_CALL",
    "PRELOAD_TLA_CALL",
    "SINGLE_CORE_SPLITK_CALL",
    "SPARSE_TLA_CALL",
    "STREAMK_CALL",
    "TLA_CALL",
    "TLA_V2_CALL",
]
