#!/usr/bin/env bash
# Installs fathom's build and test dependencies from Debian 12 (bookworm) packages.
# Idempotent: packages already present are skipped by apt. Must run as root.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libfyaml-dev libeigen3-dev libboost-graph-dev libboost-program-options-dev
  libsimgrid-dev catch2 pybind11-dev python3-pybind11 python3-dev python3-pytest python3-yaml
  libbenchmark-dev nlohmann-json3-dev
  openmpi-bin libopenmpi-dev libboost-mpi-dev
  python3-numpy python3-pandas python3-matplotlib python3-nbclient python3-nbformat python3-ipykernel
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14 universal-ctags
  git zsh  # git: the commit `fathom --version` names; zsh: the completion script's test
  # The HTML report's charting library (plotly.js 2.x, inlined in each page: /usr/share/python3-plotly/plotly.js)
  # and the headless browser its test renders the pages in (tests/python/browser.py)
  python3-plotly chromium-headless-shell
  python3-venv  # the suite's fresh-venv `pip install .` (tests/install/test_pip_install.py)
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "install_deps: need root to install: ${missing[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
