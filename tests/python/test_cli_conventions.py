# The CLI's conventions (issue 42): --version, COMMAND --help for every command and only a
# command's own options accepted, the documented exit codes, shell completion written from the
# command and key tables (bash always; zsh where it is installed), and `python -m fathom` as the
# same program as `fathom`.
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

import fathom

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
QUICKSTART = os.path.join(SRC, "scenarios", "examples", "quickstart.yaml")
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env or CLI_ENV)


def commands():
    """The command names `fathom --help` lists (its "commands:" block)."""
    out = cli("--help").stdout
    block = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  ([a-z]+) ", block, re.M)]


def test_version_names_the_commit_catalog_and_calibration_sets():
    r = cli("--version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    m = re.match(r"fathom (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}(-dirty)?|unknown), \w", lines[0])
    assert m, lines[0]
    assert m.group(1) == fathom.__version__  # the package and the CLI are one version
    if shutil.which("git") and os.path.isdir(os.path.join(SRC, ".git")):
        head = subprocess.run(["git", "-C", SRC, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
        if head.returncode == 0:  # the build's commit (a build of an older commit would differ: rebuild)
            assert m.group(2).split("-")[0] == head.stdout.strip()
    data = fathom.data_version()
    assert re.match(r"catalog +%s \((\d+) files under " % data["catalog"], lines[1]), lines[1]
    assert data["catalog_files"] > 50
    # Every measured table the catalog names is listed with its fingerprint and campaign date.
    devices = {c["device"]: c for c in data["calibration"]}
    assert "h100-sxm-80gb" in devices and re.match(r"\d{4}-\d\d-\d\d$", devices["h100-sxm-80gb"]["date"])
    for c in data["calibration"]:
        assert any(c["device"] in l and c["fingerprint"] in l for l in lines[2:]), c
    assert cli("--version", "run").returncode == 2


def test_every_command_has_its_own_help():
    names = commands()
    assert {"run", "validate", "capacity", "search", "compare", "list", "calibrate", "topology", "share",
            "completion"} <= set(names)
    for name in names:
        r = cli(name, "--help")
        assert r.returncode == 0, (name, r.stderr)
        assert r.stdout.startswith("usage: fathom " + name), name
        assert "exit status: 0 success" in r.stdout
        assert cli("help", name).stdout == r.stdout  # `fathom help COMMAND` is the same page
        assert cli(name, "-h").stdout == r.stdout


def test_an_option_of_another_command_is_refused_naming_the_commands_own():
    r = cli("run", QUICKSTART, "--threads", "2")
    assert r.returncode == 2 and r.stdout == ""
    assert "--threads is not an option of `fathom run`" in r.stderr and "--json" in r.stderr
    r = cli("list", "--json", "x.json")
    assert r.returncode == 2 and "it takes none" in r.stderr
    # Values are checked before anything runs.
    r = cli("search", QUICKSTART, "--threads", "two")
    assert r.returncode == 2 and "--threads: 'two' is not a whole number" in r.stderr
    r = cli("search", QUICKSTART, "--time-limit", "5x")
    assert r.returncode == 2 and "--time-limit" in r.stderr


def test_exit_codes():
    none = cli()
    assert none.returncode == 2 and none.stdout == "" and none.stderr.startswith("usage: fathom")
    assert cli("--help").returncode == 0
    assert cli("frobnicate").returncode == 2
    assert cli("validate", QUICKSTART).returncode == 0
    assert cli("validate", os.path.join(SRC, "no-such-file.yaml")).returncode == 2


def bash_complete(script, line):
    driver = script + '\nCOMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; _fathom; printf "%s\\n" "${COMPREPLY[@]}"\n'
    r = subprocess.run(["bash", "-c", driver, "bash", line], capture_output=True, text=True, cwd=SRC)
    assert r.returncode == 0, r.stderr
    return [w for w in r.stdout.splitlines() if w]


def test_bash_completion_from_the_tables():
    r = cli("completion", "bash")
    assert r.returncode == 0
    script = r.stdout
    assert bash_complete(script, "fathom ") == commands() + ["--help", "--version"]
    assert bash_complete(script, "fathom cap") == ["capacity"]
    assert bash_complete(script, "fathom search --max-") == ["--max-candidates", "--max-tasks", "--max-requests"]
    assert "--threads" not in bash_complete(script, "fathom run --")  # only run's own options
    # --set: every leaf key of the key table, then a choice key's values (bash completes only
    # what follows the '=').
    keys = bash_complete(script, "fathom run --set ")
    assert "parallel.tp=" in keys and "serving.policy=" in keys and len(keys) > 100
    assert set(bash_complete(script, "fathom run --set serving.policy=")) >= {"vllm", "sarathi"}
    assert bash_complete(script, "fathom run --network s") == ["simgrid"]
    assert "ring" in bash_complete(script, "fathom run --collective-algorithm ")
    assert bash_complete(script, "fathom list mod") == ["models"]
    assert bash_complete(script, "fathom calibrate ") == ["fit", "layers", "refit"]
    # refit reads a measurement file (YAML); fit and layers CSVs.
    assert bash_complete(script, "fathom calibrate refit tests/data/measured_fr") == ["tests/data/measured_frozen.yaml"]
    assert bash_complete(script, "fathom run scenarios/examples/quicks") == ["scenarios/examples/quickstart.yaml"]
    assert cli("completion", "fish").returncode == 2


def test_zsh_completion_from_the_tables():
    if not shutil.which("zsh"):
        pytest.skip("zsh is not installed (tools/install_deps.sh installs it)")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "_fathom")
        with open(path, "w") as f:
            f.write(cli("completion", "zsh").stdout)
        assert subprocess.run(["zsh", "-n", path]).returncode == 0
        probe = (f"autoload -U compinit; compinit -u -d {d}/zcompdump; source {path}; print -r -- $_comps[fathom]; "
                 "_fathom_candidates run --set serving.policy=v; _fathom_candidates '' '' compl")
        r = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == ["_fathom", "serving.policy=vllm", "completion"]


def test_python_m_fathom_is_the_cli():
    if os.environ.get("LD_PRELOAD"):
        # tools/sanitize_and_fuzz.sh: the extension needs the sanitizer runtime preloaded, and the CLI
        # that `python -m fathom` then runs carries its own (static) one; the plain build checks this.
        pytest.skip("under LD_PRELOAD (the sanitizer stage): python -m fathom is checked by the plain build")
    env = {k: v for k, v in CLI_ENV.items() if k != "FATHOM_CLI"}  # the executable beside the package
    py = [sys.executable, "-m", "fathom"]
    r = subprocess.run(py + ["--version"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == cli("--version").stdout
    r = subprocess.run(py + ["validate", os.path.join(SRC, "no-such-file.yaml")], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 2 and "no-such-file.yaml" in r.stderr
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
        assert subprocess.run(py + ["run", QUICKSTART, "--json", a], capture_output=True, env=env).returncode == 0
        assert cli("run", QUICKSTART, "--json", b).returncode == 0
        assert open(a).read() == open(b).read()
