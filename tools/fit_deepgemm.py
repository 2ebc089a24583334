#!/usr/bin/env python3
"""Reproduces the fit of the GH100 DeepGEMM class (deepgemm_efficiency, deepgemm_k_half in
hardware/catalog/accelerators/h800-sxm-80gb.yaml, used as is by h100-sxm-80gb and h200-sxm-141gb)
on DeepGEMM's README table: its rows in the shared measured file (mb-deepgemm-*) and in
scenarios/measured-fathom.yaml. Works on a temporary copy of the catalogs; the repository is not
modified.

    tools/fit_deepgemm.py BUILD/fathom SHARED_MEASURED.yaml scenarios/measured-fathom.yaml

Prints, over the grid, the pair with the smallest median |error| over the rows, its errors row by
row, and a leave-one-out check (each row's error when the pair is refitted without it).
"""
import os
import statistics
import sys
import tempfile

import catalog_fit

GH100 = ["h100-sxm-80gb", "h800-sxm-80gb", "h200-sxm-141gb"]
EFFICIENCY = [round(0.70 + 0.005 * i, 3) for i in range(21)]
K_HALF = list(range(400, 1001, 50))


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip())
        sys.exit(2)
    fathom = os.path.abspath(sys.argv[1])
    files = [os.path.abspath(f) for f in sys.argv[2:]]
    errors = {}
    with tempfile.TemporaryDirectory() as tmp:
        catalog_fit.copy_catalogs(tmp)
        for e in EFFICIENCY:
            for k in K_HALF:
                for a in GH100:
                    catalog_fit.set_constant(tmp, a, "deepgemm_efficiency", e)
                    catalog_fit.set_constant(tmp, a, "deepgemm_k_half", k)
                errors[e, k] = {}
                for i, f in enumerate(files):
                    for r in catalog_fit.compare(fathom, f, tmp, os.path.join(tmp, "c%d.json" % i)):
                        if r["status"] == "ok" and r["id"].startswith("mb-deepgemm-"):
                            errors[e, k][r["id"]] = r["error"]
    rows = sorted(errors[EFFICIENCY[0], K_HALF[0]])
    med = lambda p, keep: statistics.median(abs(errors[p][r]) for r in keep)
    best = lambda keep: min(errors, key=lambda p: med(p, keep))
    p = best(rows)
    print(f"deepgemm_efficiency = {p[0]}, deepgemm_k_half = {p[1]}: median |error| {100 * med(p, rows):.1f}% "
          f"over {len(rows)} rows, worst {100 * max(abs(errors[p][r]) for r in rows):.1f}%")
    for r in rows:
        print(f"  {r:52s} {100 * errors[p][r]:+6.1f}%")
    loo = [abs(errors[best([o for o in rows if o != r])][r]) for r in rows]
    print(f"leave-one-out: median |error| {100 * statistics.median(loo):.1f}%, max {100 * max(loo):.1f}%")


if __name__ == "__main__":
    main()
