#!/usr/bin/env python3
"""Writes a serving dataset of fathom's catalog (workloads/datasets/ID.yaml) from a table of
request lengths: one row per request with its prompt and output token counts.

    tools/datasets/length_histograms.py TABLE.csv PROMPT_COLUMN OUTPUT_COLUMN ID "NAME" "SOURCE" > ID.yaml

Each length becomes an empirical histogram of 100 equal-probability bins: bin i holds the median
of the requests between the i-th and (i+1)-th percentile, weight 1. The file states the table's
request count, mean and median of each length, so that a reader can check the histogram against
them. The joint distribution is not kept: prompt and output are drawn independently.
"""
import csv
import statistics
import sys


def histogram(values, bins=100):
    values = sorted(values)
    n = len(values)
    out = []
    for i in range(bins):
        lo, hi = i * n // bins, max(i * n // bins + 1, (i + 1) * n // bins)
        out.append(int(round(statistics.median(values[lo:hi]))))
    return out


def main():
    if len(sys.argv) != 7:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, pcol, ocol, did, name, source = sys.argv[1:]
    rows = list(csv.DictReader(open(path)))
    prompt = [max(1, int(float(r[pcol]))) for r in rows]
    output = [max(1, int(float(r[ocol]))) for r in rows]
    print(f"# {name}: {len(rows)} requests. Prompt tokens: mean {statistics.mean(prompt):.1f}, median "
          f"{statistics.median(prompt):.0f}, max {max(prompt)}; output tokens: mean {statistics.mean(output):.1f}, "
          f"median {statistics.median(output):.0f}, max {max(output)}.")
    hp, ho = histogram(prompt), histogram(output)
    print("# Written by tools/datasets/length_histograms.py: 100 equal-probability bins per length (the median")
    print(f"# of each percentile slice; their means {statistics.mean(hp):.1f} and {statistics.mean(ho):.1f}); "
          "prompt and output drawn independently.")
    print("kind: dataset")
    print(f"id: {did}")
    print(f"name: {name}")
    print(f"source: \"{source}\"")
    print(f"requests: {len(rows)}")
    for key, vals in (("prompt", prompt), ("output", output)):
        print(f"{key}:")
        print("  distribution: histogram")
        print(f"  bins: [{', '.join(str(b) for b in histogram(vals))}]")
        print(f"  weights: [{', '.join('1' for _ in range(100))}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
