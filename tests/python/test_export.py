# `fathom export` from the CLI and from Python: the same files, one per pool of a disaggregated
# layout in the -o directory, a search result's best candidate, and errors (exit 2, nothing written).
import json
import os
import subprocess
import tempfile

import pytest

import fathom

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
EX = os.path.join(SRC, "scenarios", "examples")
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=CLI_ENV)


def test_python_and_cli_write_the_same_files():
    serving = os.path.join(EX, "serving-llama70b-8xh100.yaml")
    files = fathom.export(serving, "vllm")
    assert list(files) == ["vllm.sh"]
    r = cli("export", serving, "--for", "vllm")
    assert r.returncode == 0 and r.stdout == files["vllm.sh"]
    training = os.path.join(EX, "quickstart.yaml")
    toml = fathom.export(training, "torchtitan", {"stack.preset": "torchtitan", "training.zero_stage": 3})
    assert 'name = "llama3"' in toml["torchtitan.toml"]


def test_disaggregated_pools_go_to_one_file_each():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "launch")
        r = cli("export", os.path.join(EX, "serving-disaggregated.yaml"), "--for", "vllm", "-o", out)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(out)) == ["decode.sh", "prefill.sh"]
        text = open(os.path.join(out, "prefill.sh")).read()
        assert "NixlConnector" in text and "vllm serve" in text
        # Every script is valid shell.
        for name in os.listdir(out):
            assert subprocess.run(["bash", "-n", os.path.join(out, name)]).returncode == 0


def test_a_search_results_best_candidate():
    with tempfile.TemporaryDirectory() as d:
        result = os.path.join(d, "search.json")
        scenario = os.path.join(EX, "search-llama3-70b-64xh100.yaml")
        r = cli("search", scenario, "--max-candidates", "300", "--json", result, "--set", "search.zero_stage=[1]")
        assert r.returncode == 0, r.stderr
        ranking = json.load(open(result))["ranking"]
        assert ranking
        r = cli("export", result, "--for", "megatron")
        assert r.returncode == 0, r.stderr
        assert "pretrain_gpt.py" in r.stdout and "--use-distributed-optimizer" in r.stdout
        assert cli("export", result, "--for", "megatron", "--rank", str(len(ranking) + 1)).returncode == 2


def test_errors_name_the_key_and_write_nothing():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "megatron.sh")
        r = cli("export", os.path.join(EX, "quickstart.yaml"), "--for", "megatron", "--set", "training.schedule=zb-h1",
                "-o", out)
        assert r.returncode == 2 and "training.schedule" in r.stderr and not os.path.exists(out)
        r = cli("export", os.path.join(EX, "quickstart.yaml"), "--for", "deepspeed")
        assert r.returncode == 2 and "--for: unknown framework 'deepspeed'" in r.stderr
        r = cli("export", os.path.join(EX, "quickstart.yaml"), "--for", "vllm")
        assert r.returncode == 2 and "vllm runs serving" in r.stderr
        broken = os.path.join(d, "broken.json")
        open(broken, "w").write('{"ranking": [0], "candidates": [')
        r = cli("export", broken, "--for", "megatron")
        assert r.returncode == 2 and "broken.json" in r.stderr
    with pytest.raises(fathom.InputError, match="training.schedule"):
        fathom.export(os.path.join(EX, "quickstart.yaml"), "megatron", training__schedule="zb-h1")
