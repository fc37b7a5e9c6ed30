"""Model-file fuzzing for the record: many seeded mutations of every safe model format.

Runs the mutations of ``tests/fuzz/model_fuzz.py`` (the CI test runs 150) for
as many inputs as fit in ``--seconds`` and prints the counts: inputs tried,
clean refusals, loaded fine, crashes, hangs, inputs changed.

    python benchmarks/fuzz_model_files.py --seconds 300 --inputs 20000
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import model_fuzz  # noqa: E402

if __name__ == "__main__":
    sys.exit(model_fuzz.main(sys.argv[1:]))
