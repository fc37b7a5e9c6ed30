"""Model-file fuzzing for the record: many seeded mutations of every safe model format.

Runs the mutations of ``tests/fuzz/model_fuzz.py`` (the CI test runs 150) for
as many inputs as fit in ``--seconds`` and prints the counts: inputs tried,
clean refusals, loaded fine, crashes, hangs, inputs changed.  The clean inputs (the
valid seed files) run once before the timed ones, untimed, in a child sharing the
numba cache with the timed children (``model_fuzz.warm_kernels``): the kernels'
first compile after an install (30-40 s on a loaded machine) is no input's hang
(``--no-warm`` skips it).  Each hang is listed with the seconds it ran before the
watchdog killed it and the watchdog's limit, so that a slow input on a loaded
machine (just past the limit) reads apart from a hang.

    nice -n 10 python benchmarks/fuzz_model_files.py --seconds 300 --inputs 20000
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import model_fuzz  # noqa: E402

if __name__ == "__main__":
    sys.exit(model_fuzz.main(sys.argv[1:]))
