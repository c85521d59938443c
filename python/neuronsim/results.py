"""What neuronsim.run returns."""

import re

_INSTRUCTION = re.compile(r"instruction (\d+)")


def with_lines(text, notes):
    """``text`` with each "instruction N" followed by the kernel line in N's note."""
    def annotate(match):
        index = int(match.group(1))
        note = notes[index] if 0 <= index < len(notes) else ""
        return f"{match.group(0)} at {note}" if note else match.group(0)
    return _INSTRUCTION.sub(annotate, text)


def last_line(text, notes):
    """The note of the latest instruction (in kernel order) ``text`` names, or ""."""
    indices = [int(i) for i in _INSTRUCTION.findall(text) if 0 <= int(i) < len(notes) and notes[int(i)]]
    return notes[max(indices)] if indices else ""


class Result:
    """One run: ``outputs`` (name -> float32 ndarray; also ``result[name]``), ``summary`` (the
    keys of ``neuronsim run --summary-json``; None when interpreted), ``trace`` (``save``,
    ``report``, ``view``, ``csv``; None without timing or with ``trace=False``), ``races`` and
    ``warnings`` (one line each, kernel lines named: schedule parameters that change nothing
    here, outputs no instruction writes, then ``reads`` of never-written memory), ``check_error`` and ``tolerance``."""

    def __init__(self, kernel, core):
        self.kernel = kernel
        self._core = core
        notes = core.notes
        self.outputs = dict(core.outputs)
        self.inputs = dict(core.inputs)
        self.summary = core.summary
        self.trace = core.trace
        self.races = [with_lines(r, notes) for r in core.races]
        self.reads = [with_lines(w, notes) for w in core.uninitialized_reads]
        self.warnings = list(core.ineffective_params) + list(core.unwritten_outputs) + self.reads
        self.check_error = core.check_error
        self.tolerance = core.tolerance

    def __getitem__(self, name):
        return self.outputs[name]

    @property
    def total_ns(self):
        """Simulated time (ns), None when interpreted."""
        return None if self.summary is None else self.summary["total_ns"]

    def asm(self):
        """The program as text assembly (neuronsim run --dump-asm); notes as comments."""
        return self._core.asm()

    def __repr__(self):
        time = "interpreted" if self.summary is None else f"{self.summary['total_ns']:.1f} ns"
        shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in self.outputs.items())
        return f"<neuronsim result {self.kernel}: {time}; {shapes}>"
