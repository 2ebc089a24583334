#!/usr/bin/env python3
"""Fits the grouped (expert) GEMM curve of an accelerator's catalog entry to a campaign's
grouped_gemm.csv (tools/calibrate/grouped_gemm.py): per dtype, the grouped kernel's throughput
relative to the dense GEMM of the same FLOPs as

    relative(rows) = c x (1 - exp(-rows / h))

with rows the rows each expert receives: c (grouped_gemm_relative) the ceiling at many rows an
expert, h (grouped_gemm_rows_scale) the fill scale, where few rows an expert leave the kernel's
tiles and groups underfed. An empirical curve: least squares on log(ratio) (grid search) over the
rows with at least MIN_ROWS rows an expert (default 256: training's range; below it the fp8
kernel's time depends on whether the rows fill whole 128-row tiles, 192 rows running slower than
256, which no smooth curve follows), and its median |error| over those rows and over all.

    tools/fit_grouped_gemm.py hardware/calibration/h100-sxm-80gb/grouped_gemm.csv [MIN_ROWS]
"""
import csv
import math
import statistics
import sys


def curve(c, h, rows):
    return c * (1.0 - math.exp(-rows / h))


def fit(points):
    best = None
    for ci in range(50, 101):
        c = ci / 100.0
        for h in range(10, 1001, 5):
            err = sum((math.log(curve(c, h, r)) - math.log(y)) ** 2 for r, y in points)
            if best is None or err < best[0]:
                best = (err, c, h)
    return best[1], best[2]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    min_rows = float(sys.argv[2]) if len(sys.argv) > 2 else 256.0
    for dtype in ("bf16", "fp8"):
        every = [(float(r["rows_per_expert"]), float(r["ratio"])) for r in rows if r["dtype"] == dtype]
        pts = [(r, y) for r, y in every if r >= min_rows]
        if not pts:
            continue
        c, h = fit(pts)
        errs = [abs(curve(c, h, r) / y - 1.0) for r, y in pts]
        all_errs = [abs(curve(c, h, r) / y - 1.0) for r, y in every]
        print(f"{dtype}: grouped_gemm_relative {c:.2f}, grouped_gemm_rows_scale {h:.0f} "
              f"({len(pts)} rows of >= {min_rows:.0f} an expert: median |error| {100 * statistics.median(errs):.1f}%, "
              f"worst {100 * max(errs):.1f}%; all {len(every)} rows: median {100 * statistics.median(all_errs):.1f}%)")


if __name__ == "__main__":
    main()
