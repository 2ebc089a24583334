// nccl-tests output (github.com/NVIDIA/nccl-tests, src/common.cu): the header (threads, GPUs,
// iterations), one "#  Rank" line per rank (its host and device), then a row per message size with
// out-of-place and in-place time, algbw and busbw. A microbenchmark case: busbw at the largest size
// (out of place) as the headline, every other size and the in-place figure as variants. The
// collective comes from the "Collective test starting" line, or the file's name
// (all_reduce_perf...).
#include "scenarios/imports/importers.h"
#include "scenarios/launch/launch.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

struct Row {
    int line = 0;
    int64_t size = 0;
    std::string type, redop;
    double busbw_out = 0, busbw_in = 0;
};

// nccl-tests' binaries and the format's op names.
constexpr std::pair<const char*, const char*> kOps[] = {
    {"all_reduce", "allreduce"}, {"all_gather", "allgather"}, {"reduce_scatter", "reducescatter"},
    {"alltoall", "alltoall"},    {"broadcast", "broadcast"},  {"sendrecv", "p2p"},
};

std::string op_of(const Source& file) {
    const std::string name = std::filesystem::path(file.path).filename().string();
    const size_t start = file.text.find("Collective test starting:");
    const std::string said =
        start == std::string::npos ? "" : file.text.substr(start, file.text.find('\n', start) - start);
    for (const auto& [binary, op] : kOps)
        if (said.find(binary) != std::string::npos || name.find(binary) != std::string::npos) return op;
    fail(file, "",
         "which collective? the output does not say: name the file after the test (all_reduce_perf.txt, ...)");
}

// The format's accelerator id of a device name nccl-tests prints ("NVIDIA H100 80GB HBM3").
std::string accelerator_of(const std::string& device) {
    const std::pair<const char*, const char*> known[] = {
        {"H100 80GB HBM3", "h100-sxm-80gb"},
        {"H100 PCIe", "h100-pcie-80gb"},
        {"H800", "h800-sxm-80gb"},
        {"H200", "h200-sxm-141gb"},
        {"A100-SXM4-80GB", "a100-sxm-80gb"},
        {"A100-SXM4-40GB", "a100-sxm-40gb"},
        {"B200", "b200"},
    };
    for (const auto& [name, id] : known)
        if (device.find(name) != std::string::npos) return id;
    return "";
}

std::string fabric_of(const std::string& accelerator) {
    if (accelerator.rfind("h800", 0) == 0) return "nvlink4-h800";
    if (accelerator.rfind("h1", 0) == 0 || accelerator.rfind("h2", 0) == 0) return "nvlink4-nvswitch";
    if (accelerator.rfind("a100", 0) == 0) return "nvlink3-nvswitch";
    if (accelerator == "b200") return "nvlink5-nvswitch";
    return "";
}

// The format's dtype of nccl-tests' type column; "" for one the format has no name for (double,
// the integer types).
std::string dtype_of(const std::string& type) {
    if (type == "float") return "fp32";
    if (type == "half") return "fp16";
    if (type == "bfloat16") return "bf16";
    return "";
}

// The output's ranks (their hosts and device) and its result rows.
struct Output {
    std::string device;
    std::set<std::string> hosts;
    int ranks = 0;
    std::vector<Row> rows;
};

Output parse(const Source& file) {
    Output o;
    std::istringstream in(file.text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        std::istringstream w(line);
        std::string first;
        w >> first;
        if (first == "#") {
            std::string word;
            w >> word;
            if (word != "Rank") continue;
            ++o.ranks;  // "#  Rank  0 Group  0 Pid 123 on host device  0 [0x18] NVIDIA H100 80GB HBM3"
            const size_t on = line.find(" on "), bracket = line.find(']');
            if (on != std::string::npos) {
                std::istringstream h(line.substr(on + 4));
                std::string host;
                h >> host;
                o.hosts.insert(host);
            }
            if (bracket != std::string::npos) o.device = line.substr(line.find_first_not_of(' ', bracket + 1));
            continue;
        }
        if (first.empty() || first[0] == '#' || !std::isdigit(static_cast<unsigned char>(first[0]))) continue;
        // size count type redop root time algbw busbw #wrong time algbw busbw #wrong
        std::vector<std::string> f{first};
        for (std::string x; w >> x;) f.push_back(x);
        if (f.size() < 13) fail(file, "", "a result row has " + std::to_string(f.size()) + " columns, not 13", number);
        Row r;
        r.line = number;
        try {
            r.size = std::stoll(f[0]);
            r.busbw_out = std::stod(f[7]);
            r.busbw_in = std::stod(f[11]);
        } catch (const std::exception&) {
            fail(file, "busbw", "not a number in the result row", number);
        }
        r.type = f[2];
        r.redop = f[3];
        if (f[8] != "0" || f[12] != "0") fail(file, "#wrong", "the test found wrong results in this row", number);
        o.rows.push_back(r);
    }
    if (o.rows.empty()) fail(file, "", "no result rows: not nccl-tests output, or cut before its table");
    if (o.ranks == 0) fail(file, "", "no '#  Rank' lines: the output's header is missing");
    return o;
}

std::vector<YAML::Node> read(const Source& file, const Context& context) {
    const Output o = parse(file);
    const auto& rows = o.rows;
    const int ranks = o.ranks;
    const std::string& device = o.device;
    const std::string op = op_of(file);
    const Row& top =
        *std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.size < b.size; });
    YAML::Node c = new_case(file, context, "microbench", "nccl-tests");
    const std::string accelerator =
        context.scenario ? context.scenario->cluster.accelerator.id : accelerator_of(device);
    if (accelerator.empty())
        fail(file, "device",
             "the device '" + device + "' is not one fathom knows by name: give --scenario (its cluster)");
    c["hardware"]["accelerator"] = accelerator;
    c["hardware"]["description"] = device;
    const int nodes = std::max<int>(1, static_cast<int>(o.hosts.size()));
    c["cluster"]["gpus"] = ranks;
    c["cluster"]["nodes"] = nodes;
    c["cluster"]["gpus_per_node"] = ranks / nodes;
    const std::string fabric = context.scenario ? context.scenario->cluster.scale_up.id : fabric_of(accelerator);
    if (!fabric.empty()) c["cluster"]["intra_node"]["fabric"] = fabric;
    if (!context.scenario) c["assumed"].push_back("cluster.intra_node.fabric");
    if (nodes > 1) {
        if (context.scenario) {
            c["cluster"]["scale_out"]["fabric"] = context.scenario->cluster.nic.id;
            c["cluster"]["scale_out"]["nics_per_node"] = context.scenario->cluster.nics_per_node;
        } else {
            c["missing"].push_back("cluster.scale_out");
            c["completeness"] = "partial";
        }
    }
    YAML::Node b = c["benchmark"];
    b["op"] = op;
    b["implementation"] = "nccl-tests";
    b["library"] = "nccl";
    b["dtype"] = dtype_of(top.type);
    if (b["dtype"].as<std::string>().empty())
        fail(file, "type", "'" + top.type + "' is none of the measured format's dtypes (float, half, bfloat16)",
             top.line);
    if (op != "alltoall") b["size_bytes"] = top.size;
    b["ranks"] = ranks;
    b["algorithm"] = "default";
    if (top.redop != "none") b["reduce_op"] = top.redop;
    b["in_place"] = false;
    c["metric"] = "busbw_gb_per_s";
    c["value"] = launch::yaml_number(top.busbw_out);
    c["unit"] = "GB/s";
    c["statistic"] = "mean";
    YAML::Node in_place = metric("busbw_gb_per_s", top.busbw_in, "GB/s", "mean");
    in_place["variant"]["benchmark.in_place"] = true;
    c["other_metrics"].push_back(in_place);
    for (const Row& r : rows) {
        if (r.size == top.size || r.size == 0) continue;
        YAML::Node m = metric("busbw_gb_per_s", r.busbw_out, "GB/s", "mean");
        m["variant"]["benchmark.size_bytes"] = r.size;
        c["other_metrics"].push_back(m);
    }
    if (c["assumed"] && c["completeness"].as<std::string>() == "complete") c["completeness"] = "mostly_complete";
    return {c};
}

}  // namespace

Importer nccl_importer() {
    return {"nccl-tests output",
            [](const Source& f) {
                return f.text.find("#  Rank") != std::string::npos && f.text.find("busbw") != std::string::npos;
            },
            read};
}

}  // namespace fathom::scenarios::imports
