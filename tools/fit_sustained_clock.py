#!/usr/bin/env python3
"""Reproduces the fit of the per-device `sustained_clock` constants (hardware/catalog/
accelerators/*.yaml) against the dense training cases of one or more measured-format files, with a
leave-one-out check. Works on a temporary copy of the catalogs; the repository is not modified.

    tools/fit_sustained_clock.py BUILD/fathom MEASURED.yaml [MORE.yaml ...]

H100-class parts fit in two groups, as their op costs rest on different bases: those pricing ops
from a measured table (`calibration_table` in the catalog: h100-sxm-80gb, h200) and those on the
roofline (h800, and the 500 W h100-sxm-96gb-hbm2e at x0.844). The roofline's `sustained_clock`
(every H100-class part's, as the ops a table does not cover are priced by it), A100's and B200's
are fitted first; then, with it, the tabled parts' `table_sustained_clock`. For each, prints the
value on a 0.01 grid that leaves the device's median signed error
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

H100 = ["h100-sxm-80gb", "h800-sxm-80gb", "h200-sxm-141gb", "h100-sxm-96gb-hbm2e"]
GRID = [round(0.45 + 0.01 * i, 2) for i in range(44)]


def throughput_errors(fathom, files, tmp, keep):
    """Each kept training case's error as a throughput error (a step time's sign flips: predicted /
    measured time t gives throughput error 1/t - 1)."""
    results = [r for i, f in enumerate(files) for r in catalog_fit.compare(fathom, f, tmp, os.path.join(tmp, "c%d.json" % i))]
    return {r["id"]: (1.0 / (1.0 + r["error"]) - 1.0 if r["metric"] == "step_time_s" else r["error"])
            for r in results if r["status"] == "ok" and r["kind"] == "training" and keep(r["id"])}


def main():
    fathom, files = sys.argv[1], sys.argv[2:]
    cases = [c for f in files for c in yaml.safe_load(open(f))["cases"]]
    accel = {c["id"]: c["hardware"]["accelerator"] for c in cases}
    # Dense models only: the mixture-of-experts cases still carry structural gaps of their own
    # (host-bound small experts, Megatron-FSDP), which a clock constant must not absorb.
    moe = {c["id"] for c in cases if (c.get("model") or {}).get("architecture") == "moe"}
    # Devices whose constant the fit sets; cases on other devices (B200, MI300X, ...) do not move.
    tabled = [a for a in H100 if catalog_fit.has_table(a)]
    group = lambda cid: ("a100" if accel[cid].startswith("a100") else
                         "h100-table" if accel[cid] in tabled else
                         "h100-roofline" if accel[cid] in H100 else
                         "b200" if accel[cid] == "b200" else None)
    keep = lambda cid: group(cid) is not None
    best = lambda errors, cases: min(GRID, key=lambda x: abs(statistics.median(errors[x][c] for c in cases)))
    dense = lambda errors, g, but=None: [c for c in errors[GRID[0]] if c not in moe and group(c) == g and c != but]
    fitted, errors_of = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        catalog_fit.copy_catalogs(tmp)
        set_clock = lambda acc, key, value: catalog_fit.set_constant(tmp, acc, key, value)
        # Pass 1: the roofline's clock (GH100's for every H100-class part, the ops a table does not
        # cover included), A100's and B200's; each device's errors depend only on its own constant.
        errors = {}
        for x in GRID:
            for a in H100:
                set_clock(a, "sustained_clock", round(x * 0.844, 4) if a == "h100-sxm-96gb-hbm2e" else x)
            set_clock("a100-sxm-80gb", "sustained_clock", x)
            set_clock("b200", "sustained_clock", x)
            errors[x] = throughput_errors(fathom, files, tmp, keep)
        for g in ("h100-roofline", "a100", "b200"):
            errors_of[g] = errors
            if dense(errors, g):
                fitted[g] = best(errors, dense(errors, g))
        # Pass 2: with the roofline's clock fitted, the table-priced ops' factor on tabled parts.
        if tabled:
            x0 = fitted.get("h100-roofline", catalog_fit.get_constant("h800-sxm-80gb", "sustained_clock"))
            for a in H100:
                set_clock(a, "sustained_clock", round(x0 * 0.844, 4) if a == "h100-sxm-96gb-hbm2e" else x0)
            errors = {}
            for x in GRID:
                for a in tabled:
                    set_clock(a, "table_sustained_clock", x)
                errors[x] = throughput_errors(fathom, files, tmp, keep)
            errors_of["h100-table"] = errors
            if dense(errors, "h100-table"):
                fitted["h100-table"] = best(errors, dense(errors, "h100-table"))
    for g in ("h100-roofline", "h100-table", "a100", "b200"):
        key = "table_sustained_clock" if g == "h100-table" else "sustained_clock"
        if g in fitted:
            print(f"{g}: {key} = {fitted[g]} (from {len(dense(errors_of[g], g))} dense cases)")
        elif g in errors_of:
            print(f"{g}: no dense case; keep the catalog estimate")
    loo = []
    for g, errors in errors_of.items():
        for c in dense(errors, g):
            x = best(errors, dense(errors, g, but=c))
            loo.append(abs(errors[x][c]))
            print(f"  {c:44s} refit {x:.2f}  error {100 * errors[x][c]:+6.1f}%")
    print(f"leave-one-out: median |error| {100 * statistics.median(loo):.1f}%, max {100 * max(loo):.1f}%")
    # The mixture-of-experts cases at the fitted (or, without a dense case, the current) value.
    current = {"h100-table": catalog_fit.get_constant("h100-sxm-80gb", "table_sustained_clock") if tabled else None,
               "h100-roofline": catalog_fit.get_constant("h800-sxm-80gb", "sustained_clock"),
               "a100": catalog_fit.get_constant("a100-sxm-80gb", "sustained_clock"),
               "b200": catalog_fit.get_constant("b200", "sustained_clock")}
    for g, errors in errors_of.items():
        for c in sorted(x for x in errors[GRID[0]] if x in moe and group(x) == g):
            x = fitted.get(g, current[g])
            if x in errors:
                print(f"  mixture of experts: {c:44s} at {x:.2f}  error {100 * errors[x][c]:+6.1f}%")


if __name__ == "__main__":
    main()
