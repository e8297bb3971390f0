"""Plot the quality-gate checks of pretrainings run by ``benchmarks.pretrain --to-gate ... --json``.

    python -m benchmarks.pretrain_history FILE.json [FILE.json ...] --out history.png [--labels A,B]

One line per pretraining: the upper bound (mean + 1.645 SE) of the total-variation distance to
the exact ``G_0`` at position 0 on the stopping set (what the stop rule reads), dashed beside it
the mean TV over both masked positions, and the stop and gate thresholds (0.043 and 0.05 unless
the file says otherwise)."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pretrain_history", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True, help="PNG to write")
    parser.add_argument("--labels", default=None, help="comma-separated, one per file (default: the recipe)")
    parser.add_argument("--stop-tv", type=float, default=0.043)
    parser.add_argument("--gate-tv", type=float, default=0.05)
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = args.labels.split(",") if args.labels else None
    fig, ax = plt.subplots(figsize=(10, 4))
    for i, path in enumerate(args.files):
        with open(path) as fh:
            run = json.load(fh)
        for row in run.get("to_gate", []):
            steps = [h[0] for h in row["history"]]
            name = labels[i] if labels else run.get("recipe", path)
            line, = ax.plot(steps, [h[2] for h in row["history"]], marker=".",
                            label=f"{name}: position-0 bound ({row['steps']} steps, {row['stopped']}, "
                                  f"{row['seconds']:.0f} s)")
            ax.plot(steps, [h[1] for h in row["history"]], ls="--", color=line.get_color(), alpha=0.6,
                    label=f"{name}: mean TV, both positions")
    ax.axhline(args.stop_tv, color="grey", lw=0.8, ls=":", label=f"stop at {args.stop_tv}")
    ax.axhline(args.gate_tv, color="black", lw=0.8, label=f"gate {args.gate_tv}")
    ax.set_xlabel("pretraining step")
    ax.set_ylabel("TV to the exact $G_0$ (stopping set)")
    ax.set_ylim(0, None)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves fill the axes
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
