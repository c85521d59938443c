"""The exceptions neuronsim raises."""

from . import _core

#: A bad input, parameter, shape or program: one line naming the culprit and the rule.
Error = _core.Error


class KernelError(Error):
    """An error in a Python kernel; ``where`` is the kernel's ``file:line`` at fault."""

    def __init__(self, message, where):
        super().__init__(f"{where}: {message}")
        self.where = where


class RaceError(KernelError):
    """Two accesses of a run overlap with no semaphore ordering between them."""


class StrictError(Error):
    """``strict=True``: the run raced or read memory nothing had written."""


class CheckError(AssertionError):
    """``check=True``: the outputs differ from the reference by more than the tolerance."""
