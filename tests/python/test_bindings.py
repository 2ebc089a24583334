# The Python facade returns the same numbers as the CLI's JSON and maps input errors to ValueError.
import json
import os
import subprocess
import tempfile

import pytest

import _fathom

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
QUICKSTART = os.path.join(SRC, "scenarios", "examples", "quickstart.yaml")


def test_run_matches_cli_json():
    py = _fathom.run(QUICKSTART)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.json")
        subprocess.run([CLI, "run", QUICKSTART, "--json", out], check=True, capture_output=True)
        cli = json.load(open(out))
    assert py["step_time_s"] == cli["step_time_s"]  # same engine, bit-identical
    assert py["out_of_memory"] is False


def test_override_changes_plan():
    base = _fathom.run(QUICKSTART)
    tp2 = _fathom.run(QUICKSTART, ["parallel.tp=2"])
    assert tp2["step_time_s"] != base["step_time_s"]


def test_input_error_is_value_error():
    with pytest.raises(ValueError, match="does not divide"):
        _fathom.run(QUICKSTART, ["parallel.tp=3"])


def test_report_is_flat_records():
    r = _fathom.run(QUICKSTART)
    assert r["kind"] == "training"
    assert r["stack"] == "nemo-24.07"
    assert len(r["plan_hash"]) == 16
    stage = r["stages"][0]
    # Dotted names are single columns (DataFrame-ready); the JSON writer nests them.
    assert stage["memory_bytes.total"] == r["peak_memory_bytes"]
