#include "scenarios/catalog.h"

#include "scenarios/intervals_io.h"
#include "scenarios/preset_parse.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "sim/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#ifndef FATHOM_DEFAULT_DATA_DIR
#define FATHOM_DEFAULT_DATA_DIR "."
#endif

namespace fathom::scenarios {
namespace fs = std::filesystem;
using sim::Dimension;

std::string data_dir() {
    if (const char* env = std::getenv("FATHOM_DATA_DIR"); env && *env) return env;
    return FATHOM_DEFAULT_DATA_DIR;
}

std::vector<std::string> yaml_files(const std::string& dir) {
    std::vector<std::string> out;
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

void check_header(const Node& n, const char* kind, const std::string& file) {
    if (n.str("kind") != kind) n.fail("kind", std::string("expected kind: ") + kind);
    const std::string stem = fs::path(file).stem().string();
    if (n.str("id") != stem) n.fail("id", "id '" + n.str("id") + "' must equal the file name '" + stem + "'");
}

namespace {

// A catalog fact that is a name rather than a number ({value: id, source: "..."}).
std::string sourced_id(const Node& n, const std::string& key) {
    const Node c = n.child(key);
    c.allow_only({"value", "source"});
    if (c.str("source").empty()) c.fail("source", "empty source");
    return c.str("value");
}

// The grouped-GEMM curve (AcceleratorCalibration::grouped_relative): two dtype maps with the same
// dtypes, a ceiling in (0, 1] and a positive fill scale (rows) each.
void parse_grouped_gemm(const Node& c, hardware::AcceleratorCalibration& cal) {
    if (!c.has("grouped_gemm_relative") && !c.has("grouped_gemm_rows_scale")) return;
    const Node rel = c.child("grouped_gemm_relative"), scale = c.child("grouped_gemm_rows_scale");
    for (const auto& k : rel.keys()) {
        const auto d = sim::lookup<hardware::Dtype>(k);
        if (!d) rel.fail(k, "unknown dtype '" + k + "'");
        const double v = rel.sourced_number(k);
        if (!(v > 0 && v <= 1)) rel.fail(k, "grouped_gemm_relative must be in (0, 1]");
        if (!scale.has(k)) scale.fail(k, "grouped_gemm_rows_scale has no " + k + " entry for grouped_gemm_relative's");
        const double h = scale.sourced_number(k);
        if (!(h > 0)) scale.fail(k, "grouped_gemm_rows_scale must be positive");
        cal.grouped_gemm_relative[*d] = v;
        cal.grouped_gemm_rows_scale[*d] = h;
    }
    for (const auto& k : scale.keys())
        if (!rel.has(k)) rel.fail(k, "grouped_gemm_relative has no " + k + " entry for grouped_gemm_rows_scale's");
}

// Compute beside communication (AcceleratorCalibration::BesideComm): each op class's slowdown
// while a collective runs beside it, a number from 1 (none) to 4.
void parse_beside_comm(const Node& c, hardware::AcceleratorCalibration& cal) {
    const Node b = c.child("compute_beside_comm");
    b.allow_only({"gemm", "gemm_fp8", "attention", "memory_bound"});
    auto get = [&](const char* key) {
        const double v = b.sourced_number(key);
        if (!(v >= 1 && v <= 4)) b.fail(key, std::string(key) + " must be from 1 (no slowdown) to 4");
        return v;
    };
    cal.beside_comm = {get("gemm"), get("gemm_fp8"), get("attention"), get("memory_bound")};
}

// The tensor rate under load (sustained_clock, serving_clock), and for table-priced ops (both with
// a calibration table, neither without one).
void parse_load_clocks(const Node& n, const Node& c, hardware::AcceleratorSpec& a) {
    a.calibration.sustained_clock = c.sourced_number("sustained_clock");
    if (a.calibration.sustained_clock <= 0 || a.calibration.sustained_clock > 1)
        c.fail("sustained_clock", "sustained_clock must be in (0, 1]");
    if (c.has("serving_clock")) {
        a.calibration.serving_clock = c.sourced_number("serving_clock");
        if (!(a.calibration.serving_clock > 0 && a.calibration.serving_clock <= 1))
            c.fail("serving_clock", "serving_clock must be in (0, 1]");
    }
    const bool table = !a.calibration_table.empty();
    const std::pair<const char*, double*> clocks[] = {{"table_sustained_clock", &a.calibration.table_sustained_clock},
                                                      {"table_serving_clock", &a.calibration.table_serving_clock}};
    for (const auto& [key, value] : clocks) {
        if (!table) {
            if (c.has(key)) c.fail(key, std::string(key) + " without a calibration_table");
            continue;
        }
        if (!c.has(key)) n.fail("calibration_table", std::string("a calibration table needs calibration.") + key);
        const double v = c.sourced_number(key);
        if (!(v > 0 && v <= 1)) c.fail(key, std::string(key) + " must be in (0, 1]");
        *value = v;
    }
}

// What the accelerator's constants rest on: {value: measured | published | estimated, source}.
void parse_device_model(const Node& n, hardware::AcceleratorSpec& a) {
    const Node dm = n.child("device_model");
    a.device_model = sourced_id(n, "device_model");
    a.device_model_source = dm.str("source");
    if (a.device_model != "measured" && a.device_model != "published" && a.device_model != "estimated")
        dm.fail("value", "expected measured, published or estimated, got '" + a.device_model + "'");
}

// The accelerator's `calibration` block: the roofline's constants and the load factors.
void parse_calibration(const Node& n, hardware::AcceleratorSpec& a) {
    const Node c = n.child("calibration");
    c.allow_only({"gemm_efficiency",
                  "gemm_tile_m",
                  "gemm_tile_n",
                  "gemm_k_half",
                  "gemm_k_half_fp8",
                  "attention_fwd_efficiency",
                  "attention_bwd_efficiency",
                  "attention_seq_half",
                  "attention_fa2_relative",
                  "memory_efficiency",
                  "sustained_clock",
                  "serving_clock",
                  "attention_mla_decode_efficiency",
                  "deepgemm_efficiency",
                  "deepgemm_k_half",
                  "weight_only_efficiency",
                  "weight_only_memory_efficiency",
                  "grouped_gemm_relative",
                  "grouped_gemm_rows_scale",
                  "compute_beside_comm",
                  "table_sustained_clock",
                  "table_serving_clock"});
    const Node ge = c.child("gemm_efficiency");
    for (const auto& k : ge.keys()) {
        const auto d = sim::lookup<hardware::Dtype>(k);
        if (!d) ge.fail(k, "unknown dtype '" + k + "'");
        a.calibration.gemm_efficiency[*d] = ge.sourced_number(k);
    }
    a.calibration.gemm_tile_m = static_cast<int>(c.sourced_number("gemm_tile_m"));
    a.calibration.gemm_tile_n = static_cast<int>(c.sourced_number("gemm_tile_n"));
    a.calibration.gemm_k_half = c.sourced_number("gemm_k_half");
    if (c.has("gemm_k_half_fp8")) {
        a.calibration.gemm_k_half_fp8 = c.sourced_number("gemm_k_half_fp8");
        if (!(a.calibration.gemm_k_half_fp8 > 0)) c.fail("gemm_k_half_fp8", "gemm_k_half_fp8 must be positive");
    }
    a.calibration.attention_fwd_efficiency = c.sourced_number("attention_fwd_efficiency");
    a.calibration.attention_bwd_efficiency = c.sourced_number("attention_bwd_efficiency");
    a.calibration.attention_seq_half = c.sourced_number("attention_seq_half");
    a.calibration.attention_fa2_relative = c.sourced_number("attention_fa2_relative");
    if (!(a.calibration.attention_fa2_relative > 0 && a.calibration.attention_fa2_relative <= 1))
        c.fail("attention_fa2_relative", "attention_fa2_relative must be in (0, 1]");
    if (c.has("attention_mla_decode_efficiency")) {
        a.calibration.attention_mla_decode_efficiency = c.sourced_number("attention_mla_decode_efficiency");
        if (!(a.calibration.attention_mla_decode_efficiency > 0 && a.calibration.attention_mla_decode_efficiency <= 1))
            c.fail("attention_mla_decode_efficiency", "attention_mla_decode_efficiency must be in (0, 1]");
    }
    if (c.has("deepgemm_efficiency") || c.has("deepgemm_k_half")) {
        a.calibration.deepgemm_efficiency = c.sourced_number("deepgemm_efficiency");
        a.calibration.deepgemm_k_half = c.sourced_number("deepgemm_k_half");
        if (!(a.calibration.deepgemm_efficiency > 0 && a.calibration.deepgemm_efficiency <= 1))
            c.fail("deepgemm_efficiency", "deepgemm_efficiency must be in (0, 1]");
        if (!(a.calibration.deepgemm_k_half > 0)) c.fail("deepgemm_k_half", "deepgemm_k_half must be positive");
    }
    if (c.has("weight_only_efficiency")) {
        a.calibration.weight_only_efficiency = c.sourced_number("weight_only_efficiency");
        if (!(a.calibration.weight_only_efficiency > 0 && a.calibration.weight_only_efficiency <= 1))
            c.fail("weight_only_efficiency", "weight_only_efficiency must be in (0, 1]");
    }
    if (c.has("weight_only_memory_efficiency")) {
        double& e = a.calibration.weight_only_memory_efficiency;
        e = c.sourced_number("weight_only_memory_efficiency");
        if (!(e > 0 && e <= 1))
            c.fail("weight_only_memory_efficiency", "weight_only_memory_efficiency must be in (0, 1]");
    }
    parse_grouped_gemm(c, a.calibration);
    parse_beside_comm(c, a.calibration);
    a.calibration.memory_efficiency = c.sourced_number("memory_efficiency");
    parse_load_clocks(n, c, a);
}

hardware::AcceleratorSpec parse_accelerator(const Node& n) {
    n.allow_only({"kind", "id", "name", "vendor", "peak_dense", "memory_capacity", "memory_bandwidth", "compute_units",
                  "l2_cache", "kernel_launch_overhead", "tdp", "scale_up", "scale_out_nic", "host_link", "calibration",
                  "calibration_table", "device_model"});
    hardware::AcceleratorSpec a;
    a.id = n.str("id");
    a.name = n.str("name");
    a.vendor = n.str("vendor");
    const Node peaks = n.child("peak_dense");
    for (const auto& k : peaks.keys()) {
        const auto d = sim::lookup<hardware::Dtype>(k);
        if (!d) peaks.fail(k, "unknown dtype '" + k + "'");
        a.peak_flops[*d] = peaks.sourced_quantity(k, Dimension::FlopRate);
    }
    a.memory_capacity = n.sourced_quantity("memory_capacity", Dimension::Bytes);
    a.memory_bandwidth = n.sourced_quantity("memory_bandwidth", Dimension::Bandwidth);
    a.compute_units = static_cast<int>(n.sourced_number("compute_units"));
    a.l2_cache = n.sourced_quantity("l2_cache", Dimension::Bytes);
    a.launch_overhead = n.sourced_quantity("kernel_launch_overhead", Dimension::Time);
    a.tdp = n.sourced_quantity("tdp", Dimension::Power);
    a.scale_up = n.str("scale_up");
    if (n.has("scale_out_nic")) a.scale_out_nic = sourced_id(n, "scale_out_nic");
    if (n.has("host_link")) a.host_link = sourced_id(n, "host_link");
    if (n.has("calibration_table")) {
        // Relative to the data directory (the directory holding hardware/ and models/).
        const fs::path file =
            fs::path(n.file()).parent_path().parent_path().parent_path().parent_path() / n.str("calibration_table");
        if (!fs::is_regular_file(file)) n.fail("calibration_table", "no calibration table at '" + file.string() + "'");
        a.calibration_table = file.string();
    }
    parse_device_model(n, a);
    parse_calibration(n, a);
    return a;
}

hardware::ScaleUpSpec parse_fabric(const Node& n) {
    n.allow_only({"kind", "id", "name", "family", "topology", "bandwidth_per_gpu", "link_bandwidth", "latency",
                  "max_domain_size", "nvls", "calibration"});
    hardware::ScaleUpSpec f;
    f.id = n.str("id");
    f.name = n.str("name");
    if (n.has("family")) f.family = sourced_id(n, "family");
    const std::string topo = n.str("topology");
    const auto topology = sim::lookup<hardware::ScaleUpTopology>(topo);
    if (!topology) n.fail("topology", sim::expected_one_of(sim::choices<hardware::ScaleUpTopology>(), topo));
    f.topology = *topology;
    f.bandwidth_per_gpu = n.sourced_quantity("bandwidth_per_gpu", Dimension::Bandwidth);
    f.link_bandwidth = n.sourced_quantity("link_bandwidth", Dimension::Bandwidth);
    f.latency = n.sourced_quantity("latency", Dimension::Time);
    f.max_domain_size = static_cast<int>(n.sourced_number("max_domain_size"));
    if (n.has("nvls")) f.nvls = n.sourced_bool("nvls");
    const Node c = n.child("calibration");
    c.allow_only({"busbw_efficiency", "nvls_busbw_efficiency", "nvls_latency", "pipeline_fill_fraction",
                  "pipeline_fill_max", "step_latency", "peer_allreduce_latency", "peer_allreduce_rank_latency",
                  "peer_allreduce_bandwidth", "peer_allreduce_max_bytes"});
    f.busbw_efficiency = c.sourced_number("busbw_efficiency");
    if (c.has("nvls_busbw_efficiency")) {
        f.nvls_busbw_efficiency = c.sourced_number("nvls_busbw_efficiency");
        f.nvls_latency = c.sourced_quantity("nvls_latency", Dimension::Time);
    }
    f.fill_fraction = c.sourced_number("pipeline_fill_fraction");
    if (f.fill_fraction < 0 || f.fill_fraction > 10)
        c.fail("pipeline_fill_fraction", "expected a number from 0 to 10 (fill time over bandwidth time)");
    f.fill_max = c.sourced_quantity("pipeline_fill_max", Dimension::Bytes);
    f.step_latency = c.sourced_quantity("step_latency", Dimension::Time);
    if (c.has("peer_allreduce_bandwidth")) {  // all four together
        f.peer_allreduce_latency = c.sourced_quantity("peer_allreduce_latency", Dimension::Time);
        f.peer_allreduce_rank_latency = c.sourced_quantity("peer_allreduce_rank_latency", Dimension::Time);
        f.peer_allreduce_bandwidth = c.sourced_quantity("peer_allreduce_bandwidth", Dimension::Bandwidth);
        f.peer_allreduce_max_bytes = c.sourced_quantity("peer_allreduce_max_bytes", Dimension::Bytes);
        if (f.peer_allreduce_bandwidth <= 0) c.fail("peer_allreduce_bandwidth", "must be positive");
    }
    return f;
}

hardware::NicSpec parse_nic(const Node& n) {
    n.allow_only({"kind", "id", "name", "link", "bandwidth", "latency", "switch_latency", "calibration"});
    hardware::NicSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
    x.link = sourced_id(n, "link");
    if (x.link != "infiniband" && x.link != "roce") n.fail("link", "expected infiniband or roce, got '" + x.link + "'");
    x.bandwidth = n.sourced_quantity("bandwidth", Dimension::Bandwidth);
    x.latency = n.sourced_quantity("latency", Dimension::Time);
    x.switch_latency = n.sourced_quantity("switch_latency", Dimension::Time);
    const Node c = n.child("calibration");
    c.allow_only({"efficiency"});
    x.efficiency = c.sourced_number("efficiency");
    return x;
}

hardware::PcieSpec parse_pcie(const Node& n) {
    n.allow_only({"kind", "id", "name", "bandwidth", "latency", "calibration"});
    hardware::PcieSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
    x.bandwidth = n.sourced_quantity("bandwidth", Dimension::Bandwidth);
    x.latency = n.sourced_quantity("latency", Dimension::Time);
    const Node c = n.child("calibration");
    c.allow_only({"efficiency", "copy_latency"});
    x.efficiency = c.sourced_number("efficiency");
    if (c.has("copy_latency")) x.copy_latency = c.sourced_quantity("copy_latency", Dimension::Time);
    return x;
}

hardware::SsdSpec parse_ssd(const Node& n) {
    n.allow_only({"kind", "id", "name", "read_bandwidth", "write_bandwidth", "read_latency", "capacity"});
    hardware::SsdSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
    x.read_bandwidth = n.sourced_quantity("read_bandwidth", Dimension::Bandwidth);
    x.write_bandwidth = n.sourced_quantity("write_bandwidth", Dimension::Bandwidth);
    x.read_latency = n.sourced_quantity("read_latency", Dimension::Time);
    x.capacity = n.sourced_quantity("capacity", Dimension::Bytes);
    return x;
}

// A shared file system: aggregate bandwidths required; a node client's bandwidth and the capacity
// where the source states them (0: not stated, so not a bound).
hardware::FileSystemSpec parse_filesystem(const Node& n) {
    n.allow_only({"kind", "id", "name", "write_bandwidth", "read_bandwidth", "client_bandwidth", "capacity"});
    hardware::FileSystemSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
    x.write_bandwidth = n.sourced_quantity("write_bandwidth", Dimension::Bandwidth);
    x.read_bandwidth = n.sourced_quantity("read_bandwidth", Dimension::Bandwidth);
    if (n.has("client_bandwidth")) x.client_bandwidth = n.sourced_quantity("client_bandwidth", Dimension::Bandwidth);
    if (n.has("capacity")) x.capacity = n.sourced_quantity("capacity", Dimension::Bytes);
    for (auto [key, v] :
         {std::pair{"write_bandwidth", x.write_bandwidth}, std::pair{"read_bandwidth", x.read_bandwidth},
          std::pair{"client_bandwidth", x.client_bandwidth}, std::pair{"capacity", x.capacity}})
        if (n.has(key) && !(v > 0)) n.fail(key, "must be positive");
    return x;
}

// Published interruption counts by root cause over an exposure of GPU-hours.
hardware::FailureRatesSpec parse_failure_rates(const Node& n) {
    n.allow_only({"kind", "id", "name", "accelerator", "exposure_gpu_hours", "causes"});
    hardware::FailureRatesSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
    x.accelerator = sourced_id(n, "accelerator");
    x.exposure_gpu_hours = n.sourced_number("exposure_gpu_hours");
    if (!(x.exposure_gpu_hours > 0) || !std::isfinite(x.exposure_gpu_hours))
        n.fail("exposure_gpu_hours", "must be a positive number of GPU-hours");
    for (const Node& c : n.child("causes").items()) {
        c.allow_only({"name", "category", "count", "source"});
        hardware::FailureCauseSpec cause{c.str("name"), c.str("category"), c.number("count"), c.str("source")};
        if (cause.name.empty() || cause.category.empty()) c.fail("name", "a cause needs a name and a category");
        if (cause.source.empty()) c.fail("source", "empty source");
        if (!(cause.count >= 0) || !std::isfinite(cause.count)) c.fail("count", "must be a count >= 0");
        for (const auto& other : x.causes)
            if (other.name == cause.name) c.fail("name", "cause '" + cause.name + "' is listed twice");
        x.causes.push_back(std::move(cause));
    }
    if (x.causes.empty()) n.fail("causes", "expected at least one cause");
    return x;
}

template <typename T, typename F>
void load_dir(const fs::path& dir, const char* kind, std::map<std::string, T>& out, F parse) {
    for (const auto& file : yaml_files(dir)) {
        const Node n = load_yaml_file(file);
        check_header(n, kind, file);
        out.emplace(n.str("id"), parse(n));
    }
}

}  // namespace

models::ModelSpec parse_model(const Node& n, bool catalog_file) {
    if (catalog_file) {
        check_section_keys(n, "model", {"kind", "id", "source", "params_b"});
        if (n.str("source").empty()) n.fail("source", "empty source");
    } else {
        check_section_keys(n, "model");
    }
    models::ModelSpec m;
    m.id = catalog_file ? n.str("id") : "inline";
    m.name = m.id;
    read_section(n, "model", plans::model_keys(), m);
    const std::string arch = n.has("architecture") ? n.str("architecture") : "dense";
    if (auto moe = n.find("moe")) {
        check_section_keys(*moe, "model.moe");
        read_section(*moe, "model.moe", plans::model_keys(), m);
        if (arch != "moe") n.fail("architecture", "a model with `moe` experts has architecture: moe");
        if (m.moe.top_k > m.moe.num_experts) moe->fail("top_k", "exceeds num_experts");
        if (m.moe.dense_layers >= m.layers) moe->fail("dense_layers", "leaves no MoE layer among the model's layers");
    } else if (arch == "moe") {
        n.fail("architecture", "architecture: moe needs the `moe` mapping (num_experts, top_k, expert_ffn)");
    }
    if (auto mla = n.find("mla")) {
        check_section_keys(*mla, "model.mla");
        read_section(*mla, "model.mla", plans::model_keys(), m);
        // Training expands the latent into per-head keys and values.
        if (n.has("kv_heads") && m.kv_heads != m.heads)
            n.fail("kv_heads", "latent attention (mla) has one key/value head per head");
        m.kv_heads = m.heads;
    }
    if (m.ffn == 0 && m.moe_layers() < m.layers)
        n.fail("", "missing required key 'ffn' (the MLP width of the dense layers)");
    // Derived defaults (plans/keys.h): kv_heads = heads.
    if (!n.has("kv_heads")) m.kv_heads = m.heads;
    if (m.heads % m.kv_heads != 0) n.fail("kv_heads", "heads must be a multiple of kv_heads");
    if (m.head_dim == 0 && m.hidden % m.heads != 0) n.fail("heads", "heads must divide hidden (or give head_dim)");
    return m;
}

std::shared_ptr<const plans::Catalog> load_catalog(const std::string& root) {
    const fs::path hw = fs::path(root) / "hardware" / "catalog";
    if (!fs::is_directory(hw))
        throw sim::InputError("hardware catalog not found at '" + hw.string() +
                              "' (set FATHOM_DATA_DIR to the fathom source tree)");
    auto c = std::make_shared<plans::Catalog>();
    load_dir(hw / "accelerators", "accelerator", c->accelerators(), parse_accelerator);
    load_dir(hw / "fabrics", "scale_up", c->fabrics(), parse_fabric);
    load_dir(hw / "nics", "nic", c->nics(), parse_nic);
    load_dir(hw / "pcie", "pcie", c->pcies(), parse_pcie);
    load_dir(hw / "storage", "ssd", c->ssds(), parse_ssd);
    load_dir(hw / "filesystems", "filesystem", c->filesystems(), parse_filesystem);
    load_dir(hw / "reliability", "failure_rates", c->failure_rates(), parse_failure_rates);
    load_dir(fs::path(root) / "models" / "catalog", "model", c->models(),
             [](const Node& n) { return parse_model(n, true); });
    load_dir(fs::path(root) / "workloads" / "stacks", "stack", c->stacks(), [](const Node& n) {
        return preset::parse_preset(n, plans::training_plan_keys(), "frameworks",
                                    "not a training-plan key (parallel.*, training.*, stack.*)");
    });
    load_dir(fs::path(root) / "workloads" / "engines", "serving-engine", c->engines(), [](const Node& n) {
        return preset::parse_preset(n, plans::serving_plan_keys(), "engines", "not a serving key (serving.*)");
    });
    load_dir(fs::path(root) / "workloads" / "datasets", "dataset", c->datasets(), [](const Node& n) {
        n.allow_only({"kind", "id", "name", "source", "requests", "prompt", "output"});
        plans::DatasetSpec d;
        d.id = n.str("id");
        d.name = n.str("name");
        d.source = n.str("source");
        if (d.source.empty()) n.fail("source", "empty source");
        d.requests = n.integer("requests");
        if (d.requests < 1) n.fail("requests", "must be a positive integer");
        read_dataset_lengths(n, d.prompt, d.output);
        // A dataset is an empirical table: its lengths are histograms (tools/datasets/).
        if (d.prompt.kind != workloads::LengthKind::Histogram) n.fail("prompt", "expected distribution: histogram");
        if (d.output.kind != workloads::LengthKind::Histogram) n.fail("output", "expected distribution: histogram");
        return d;
    });
    load_dir(fs::path(root) / "workloads" / "acceptance", "speculative-acceptance", c->acceptance_profiles(),
             parse_acceptance_profile);
    load_dir(fs::path(root) / "workloads" / "checkpoint_writers", "checkpoint-writer", c->checkpoint_writers(),
             [](const Node& n) {
                 n.allow_only({"kind", "id", "name", "rank_rate"});
                 plans::CheckpointWriterSpec w{n.str("id"), n.str("name"),
                                               n.sourced_quantity("rank_rate", Dimension::Bandwidth)};
                 if (!(w.rank_rate > 0)) n.fail("rank_rate", "must be positive");
                 return w;
             });
    const fs::path intervals = fs::path(root) / "scenarios" / "intervals.yaml";
    if (fs::is_regular_file(intervals)) c->intervals() = read_intervals(intervals.string());
    return c;
}

}  // namespace fathom::scenarios
