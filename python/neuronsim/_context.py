"""The kernel being built: its builder, and the kernel line each instruction comes from."""

import contextlib
import os
import sys

from . import _core
from .errors import KernelError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_in_package = {}  # code file name -> whether it is part of this package
_shown = {}  # code file name -> how notes show it


class Build:
    """One build of a Python kernel."""

    def __init__(self, builder, dtype):
        self.builder = builder
        self.dtype = dtype  #: the run's kernel dtype (inputs are stored in it)
        self.outputs = []  #: HBM output tensors in declaration order
        self.unnamed_outputs = 0


_current = None


@contextlib.contextmanager
def building(build):
    """Makes ``build`` the target of neuronsim.language / neuronsim.isa calls."""
    global _current
    outer, _current = _current, build
    try:
        yield build
    finally:
        _current = outer


def current():
    if _current is None:
        raise _core.Error("neuronsim.language and neuronsim.isa calls work only inside a kernel "
                          "that neuronsim.run is building")
    return _current


def _is_package_file(filename):
    inside = _in_package.get(filename)
    if inside is None:
        inside = os.path.dirname(os.path.abspath(filename)) == _PACKAGE_DIR
        _in_package[filename] = inside
    return inside


def _shown_name(filename):
    shown = _shown.get(filename)
    if shown is None:
        path = os.path.abspath(filename)
        relative = os.path.relpath(path)
        shown = path if relative.startswith("..") else relative
        _shown[filename] = shown
    return shown


def where():
    """``file:line`` of the innermost caller outside this package (the kernel's line)."""
    frame = sys._getframe(1)
    while frame is not None and _is_package_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{_shown_name(frame.f_code.co_filename)}:{frame.f_lineno}"


def fail(message):
    """Raises KernelError at the kernel's line."""
    raise KernelError(message, where())


def issue(action):
    """Runs ``action(builder)`` for the kernel's current line: its instructions carry the line
    as their note and are checked against the hardware rules at once; a builder error is raised
    as KernelError naming the line."""
    build = current()
    line = where()
    builder = build.builder
    builder.set_note(line)
    first = builder.instruction_count
    try:
        result = action(builder)
        builder.validate_from(first)
    except KernelError:
        raise
    except _core.Error as e:
        raise KernelError(str(e), line) from None
    return result
