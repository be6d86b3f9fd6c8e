"""``python -m catlass_py``: the ``catlass-py`` command."""

import sys

from catlass_py.cli import main

if __name__ == "__main__":
    sys.exit(main())
