"""Safety fuzzing for the record: hostile strings, output paths and Dask faults (issue 40).

Runs the seeded generators of ``tests/fuzz/safety_fuzz.py`` (the CI test runs
a few cases of each) in watched child processes (a time limit and an
address-space cap) and prints, per generator, the counts: inputs, results,
clean refusals, crashes, hangs, memory blow-ups, partial results presented as
whole, markup found in the page, input files changed; then every case that
was not clean, with its seed.

    python benchmarks/fuzz_safety.py --which dask paths --inputs 200 --seconds 900
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import safety_fuzz  # noqa: E402

if __name__ == "__main__":
    sys.exit(safety_fuzz.main(sys.argv[1:]))
