#!/usr/bin/env python3
"""Generates the dated results the READMEs used to quote: each report runs fathom's own commands on
the bundled scenarios and the shared measurements, and writes tools/reports/<name>.md with the
commands, the commit, the date and the machine, then the output. The READMEs describe what each
command shows and link here; a number in a report is only as current as its header says.

usage: generate.py BUILD_DIR [NAME ...]   (no NAME: every report; `--list` names them)
Run from anywhere; BUILD_DIR holds the `fathom` binary (and `fathom_bench` for the bench report).
"""
import datetime
import os
import pathlib
import platform
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tools" / "reports"
MEASURED = ROOT.parent / "shared" / "reference" / "measured.yaml"
EX = "scenarios/examples"

# Each report: (name, title, what it shows, [commands]); a command is the argument list after the
# binary, run from the repository root ("fathom" or "fathom_bench" first).
REPORTS = [
    ("compare", "Predictions against the shared measurements",
     "Every case of shared/reference/measured.yaml (headline measurements and other_metrics), the error "
     "of each, the fields each source states that fathom does not model, and the median, p90 and largest "
     "|error| per kind of case.",
     [["fathom", "compare", str(MEASURED), "--other-metrics"]]),
    ("rank-plans", "Where each published training plan ranks",
     "For each training case, a plan search around the published plan (tp within a node, pp, vp, "
     "micro-batch, recomputation) and where the published plan ranks by predicted throughput.",
     [["fathom", "compare", str(MEASURED), "--rank-plans"]]),
    ("search", "Training plan search",
     "The bundled training search (Llama 3 70B on 64 H100) and the adaptive run (COPUS: Llama 3 8B on "
     "512 H100 as the gradient noise scale grows).",
     [["fathom", "search", f"{EX}/search-llama3-70b-64xh100.yaml", "--threads", "2"],
      ["fathom", "search", f"{EX}/adaptive-llama3-8b-512xh100.yaml"]]),
    ("serving-search", "Serving layout search",
     "The bundled serving search (Llama 3.1 70B on up to 64 H100 or H200, aggregated and every xPyD "
     "split) ranked by cost per 1,000 requests meeting the SLOs.",
     [["fathom", "search", f"{EX}/search-serving-llama3-70b-64xh100.yaml", "--threads", "2"]]),
    ("network", "What the network does to a step",
     "Llama 3 70B on 256 H100 under the analytical network and on the SimGrid fabric with each routing "
     "and topology; the MoE all-to-all of Qwen3-30B-A3B across two leaves as the uplinks are "
     "oversubscribed; two jobs sharing one fabric, packed and interleaved.",
     [["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml", "--network", "analytical"],
      ["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml"],
      ["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml", "--set", "cluster.scale_out.routing=spray"],
      ["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml", "--set", "cluster.scale_out.routing=dmodk"],
      ["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml", "--set",
       "cluster.scale_out.topology=rail-optimized"],
      ["fathom", "run", f"{EX}/network-llama3-70b-fat-tree.yaml", "--set", "cluster.scale_out.topology=dragonfly"]]
     + [["fathom", "run", f"{EX}/moe-qwen3-30b-16xh100.yaml", "--set", "cluster.scale_out.topology=fat-tree-2",
         "--set", "cluster.scale_out.nodes_per_leaf=1", "--set", f"cluster.scale_out.oversubscription={o}",
         "--network", net] + (["--set", "cluster.scale_out.routing=ecmp"] if net == "simgrid" else [])
        for o in (1, 2, 4) for net in ("analytical", "simgrid")]
     + [["fathom", "share", f"{EX}/shared-fabric-llama3-70b.yaml", f"{EX}/shared-fabric-llama3-8b.yaml",
         "--placement", p] for p in ("packed", "interleaved")]),
    ("bench", "Simulator speed",
     "fathom_bench on this machine: the event engine, one training step of published-scale plans (closed "
     "forms and SimGrid), the serving simulation, the flow network's scaling and the plan searches, each "
     "workload's growth exponent over three sizes, and 10 million requests streamed from a trace.",
     [["fathom_bench"]]),
]


def git(*args):
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run(build, command):
    binary = str(pathlib.Path(build).resolve() / command[0])
    start = time.perf_counter()
    done = subprocess.run([binary, *command[1:]], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"generate.py: `{' '.join(command)}` failed ({done.returncode}):\n{done.stderr}")
    return done.stdout, seconds


def write(build, name, title, what, commands):
    # The reports themselves do not count: regenerating them rewrites every one.
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no", "--", ".",
                                                 ":!tools/reports") else ""
    header = [f"# {title}", "",
              f"Generated by `python3 tools/reports/generate.py BUILD {name}` at commit {git('rev-parse', '--short', 'HEAD')}"
              f"{dirty}, {datetime.date.today().isoformat()}, on {os.cpu_count()} cores ({platform.machine()}, "
              f"{platform.system()}). {what}", ""]
    body = []
    for command in commands:
        text, seconds = run(build, command)
        body += [f"## `{' '.join(command).replace(str(ROOT.parent) + '/', '../')}` ({seconds:.1f} s)", "", "```",
                 text.rstrip(), "```", ""]
    (OUT / f"{name}.md").write_text("\n".join(header + body))
    print(f"wrote tools/reports/{name}.md")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        for name, title, _, _ in REPORTS:
            print(f"{name:16} {title}")
        return 0
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build, wanted = sys.argv[1], set(sys.argv[2:])
    unknown = wanted - {r[0] for r in REPORTS}
    if unknown:
        print(f"generate.py: unknown report(s) {', '.join(sorted(unknown))}; `--list` names them", file=sys.stderr)
        return 2
    for name, title, what, commands in REPORTS:
        if not wanted or name in wanted:
            write(build, name, title, what, commands)
    return 0


if __name__ == "__main__":
    sys.exit(main())
