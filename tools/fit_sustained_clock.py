#!/usr/bin/env python3
"""Reproduces the fit of the per-device `sustained_clock` constants (hardware/catalog/
accelerators/*.yaml) against the dense training cases of one or more measured-format files, with a
leave-one-out check. Works on a temporary copy of the catalogs; the repository is not modified.

    tools/fit_sustained_clock.py BUILD/fathom MEASURED.yaml [MORE.yaml ...]

For H100-class parts (h100-sxm-80gb, h800, h200; the 500 W h100-sxm-96gb-hbm2e gets x0.844), for
A100 and for B200, prints the value on a 0.01 grid that leaves the device's median signed error
over its dense cases closest to 0, then, for each case, the error when the value is refitted
without that case (errors as throughput errors, so a step time's sign is flipped). Only dense
models are fitted: a mixture-of-experts case still carries structural gaps of its own (host-bound
small experts, expert-parallel overlap, Megatron-FSDP) that a clock constant must not absorb. A
device without a dense case keeps its catalog estimate, and the tool says so; its mixture-of-
experts cases are listed with their errors at that estimate.
Requires PyYAML.
"""
import os
import statistics
import sys
import tempfile

import yaml

import catalog_fit

H100 = ["h100-sxm-80gb", "h800-sxm-80gb", "h200-sxm-141gb"]
GRID = [round(0.45 + 0.01 * i, 2) for i in range(44)]


def main():
    fathom, files = sys.argv[1], sys.argv[2:]
    cases = [c for f in files for c in yaml.safe_load(open(f))["cases"]]
    accel = {c["id"]: c["hardware"]["accelerator"] for c in cases}
    # Dense models only: the mixture-of-experts cases still carry structural gaps of their own
    # (host-bound small experts, Megatron-FSDP), which a clock constant must not absorb.
    moe = {c["id"] for c in cases if (c.get("model") or {}).get("architecture") == "moe"}
    # Devices whose constant the fit sets; cases on other devices (B200, MI300X, ...) do not move.
    group = lambda cid: ("a100" if accel[cid].startswith("a100") else
                         "h100" if accel[cid] in H100 + ["h100-sxm-96gb-hbm2e"] else
                         "b200" if accel[cid] == "b200" else None)
    with tempfile.TemporaryDirectory() as tmp:
        catalog_fit.copy_catalogs(tmp)
        set_clock = lambda acc, value: catalog_fit.set_constant(tmp, acc, "sustained_clock", value)
        errors = {}
        for x in GRID:  # each device's errors depend only on its own constant
            for a in H100:
                set_clock(a, x)
            set_clock("h100-sxm-96gb-hbm2e", round(x * 0.844, 4))
            set_clock("a100-sxm-80gb", x)
            set_clock("b200", x)
            results = [r for i, f in enumerate(files)
                       for r in catalog_fit.compare(fathom, f, tmp, os.path.join(tmp, "c%d.json" % i))]
            # Training cases only, each error as a throughput error (a step time's sign flips:
            # predicted / measured time t gives throughput error 1/t - 1).
            errors[x] = {r["id"]: (1.0 / (1.0 + r["error"]) - 1.0 if r["metric"] == "step_time_s" else r["error"])
                         for r in results
                         if r["status"] == "ok" and r["kind"] == "training" and group(r["id"]) is not None}
    ids = [c for c in errors[GRID[0]] if c not in moe]
    best = lambda cases: min(GRID, key=lambda x: abs(statistics.median(errors[x][c] for c in cases)))
    fitted = {}
    for g in ("h100", "a100", "b200"):
        dense = [c for c in ids if group(c) == g]
        if dense:
            fitted[g] = best(dense)
            print(f"{g}: sustained_clock = {fitted[g]} (from {len(dense)} dense cases)")
        else:
            print(f"{g}: no dense case; keep the catalog estimate")
    loo = []
    for c in ids:
        x = best([o for o in ids if o != c and group(o) == group(c)])
        loo.append(abs(errors[x][c]))
        print(f"  {c:44s} refit {x:.2f}  error {100 * errors[x][c]:+6.1f}%")
    print(f"leave-one-out: median |error| {100 * statistics.median(loo):.1f}%, max {100 * max(loo):.1f}%")
    # The mixture-of-experts cases at the fitted (or, without a dense case, the current) clock.
    current = {g: catalog_fit.get_constant(a, "sustained_clock")
               for g, a in (("h100", "h100-sxm-80gb"), ("a100", "a100-sxm-80gb"), ("b200", "b200"))}
    for c in sorted(x for x in errors[GRID[0]] if x in moe):
        x = fitted.get(group(c), current[group(c)])
        if x in errors:
            print(f"  mixture of experts: {c:44s} at {x:.2f}  error {100 * errors[x][c]:+6.1f}%")


if __name__ == "__main__":
    main()
