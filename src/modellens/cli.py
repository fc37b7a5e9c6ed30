"""The ``modellens`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _demo(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from . import ale, mplot, pdp, shapley
    from .datasets import load_demo

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    print("modellens demo: gradient boosting on scikit-learn's diabetes data (442 patients, "
          "10 features)")
    model, X, _ = load_demo()
    pd_effects = pdp(model, X, ice=True, grid=args.grid)
    cice = pdp(model, X, features=["bmi", "s5"], ice=True, center=True, grid=args.grid)
    pair = pdp(model, X, features=[("bmi", "s5")], grid=min(args.grid, 15))
    m_effects = mplot(model, X, grid=args.grid)
    ale_effects = ale(model, X, bins=args.grid)
    ale_pair = ale(model, X, features=[("bmi", "s5")], bins=min(args.grid, 10))
    attributions = shapley(model, X.iloc[:args.rows], background=X.sample(30, random_state=0))

    written = []
    for name, effects in (("pdp_ice", pd_effects), ("centered_ice", cice),
                          ("pdp_2d_bmi_s5", pair), ("mplot", m_effects), ("ale", ale_effects),
                          ("ale_2d_bmi_s5", ale_pair)):
        fig = effects.plot()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    for name, draw in (("shap_beeswarm", attributions.plot.beeswarm),
                       ("shap_waterfall_row0", lambda: attributions.plot.waterfall(0))):
        ax = draw()
        path = out / f"{name}.png"
        ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(ax.figure)
        written.append(path)
    table = pd.concat([e.to_frame() for e in (pd_effects, pair, m_effects, ale_effects, ale_pair)],
                      ignore_index=True)
    csv = out / "effects.csv"
    table.to_csv(csv, index=False)
    shap_csv = out / "shapley_values.csv"
    attributions.to_frame().to_csv(shap_csv, index=False)
    written += [csv, shap_csv]
    for path in written:
        print(f"  wrote {path}")
    print(f"modellens demo: results in {out}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="modellens",
                                     description="Explain trained machine-learning models.")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="explain a bundled model and write plots and a CSV")
    demo.add_argument("--out", default="modellens-demo", help="output folder (default: %(default)s)")
    demo.add_argument("--grid", type=int, default=20, help="grid points / bins per feature")
    demo.add_argument("--rows", type=int, default=10, help="rows explained with Shapley values")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
