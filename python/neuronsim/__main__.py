"""python3 -m neuronsim run FILE.py:KERNEL [options]: what `neuronsim run FILE.py:KERNEL` runs."""

import sys

from . import _core
from .python_kernel import load_file_kernel


def main(argv):
    if len(argv) < 2 or argv[0] != "run" or ".py:" not in argv[1]:
        print("usage: python3 -m neuronsim run FILE.py:KERNEL [neuronsim run options]", file=sys.stderr)
        return 2
    try:
        kernel = load_file_kernel(argv[1])
    except _core.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return _core.cli_run(kernel.spec, argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
