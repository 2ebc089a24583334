// The command and option tables of the `fathom` CLI, and the help texts written from them.
#include "tools/cli/commands.h"

#include <algorithm>
#include <cstring>

namespace fathom::cli {

const std::vector<OptionSpec>& option_table() {
    static const std::vector<OptionSpec> all = {
        {"json", 0, "FILE", "write the results as JSON"},
        {"html", 0, "FILE", "write a self-contained HTML report with charts (opens offline)"},
        {"trace", 0, "FILE", "write a Chrome/Perfetto timeline of the step or the serving run"},
        {"run-trace", 0, "FILE", "write the whole run's Chrome/Perfetto timeline (its first seed)"},
        {"requests", 0, "FILE", "serving: write the per-request CSV"},
        {"set", 0, "KEY=VALUE", "override a scenario key (repeatable; `fathom list keys` lists them)"},
        {"collective-algorithm", 0, "NAME", "force one collective algorithm (`fathom list collectives`)"},
        {"network", 0, "BACKEND", "analytical or simgrid (sets cluster.network; compare: every case's)"},
        {"device", 0, "ID", "the accelerator the measurements were taken on (`fathom list hardware`)"},
        {"placement", 0, "HOW", "packed or interleaved: how the jobs' nodes are laid out"},
        {"threads", 0, "N", "worker threads (default: the machine's); results are the same at any count"},
        {"max-candidates", 0, "N", "only the first N candidates"},
        {"time-limit", 0, "S", "stop enumerating and starting candidates S seconds after the start"},
        {"max-tasks", 0, "N", "the most tasks a training step's replay may hold (default 1e8, ~17 GB)"},
        {"max-requests", 0, "N", "the most requests a serving simulation may hold (default 1e7, ~4 GB)"},
        {"other-metrics", 0, nullptr, "also predict each case's other_metrics entries (variants), reported apart"},
        {"rank-plans", 0, nullptr, "rank each training case's published plan in a search around it"},
        {"ops", 0, nullptr, "also print each row's ops with their predicted times"},
        {"case", 0, "ID", "only this case, with its plan, assumptions and per-stage breakdown"},
        {"intervals", 0, "FILE", "write the 90% validation bands of the residuals (scenarios/intervals.yaml)"},
        {"for", 0, "FRAMEWORK", "export: megatron, nemo, torchtitan (training); vllm, sglang, trtllm (serving)"},
        {"rank", 0, "N", "export: the search result's candidate of rank N (default 1, the best)"},
        {"from", 0, "TOOL",
         "import: vllm-bench, sglang-bench, genai-perf, aiperf, nccl-tests, megatron-log, nemo-log, "
         "torch-profiler, nsys-kernels (default: recognized)"},
        {"scenario", 0, "FILE", "import: the scenario the file ran (its model, cluster and plan)"},
        {"id", 0, "ID", "import: the case's id (default: the file's name)"},
        {"out", 'o', "FILE", "output file"},
        {"help", 'h', nullptr, "this help"},
    };
    return all;
}

namespace {

constexpr const char* kExport =
    "the plan as the framework takes it: Megatron-LM arguments, NeMo config overrides, a torchtitan\n"
    "TOML, vllm serve / SGLang / trtllm-serve command lines (one per pool when disaggregated);\n"
    "from a scenario, or a `fathom search --json` result's candidate (--rank N); -o writes the\n"
    "file (a directory for several); a plan the framework cannot express is an error naming its key";
constexpr const char* kImport =
    "a benchmark's result (vLLM bench serve JSON, SGLang bench_serving JSONL, GenAI-Perf or AIPerf\n"
    "export JSON), nccl-tests output or a Megatron-LM or NeMo training log as measured-format cases,\n"
    "the scenario's model, cluster and plan filling in what the file does not say; `fathom compare`\n"
    "then checks fathom against those measurements. A layer's kernel profile (torch.profiler table or\n"
    "Chrome trace, nsys cuda_gpu_kern_sum CSV) becomes layers.csv rows, kernel time per op class, for\n"
    "`fathom calibrate layers`";
constexpr const char* kShare =
    "training jobs on one fabric (the first scenario's cluster, simulated as flows): each job's\n"
    "step alone on its nodes and with the others running, and its slowdown";
constexpr const char* kList =
    "list catalog entries, registered algorithms, or every scenario key (a markdown table);\n"
    "without a category, all but the keys";
constexpr const char* kCompletion =
    "print a shell completion script (commands, their options, scenario keys for --set);\n"
    "bash: source <(fathom completion bash); zsh: fathom completion zsh > ~/.zfunc/_fathom";
constexpr const char* kRun =
    "predict one training step (and, with a `run` section, the whole run to its target over\n"
    "seeds), or serve a scenario's traffic (kind: serving); --json writes the metrics, --trace a\n"
    "Perfetto timeline of the step or the serving run, --run-trace one of the whole run (its first\n"
    "seed, at day scale), --requests (serving) the per-request CSV; --network simgrid costs\n"
    "collectives as flows sharing the topology graph's links (cluster.network)";
constexpr const char* kSearch =
    "every plan of the scenario's `search` section, pruned by plan checks and memory, the rest\n"
    "simulated in parallel and ranked; training (parallel degrees, micro and global batch,\n"
    "ZeRO, recompute, schedule, dtype) by goodput, throughput or cost; serving (device type,\n"
    "tp, pp, replicas, xPyD disaggregation, policy, batch limits) by SLO-meeting goodput per\n"
    "GPU, throughput, cost or capacity; -o writes every candidate as CSV, --json as JSON;\n"
    "identical results at any thread count";
constexpr const char* kCompare =
    "predict every case of a measurement file (measured-format v1) and report the errors and\n"
    "the 90% bands they give per regime (--intervals writes them: scenarios/intervals.yaml);\n"
    "--other-metrics adds each case's further measurements (with their variants), reported apart;\n"
    "--case ID runs one case and shows the plan it ran, its assumptions and per-stage breakdown;\n"
    "--rank-plans searches the plans around each training case's published one and reports\n"
    "where it ranks and how much faster fathom's best is predicted to be";
constexpr const char* kCalibrate =
    "fit: fit a per-op cost table from kernel measurements (tools/calibrate) and report the\n"
    "roofline's and the table's per-op errors against them (-o writes the table);\n"
    "layers: measured whole layers (tools/calibrate/layers.py) against fathom's per-op sums,\n"
    "roofline and (when table.yaml lies beside the CSV) the calibrated table, and each op class's\n"
    "kernel time where the rows give it (`fathom import` of a kernel profile); --ops lists each\n"
    "row's ops;\n"
    "refit: the device's constants refitted to a measurement file (`fathom import`'s cases from your\n"
    "own benchmarks, or any): the sustained clock (training cases), the serving clock (serving),\n"
    "the fabric's or NIC's bus-bandwidth efficiency (nccl-tests), each with its error before and\n"
    "after and leave-one-out; -o DIR writes the refitted catalog files to copy over the data directory";

}  // namespace

const std::vector<CommandSpec>& command_table() {
    static const std::vector<CommandSpec> all = {
        {"run",
         "SCENARIO.yaml",
         kRun,
         {"json", "html", "trace", "run-trace", "requests", "network", "set", "collective-algorithm", "max-tasks",
          "max-requests"},
         Positional::Yaml,
         {}},
        {"topology",
         "SCENARIO.yaml",
         "the cluster as a graph: a summary, and GraphViz DOT (default SCENARIO-name.dot)",
         {"out", "set"},
         Positional::Yaml,
         {}},
        {"share",
         "TRAINING.yaml TRAINING.yaml ...",
         kShare,
         {"placement", "json", "set", "collective-algorithm", "max-tasks"},
         Positional::Yaml,
         {}},
        {"capacity",
         "SERVING.yaml",
         "the highest request rate whose SLO attainment meets slo.target (bisection, several seeds)",
         {"json", "html", "network", "set", "collective-algorithm", "max-requests"},
         Positional::Yaml,
         {}},
        {"search",
         "SCENARIO.yaml",
         kSearch,
         {"threads", "max-candidates", "time-limit", "json", "html", "out", "network", "set", "collective-algorithm",
          "max-tasks", "max-requests"},
         Positional::Yaml,
         {}},
        {"validate",
         "SCENARIO.yaml",
         "check a scenario without running it",
         {"network", "set", "max-tasks", "max-requests"},
         Positional::Yaml,
         {}},
        {"list", "[CATEGORY]", kList, {}, Positional::Category, {}},
        {"compare",
         "MEASURED.yaml",
         kCompare,
         {"json", "html", "other-metrics", "case", "network", "rank-plans", "intervals", "threads",
          "collective-algorithm", "max-tasks", "max-requests"},
         Positional::Yaml,
         {}},
        {"calibrate",
         "fit MEASUREMENTS.csv | layers LAYERS.csv | refit MEASURED.yaml",
         kCalibrate,
         {"device", "out", "ops"},
         Positional::Csv,
         {"fit", "layers", "refit"}},
        {"export",
         "SCENARIO.yaml|SEARCH.json --for FRAMEWORK",
         kExport,
         {"for", "rank", "out", "set"},
         Positional::Any,
         {}},
        {"import",
         "FILE [--scenario SCENARIO.yaml]",
         kImport,
         {"from", "scenario", "id", "set", "out"},
         Positional::Any,
         {}},
        {"completion", "bash|zsh", kCompletion, {}, Positional::Subcommand, {"bash", "zsh"}},
    };
    return all;
}

const CommandSpec* find_command(const std::string& name) {
    for (const CommandSpec& c : command_table())
        if (name == c.name) return &c;
    return nullptr;
}

const OptionSpec* find_option(const std::string& name) {
    for (const OptionSpec& o : option_table())
        if (name == o.name) return &o;
    return nullptr;
}

const char* exit_codes_text() {
    return "exit status: 0 success (an out-of-memory plan is a result, not an error); 2 bad input (the\n"
           "message names the file, line and key), nothing written; 1 internal error\n";
}

namespace {

// Each line of `text` indented by `indent` spaces.
std::string indented(const char* text, int indent) {
    std::string out(static_cast<size_t>(indent), ' ');
    for (const char* p = text; *p; ++p) {
        out += *p;
        if (*p == '\n' && p[1]) out.append(static_cast<size_t>(indent), ' ');
    }
    return out + "\n";
}

std::string option_usage(const OptionSpec& o) {
    std::string s = o.short_name ? std::string("-") + o.short_name + ", " : std::string();
    s += std::string("--") + o.name;
    if (o.value) s += std::string(" ") + o.value;
    return s;
}

}  // namespace

std::string general_usage() {
    std::string s =
        "usage: fathom <command> [options]\n       fathom <command> --help\n       fathom --version\n\n"
        "commands:\n";
    for (const CommandSpec& c : command_table()) {
        // The synopsis and the options, wrapped at 100 columns.
        std::string line = std::string("  ") + c.name + " " + c.synopsis;
        for (const char* o : c.options) {
            const std::string word = std::string("[--") + o + (find_option(o)->value ? " ...]" : "]");
            if (line.size() + 1 + word.size() > 100) {
                s += line + "\n";
                line = "     ";
            }
            line += " " + word;
        }
        s += line + "\n" + indented(c.description, 6);
    }
    return s + "\n" + exit_codes_text();
}

std::string command_usage(const CommandSpec& c) {
    std::string s = std::string("usage: fathom ") + c.name + " " + c.synopsis +
                    (c.options.empty() ? "" : " [options]") + "\n\n" + indented(c.description, 2);
    if (!c.options.empty()) {
        s += "\noptions:\n";
        size_t width = 0;
        for (const char* o : c.options) width = std::max(width, option_usage(*find_option(o)).size());
        for (const char* o : c.options) {
            const OptionSpec& spec = *find_option(o);
            const std::string u = option_usage(spec);
            s += "  " + u + std::string(width - u.size() + 2, ' ') + spec.help + "\n";
        }
    }
    return s + "\n" + exit_codes_text();
}

}  // namespace fathom::cli
