"""The end of a C++ block object's scope, as a ``with`` block.

CATLASS block objects (``BlockMmad``, ``BlockEpilogue``) are constructed on a core's stack: the constructor
sets the buffer-free events and the destructor waits for them when the scope ends. Their per-core Python
instances define that destructor as ``close()``; :class:`CloseOnExit` runs it when a ``with`` block ends.
"""

from __future__ import annotations


class CloseOnExit:
    """Mixin: ``with block:`` calls ``block.close()`` (the C++ destructor) when the body ends normally.

    After an exception ``close()`` is skipped: the core program is aborting, and its waits would only add a
    second error (typically a flag that was never set) on top of the one that ended the program.
    """

    def close(self) -> None:  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False


__all__ = ["CloseOnExit"]
