#include "scenarios/catalog.h"

#include <cstdlib>
#include <filesystem>

#include "sim/error.h"

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

namespace {

std::vector<std::string> yaml_files(const fs::path& dir) {
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

hardware::AcceleratorSpec parse_accelerator(const Node& n) {
    n.allow_only({"kind", "id", "name", "vendor", "peak_dense", "memory_capacity", "memory_bandwidth", "compute_units",
                  "l2_cache", "kernel_launch_overhead", "tdp", "scale_up", "calibration", "calibration_table"});
    hardware::AcceleratorSpec a;
    a.id = n.str("id");
    a.name = n.str("name");
    a.vendor = n.str("vendor");
    const Node peaks = n.child("peak_dense");
    for (const auto& k : peaks.keys()) {
        const auto d = hardware::parse_dtype(k);
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
    if (n.has("calibration_table")) {
        // Relative to the data directory (the directory holding hardware/ and models/).
        const fs::path file = fs::path(n.file()).parent_path().parent_path().parent_path().parent_path() / n.str("calibration_table");
        if (!fs::is_regular_file(file)) n.fail("calibration_table", "no calibration table at '" + file.string() + "'");
        a.calibration_table = file.string();
    }
    const Node c = n.child("calibration");
    c.allow_only({"gemm_efficiency", "gemm_tile_m", "gemm_tile_n", "gemm_k_half", "attention_fwd_efficiency",
                  "attention_bwd_efficiency", "attention_seq_half", "memory_efficiency", "sustained_clock"});
    const Node ge = c.child("gemm_efficiency");
    for (const auto& k : ge.keys()) {
        const auto d = hardware::parse_dtype(k);
        if (!d) ge.fail(k, "unknown dtype '" + k + "'");
        a.calibration.gemm_efficiency[*d] = ge.sourced_number(k);
    }
    a.calibration.gemm_tile_m = static_cast<int>(c.sourced_number("gemm_tile_m"));
    a.calibration.gemm_tile_n = static_cast<int>(c.sourced_number("gemm_tile_n"));
    a.calibration.gemm_k_half = c.sourced_number("gemm_k_half");
    a.calibration.attention_fwd_efficiency = c.sourced_number("attention_fwd_efficiency");
    a.calibration.attention_bwd_efficiency = c.sourced_number("attention_bwd_efficiency");
    a.calibration.attention_seq_half = c.sourced_number("attention_seq_half");
    a.calibration.memory_efficiency = c.sourced_number("memory_efficiency");
    a.calibration.sustained_clock = c.sourced_number("sustained_clock");
    if (a.calibration.sustained_clock <= 0 || a.calibration.sustained_clock > 1)
        c.fail("sustained_clock", "sustained_clock must be in (0, 1]");
    return a;
}

hardware::ScaleUpSpec parse_fabric(const Node& n) {
    n.allow_only({"kind", "id", "name", "topology", "bandwidth_per_gpu", "link_bandwidth", "latency", "max_domain_size",
                  "nvls", "calibration"});
    hardware::ScaleUpSpec f;
    f.id = n.str("id");
    f.name = n.str("name");
    const std::string topo = n.str("topology");
    if (topo == "switched") f.topology = hardware::ScaleUpTopology::Switched;
    else if (topo == "full_mesh") f.topology = hardware::ScaleUpTopology::FullMesh;
    else n.fail("topology", "expected switched or full_mesh, got '" + topo + "'");
    f.bandwidth_per_gpu = n.sourced_quantity("bandwidth_per_gpu", Dimension::Bandwidth);
    f.link_bandwidth = n.sourced_quantity("link_bandwidth", Dimension::Bandwidth);
    f.latency = n.sourced_quantity("latency", Dimension::Time);
    f.max_domain_size = static_cast<int>(n.sourced_number("max_domain_size"));
    if (n.has("nvls")) f.nvls = n.sourced_bool("nvls");
    const Node c = n.child("calibration");
    c.allow_only({"busbw_efficiency", "nvls_busbw_efficiency", "step_latency"});
    f.busbw_efficiency = c.sourced_number("busbw_efficiency");
    if (c.has("nvls_busbw_efficiency")) f.nvls_busbw_efficiency = c.sourced_number("nvls_busbw_efficiency");
    f.step_latency = c.sourced_quantity("step_latency", Dimension::Time);
    return f;
}

hardware::NicSpec parse_nic(const Node& n) {
    n.allow_only({"kind", "id", "name", "bandwidth", "latency", "switch_latency", "calibration"});
    hardware::NicSpec x;
    x.id = n.str("id");
    x.name = n.str("name");
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
    c.allow_only({"efficiency"});
    x.efficiency = c.sourced_number("efficiency");
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
        n.allow_only({"kind", "id", "name", "source", "architecture", "params_b", "layers", "hidden", "heads", "kv_heads",
                      "head_dim", "ffn", "vocab", "activation", "norm", "position_embedding", "tied_embeddings",
                      "max_seq_len", "qkv_bias"});
        if (n.str("source").empty()) n.fail("source", "empty source");
    } else {
        n.allow_only({"name", "architecture", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                      "activation", "norm", "position_embedding", "tied_embeddings", "max_seq_len", "qkv_bias"});
    }
    models::ModelSpec m;
    m.id = catalog_file ? n.str("id") : "inline";
    m.name = n.has("name") ? n.str("name") : m.id;
    if (n.has("architecture") && n.str("architecture") != "dense")
        n.fail("architecture", "only dense models are supported so far (got '" + n.str("architecture") + "')");
    m.layers = n.integer("layers");
    m.hidden = n.integer("hidden");
    m.heads = n.integer("heads");
    m.kv_heads = n.has("kv_heads") ? n.integer("kv_heads") : m.heads;
    if (n.has("head_dim")) m.head_dim = n.integer("head_dim");
    m.ffn = n.integer("ffn");
    m.vocab = n.integer("vocab");
    if (n.has("max_seq_len")) m.max_seq_len = n.integer("max_seq_len");
    const std::string act = n.str("activation");
    if (act == "gelu") m.activation = models::Activation::Gelu;
    else if (act == "relu") m.activation = models::Activation::Relu;
    else if (act == "squared_relu") m.activation = models::Activation::SquaredRelu;
    else if (act == "swiglu") m.activation = models::Activation::Swiglu;
    else if (act == "geglu") m.activation = models::Activation::Geglu;
    else n.fail("activation", "expected gelu, relu, squared_relu, swiglu or geglu, got '" + act + "'");
    if (n.has("norm")) {
        const std::string norm = n.str("norm");
        if (norm == "rmsnorm") m.norm = models::Norm::RmsNorm;
        else if (norm == "layernorm") m.norm = models::Norm::LayerNorm;
        else n.fail("norm", "expected layernorm or rmsnorm, got '" + norm + "'");
    }
    if (n.has("position_embedding")) {
        const std::string p = n.str("position_embedding");
        if (p == "rope") m.position = models::PositionEmbedding::Rope;
        else if (p == "alibi") m.position = models::PositionEmbedding::Alibi;
        else if (p == "learned") m.position = models::PositionEmbedding::Learned;
        else if (p == "none") m.position = models::PositionEmbedding::None;
        else n.fail("position_embedding", "expected rope, alibi, learned or none, got '" + p + "'");
    }
    if (n.has("tied_embeddings")) m.tied_embeddings = n.boolean("tied_embeddings");
    if (n.has("qkv_bias")) m.bias = n.boolean("qkv_bias");
    for (auto [key, v] : {std::pair<const char*, int64_t>{"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads},
                          {"kv_heads", m.kv_heads}, {"ffn", m.ffn}, {"vocab", m.vocab}})
        if (v < 1) n.fail(key, std::string(key) + " must be >= 1");
    if (m.heads % m.kv_heads != 0) n.fail("kv_heads", "heads must be a multiple of kv_heads");
    if (m.head_dim == 0 && m.hidden % m.heads != 0) n.fail("heads", "heads must divide hidden (or give head_dim)");
    return m;
}

Catalog::Catalog(const std::string& root) {
    const fs::path hw = fs::path(root) / "hardware" / "catalog";
    if (!fs::is_directory(hw))
        throw sim::InputError("hardware catalog not found at '" + hw.string() + "' (set FATHOM_DATA_DIR to the fathom source tree)");
    load_dir(hw / "accelerators", "accelerator", accelerators_, parse_accelerator);
    load_dir(hw / "fabrics", "scale_up", fabrics_, parse_fabric);
    load_dir(hw / "nics", "nic", nics_, parse_nic);
    load_dir(hw / "pcie", "pcie", pcie_, parse_pcie);
    load_dir(hw / "storage", "ssd", ssds_, parse_ssd);
    load_dir(fs::path(root) / "models" / "catalog", "model", models_, [](const Node& n) { return parse_model(n, true); });
}

namespace {
template <typename T>
const T& lookup(const std::map<std::string, T>& m, const std::string& id, const char* what) {
    auto it = m.find(id);
    if (it != m.end()) return it->second;
    std::string names;
    for (const auto& [k, v] : m) names += (names.empty() ? "" : ", ") + k;
    throw sim::InputError(std::string("unknown ") + what + " '" + id + "'; known: " + names);
}
}  // namespace

const hardware::AcceleratorSpec& Catalog::accelerator(const std::string& id) const { return lookup(accelerators_, id, "accelerator"); }
const hardware::ScaleUpSpec& Catalog::fabric(const std::string& id) const { return lookup(fabrics_, id, "scale-up fabric"); }
const hardware::NicSpec& Catalog::nic(const std::string& id) const { return lookup(nics_, id, "NIC"); }
const hardware::PcieSpec& Catalog::pcie(const std::string& id) const { return lookup(pcie_, id, "PCIe link"); }
const hardware::SsdSpec& Catalog::ssd(const std::string& id) const { return lookup(ssds_, id, "SSD"); }
const models::ModelSpec& Catalog::model(const std::string& id) const { return lookup(models_, id, "model"); }

}  // namespace fathom::scenarios
