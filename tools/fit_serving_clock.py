#!/usr/bin/env python3
"""Reproduces the fit of the GH100 `serving_clock` (hardware/catalog/accelerators/h100-sxm-80gb,
h800-sxm-80gb and h200-sxm-141gb.yaml; on parts with a measured table, the factor of the ops the
table does not cover: table-priced ops take the measured table_serving_clock) against the serving cases of a measured-format file and
their other_metrics entries, with a leave-one-out check. Works on a temporary copy of the catalogs;
the repository is not modified.

    tools/fit_serving_clock.py BUILD/fathom MEASURED.yaml

Prints, on a 0.02 grid, the median |error| of the GH100 serving entries for each value and the
value with the smallest one (the objective the constant was first fitted with), then each case's
error when the value is refitted without that case. Requires PyYAML.
"""
import os
import statistics
import sys
import tempfile

import catalog_fit

GH100 = ["h100-sxm-80gb", "h800-sxm-80gb", "h200-sxm-141gb"]
GRID = [round(0.60 + 0.02 * i, 2) for i in range(21)]


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip())
        sys.exit(2)
    fathom, measured = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    import yaml
    cases = yaml.safe_load(open(measured))["cases"]
    gh100 = {c["id"] for c in cases if c.get("kind") == "serving" and (c.get("hardware") or {}).get("accelerator") in GH100}
    errors = {}
    with tempfile.TemporaryDirectory() as tmp:
        catalog_fit.copy_catalogs(tmp)
        for x in GRID:
            for a in GH100:
                catalog_fit.set_constant(tmp, a, "serving_clock", x)
            results = catalog_fit.compare(fathom, measured, tmp, os.path.join(tmp, "c.json"), "--other-metrics")
            errors[x] = {r["id"]: r["error"] for r in results if r["status"] == "ok" and r["id"].split("#")[0] in gh100}
    ids = list(errors[GRID[0]])
    med = lambda x, keep: statistics.median(abs(errors[x][c]) for c in keep)
    for x in GRID:
        heads = [c for c in ids if "#" not in c]
        print(f"  {x:.2f}: median |error| {100 * med(x, ids):5.1f}% on {len(ids)} entries, "
              f"{100 * med(x, heads):5.1f}% on the {len(heads)} headline cases")
    best = lambda keep: min(GRID, key=lambda x: med(x, keep))
    print(f"GH100 serving_clock = {best(ids)}")
    loo = []
    for c in [c for c in ids if "#" not in c]:
        x = best([o for o in ids if o.split("#")[0] != c])
        loo.append(abs(errors[x][c]))
        print(f"  {c:58s} refit {x:.2f}  error {100 * errors[x][c]:+6.1f}%")
    print(f"leave-one-out (headline cases): median |error| {100 * statistics.median(loo):.1f}%, max {100 * max(loo):.1f}%")


if __name__ == "__main__":
    main()
