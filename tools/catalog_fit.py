"""Shared by the catalog-constant fits (tools/fit_sustained_clock.py, tools/fit_serving_clock.py):
a temporary copy of every catalog directory fathom reads (FATHOM_DATA_DIR), one calibration
constant of an accelerator set in that copy, and a compare run against it.
"""
import os
import re
import shutil
import subprocess

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What scenarios/catalog.cpp and compare load from the data directory.
CATALOG_DIRS = ("hardware/catalog", "hardware/calibration", "models/catalog", "workloads/stacks", "workloads/engines",
                "workloads/datasets", "scenarios/sources")


def copy_catalogs(tmp):
    for d in CATALOG_DIRS:
        if os.path.isdir(os.path.join(SRC, d)):
            shutil.copytree(os.path.join(SRC, d), os.path.join(tmp, d))


def set_constant(tmp, accelerator, key, value):
    """Sets `key: {value: ...}` of the accelerator's calibration block in the copy under `tmp`."""
    p = os.path.join(tmp, "hardware/catalog/accelerators", accelerator + ".yaml")
    s = re.sub(r"(  %s: \{value: )[0-9.]+" % key, r"\g<1>%s" % value, open(p).read())
    open(p, "w").write(s)


def get_constant(accelerator, key):
    """The value of `key` in the accelerator's calibration block in the repository's catalog."""
    p = os.path.join(SRC, "hardware/catalog/accelerators", accelerator + ".yaml")
    return float(re.search(r"  %s: \{value: ([0-9.]+)" % key, open(p).read()).group(1))


def has_table(accelerator):
    """Whether the repository's catalog entry prices ops from a measured table (calibration_table)."""
    p = os.path.join(SRC, "hardware/catalog/accelerators", accelerator + ".yaml")
    return re.search(r"^calibration_table:", open(p).read(), re.M) is not None


def compare(fathom, measured, tmp, out, *extra):
    """`fathom compare MEASURED --json OUT` on the catalogs under `tmp`; returns the parsed results."""
    import json
    subprocess.run([fathom, "compare", measured, *extra, "--json", out], check=True, capture_output=True,
                   env=dict(os.environ, FATHOM_DATA_DIR=tmp))
    return json.load(open(out))
