# A user's first steps (issue 42): a fresh virtual environment, `pip install .` of this source tree
# (scikit-build-core, from PyPI like the user's pip would fetch it, builds the extension and the CLI
# over the Debian packages tools/install_deps.sh installs), then, from another directory and
# without this checkout's environment (no PYTHONPATH, no FATHOM_DATA_DIR), `import fathom;
# fathom.run(...)` and `python -m fathom`: the same step time as the CLI built here, the catalogs
# from the wheel, the HTML report's charting library inside the program. Skipped, saying why, only
# where the build tools or PyPI are out of reach. A whole Release build: ~15 minutes on 2 cores.
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
QUICKSTART = os.path.join(SRC, "scenarios", "examples", "quickstart.yaml")
# A user's shell: none of the suite's variables pointing into this checkout.
USER_ENV = {k: v for k, v in os.environ.items()
            if k not in ("LD_PRELOAD", "PYTHONPATH", "FATHOM_DATA_DIR", "FATHOM_SOURCE_DIR", "FATHOM_CLI")}


def missing_tools():
    need = [t for t in ("cmake", "c++") if shutil.which(t) is None]
    if shutil.which("ninja") is None and shutil.which("make") is None:
        need.append("ninja or make")
    try:
        import venv  # noqa: F401
        import ensurepip  # noqa: F401
    except ImportError:
        need.append("python3-venv")
    return need


@pytest.fixture(scope="module")
def venv_python():
    need = missing_tools()
    if need:
        pytest.skip("build tools absent: " + ", ".join(need) + " (tools/install_deps.sh installs them)")
    with tempfile.TemporaryDirectory() as d:
        env_dir = os.path.join(d, "venv")
        subprocess.run([sys.executable, "-m", "venv", env_dir], check=True, env=USER_ENV)
        py = os.path.join(env_dir, "bin", "python")
        probe = subprocess.run([py, "-m", "pip", "download", "-q", "--no-deps", "-d", os.path.join(d, "probe"),
                                "scikit-build-core"], capture_output=True, text=True, env=USER_ENV, timeout=300)
        if probe.returncode != 0:
            pytest.skip("PyPI out of reach (pip cannot fetch scikit-build-core): " + probe.stderr.strip()[-300:])
        env = dict(USER_ENV, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
        r = subprocess.run([py, "-m", "pip", "install", "-q", SRC], capture_output=True, text=True, env=env,
                           timeout=3600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
        yield py, d


def test_import_and_run_from_the_wheel(venv_python):
    py, d = venv_python
    code = ("import json, fathom\n"
            f"r = fathom.run({QUICKSTART!r})\n"
            "print(json.dumps({'file': fathom.__file__, 'step': r['step_time_s'], 'version': fathom.__version__,"
            " 'data': fathom.data_version()}))\n")
    r = subprocess.run([py, "-c", code], capture_output=True, text=True, env=USER_ENV, cwd=d)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert os.path.join(d, "venv") in got["file"]  # the installed package, not this checkout's
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "q.json")
        subprocess.run([CLI, "run", QUICKSTART, "--json", out], check=True, capture_output=True, env=USER_ENV)
        with open(out) as f:
            expected = json.load(f)["step_time_s"]
    assert got["step"] == pytest.approx(expected, rel=1e-12)  # a Release build of the same core


def test_python_m_fathom_from_the_wheel(venv_python):
    py, d = venv_python
    r = subprocess.run([py, "-m", "fathom", "--version"], capture_output=True, text=True, env=USER_ENV, cwd=d)
    assert r.returncode == 0 and r.stdout.startswith("fathom "), r.stderr
    page = os.path.join(d, "step.html")
    r = subprocess.run([py, "-m", "fathom", "run", QUICKSTART, "--html", page], capture_output=True, text=True,
                       env=USER_ENV, cwd=d)
    assert r.returncode == 0, r.stderr
    with open(page, encoding="utf-8") as f:
        text = f.read()
    assert "plotly.js v2" in text and 'id="chart-timeline"' in text
