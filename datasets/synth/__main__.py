"""``python -m datasets.synth --out DIR --n N ...``: the same as ``smj dataset synth``."""

import sys

from datasets.synth.cli import main

if __name__ == "__main__":
    sys.exit(main())
