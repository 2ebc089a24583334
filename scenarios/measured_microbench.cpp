// Microbenchmark cases of a measured-format file: one op on the case's devices, priced by the same
// cost model (at kernel clocks: a benchmark loop is not a sustained training step) and network
// model a training step uses, and reported in the source's own units and conventions:
//   gemm         TFLOPS = 2 M N K / time (flops_convention gemm_2mnk);
//   attention    TFLOPS = FlashAttention's count: 4 b s^2 h d forward, half of it causal, 2.5x
//                for the backward (attention_fa);
//   collectives  nccl-tests bus bandwidth: size / time x 2(n-1)/n (all-reduce), (n-1)/n
//                (all-gather, reduce-scatter, all-to-all), 1 (broadcast);
//   memcpy       a host-device copy by the copy engine: the PCIe link's achievable rate;
//   p2p          a copy between two GPUs of a node: bytes / time, both directions' bytes when
//                bidirectional (CUDA samples p2pBandwidthLatencyTest);
//   MoE all-to-all (DeepEP normal kernels, `tokens`, `hidden`, `top_k`): DeepEP's "bottleneck
//                bandwidth", the bytes its test counts over the bottleneck link / kernel time.
//                DeepEP sends a token once per destination rank (intra-node) or node (inter-node),
//                whatever the number of its experts there; with DeepSeek-V3's 256 experts routed
//                uniformly the expected number of destinations follows from the hypergeometric
//                law. The counted bytes include the rank's (node's) own share, the time is the
//                all-to-all of the bytes that leave it; both conventions are stated as assumptions.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/moe_layer.h"
#include "models/ops/op.h"
#include "plans/catalog.h"
#include "plans/evaluate.h"
#include "scenarios/measured_case.h"

#include <algorithm>
#include <cmath>

namespace fathom::scenarios::detail {
namespace {

hardware::Dtype case_dtype(const std::string& d) {
    if (d == "fp8") return hardware::Dtype::fp8;
    if (d == "fp16") return hardware::Dtype::fp16;
    if (d == "bf16" || d.empty()) return hardware::Dtype::bf16;
    throw Unsupported{"dtype '" + d + "' is not priced"};
}

}  // namespace

CompareResult predict_microbench_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out) {
    const plans::Catalog& cat = *ctx.catalog;
    const YAML::Node hw = c["hardware"], cl = c["cluster"], b = c["benchmark"];
    const std::string accel = case_accelerator(hw, cat, out);
    const std::string op = b["op"].as<std::string>();
    const std::string impl = opt_str(b, "implementation");

    plans::ClusterRequest req;
    req.accelerator = accel;
    req.nodes = has(cl, "nodes") ? positive_int(cl, "cluster", "nodes") : 1;
    req.gpus_per_node = has(cl, "gpus_per_node") ? positive_int(cl, "cluster", "gpus_per_node") : 1;
    const std::string intra = opt_str(cl["intra_node"], "fabric");
    if (accel.rfind("h800", 0) == 0) req.scale_up = "nvlink4-h800";
    else if (!intra.empty() && cat.fabrics().count(intra)) req.scale_up = intra;
    const YAML::Node so = cl["scale_out"];
    req.nic = choose_nic(so, accel, has(so, "gb_per_s_per_gpu") ? so["gb_per_s_per_gpu"].as<double>() : 0.0);
    req.nics_per_node = has(so, "nics_per_node") ? so["nics_per_node"].as<int>() : req.gpus_per_node;
    const hardware::ClusterSpec cluster = plans::build_cluster(req, cat);
    out.stack = impl.empty() ? "defaults" : impl;

    if (op == "gemm") {
        if (out.metric != "gemm_tflops") throw Unsupported{"metric '" + out.metric + "' of a GEMM"};
        const auto m = positive_int(b, "benchmark", "M"), n = positive_int(b, "benchmark", "N"),
                   k = positive_int(b, "benchmark", "K");
        const hardware::Dtype d = case_dtype(opt_str(b, "dtype", "bf16"));
        if (!cluster.accelerator.has(d))
            throw Unsupported{"accelerator has no " + std::string(sim::name(d)) + " tensor cores"};
        plans::CostModelKind kind{};
        const auto cost = plans::cost_model_for(cluster.accelerator, ctx, kind, models::Load::Kernel);
        const models::OpDesc g = models::gemm_op("gemm", m, n, k, d);
        out.predicted = 2.0 * m * static_cast<double>(n) * k / cost->seconds(g) / 1e12;
        if (has(b, "shape_sweep") && b["shape_sweep"].as<bool>())
            out.assumptions.push_back("best of a shape sweep: priced at the best shape the source names");
        return out;
    }
    if (op == "attention") {
        if (out.metric != "attention_tflops") throw Unsupported{"metric '" + out.metric + "' of attention"};
        const std::string phase = b["phase"].as<std::string>();
        if (phase != "forward" && phase != "backward") throw Unsupported{"attention phase '" + phase + "'"};
        if (has(b, "paged_kv") && b["paged_kv"].as<bool>())
            throw Unsupported{"paged decode attention is not compared yet"};
        models::AttentionShape a;
        const int64_t batch = positive_int(b, "benchmark", "batch"), seq = positive_int(b, "benchmark", "seq_len");
        a.heads = positive_int(b, "benchmark", "heads");
        a.kv_heads = has(b, "kv_heads") ? positive_int(b, "benchmark", "kv_heads") : a.heads;
        a.head_dim = positive_int(b, "benchmark", "head_dim");
        a.causal = has(b, "causal") && b["causal"].as<bool>();
        a.slices = {models::SequenceSlice{batch, seq, seq}};
        // FA3 and cuDNN are the Hopper-native class; flash-attn 2, Triton and SDPA's flash path the other.
        const bool fa3 = impl == "flash-attention-3" || impl == "cudnn" || impl.empty();
        a.kernel = fa3 ? models::AttentionKernel::Fa3 : models::AttentionKernel::Fa2;
        if (impl.empty()) out.assumptions.push_back("kernel class not stated: FA3");
        const hardware::Dtype d = case_dtype(opt_str(b, "dtype", "bf16"));
        if (d == hardware::Dtype::fp8) throw Unsupported{"fp8 attention kernels are not priced"};
        plans::CostModelKind kind{};
        const auto cost = plans::cost_model_for(cluster.accelerator, ctx, kind, models::Load::Kernel);
        const models::OpDesc o = models::attention_op(phase == "backward", a, d);
        double flops = 4.0 * batch * static_cast<double>(seq) * seq * a.heads * a.head_dim * (a.causal ? 0.5 : 1.0);
        if (phase == "backward") flops *= 2.5;
        out.predicted = flops / cost->seconds(o) / 1e12;
        return out;
    }
    if (op == "p2p") {
        // A copy between two GPUs of one node (CUDA samples p2pBandwidthLatencyTest: copy-engine
        // cudaMemcpyPeerAsync of 10,000,000 ints, 5 back to back, bytes / time), priced as the
        // pipeline's send-recv over the scale-up fabric; bidirectional: both GPUs send at once
        // over the full-duplex links and the source counts the bytes of both directions.
        if (out.metric != "bandwidth_gb_per_s") throw Unsupported{"metric '" + out.metric + "' of a p2p copy"};
        if (opt_str(c, "link", "nvlink") != "nvlink") throw Unsupported{"p2p over '" + opt_str(c, "link") + "'"};
        if (cluster.gpus_per_node < 2) throw Unsupported{"a p2p copy within a node of one GPU"};
        double size = 0;
        if (has(b, "size_bytes")) {
            size = b["size_bytes"].as<double>();
            if (!(size > 0) || !std::isfinite(size))
                throw BadCase{"benchmark.size_bytes", "expected a positive finite number of bytes",
                              b["size_bytes"].Mark().line + 1};
        } else if (impl == "p2pBandwidthLatencyTest") {
            size = 4.0e7;  // NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu: numElems = 10000000 ints per copy
            out.assumptions.push_back("40 MB per copy (p2pBandwidthLatencyTest's 10,000,000 ints)");
        } else {
            throw Unsupported{"p2p copy without size_bytes"};
        }
        const std::string direction = choice(c, "", "direction", {"unidirectional", "bidirectional"}, "unidirectional");
        if (!has(c, "direction")) out.assumptions.push_back("direction not stated: unidirectional");
        const auto network = hardware::make_network(ctx.with_network(cluster));
        const double t = network->collective(hardware::Collective::SendRecv, size, hardware::CommGroup(2, 1)).seconds;
        out.predicted = (direction == "bidirectional" ? 2.0 : 1.0) * size / t / 1e9;
        return out;
    }
    if (op == "memcpy") {
        // A host-device copy over the GPU's PCIe link (nvbandwidth host_to_device_memcpy_ce and
        // the like): the link's rate at its copy-engine efficiency, the rate the serving replay
        // swaps KV blocks at. Copies driven by SM loads and stores (nvbandwidth *_memcpy_sm) are
        // another mechanism (an SM's reads over PCIe are latency bound) that fathom does not model.
        if (out.metric != "bandwidth_gb_per_s") throw Unsupported{"metric '" + out.metric + "' of a copy"};
        if (opt_str(c, "link", "pcie") != "pcie") throw Unsupported{"a copy over '" + opt_str(c, "link") + "'"};
        const std::string copy = choice(b, "benchmark", "copy", {"h2d", "d2h", "d2d"}, "h2d");
        if (copy == "d2d") throw Unsupported{"device-to-device copies are not compared yet"};
        const std::string method = choice(b, "benchmark", "copy_method", {"ce", "sm"}, "ce");
        if (!has(b, "copy_method")) out.assumptions.push_back("copy method not stated: the copy engine");
        if (!has(b, "copy"))
            out.assumptions.push_back("copy direction not stated (host-to-device and back are priced alike)");
        if (method == "sm")
            throw Unsupported{"SM-driven copies are not modelled (fathom's PCIe rate is the copy engine's)"};
        out.predicted = cluster.pcie.achievable_bandwidth() / 1e9;
        out.assumptions.push_back("a large copy (latency negligible) over " + cluster.pcie.id);
        return out;
    }
    const std::map<std::string, hardware::Collective> collectives = {
        {"allreduce", hardware::Collective::AllReduce},
        {"allgather", hardware::Collective::AllGather},
        {"reducescatter", hardware::Collective::ReduceScatter},
        {"alltoall", hardware::Collective::AllToAll},
        {"broadcast", hardware::Collective::Broadcast}};
    const auto it = collectives.find(op);
    if (it == collectives.end()) throw Unsupported{"microbenchmark op '" + op + "' is not compared yet"};
    const int ranks = positive_int(b, "benchmark", "ranks");
    if (ranks < 2) throw Unsupported{"a collective of one rank"};
    if (ranks > cluster.gpus()) throw Unsupported{"more ranks than GPUs"};
    const std::string algorithm = opt_str(b, "algorithm", "default");
    std::string forced;
    if (algorithm == "ring" || algorithm == "tree" || algorithm == "nvls") forced = algorithm;
    else if (algorithm != "default") throw Unsupported{"collective algorithm '" + algorithm + "' is not modelled"};
    const auto network = hardware::make_network(ctx.with_network(cluster), forced);
    hardware::CommGroup group;
    group.size = ranks;
    const double n = ranks;

    if (it->second == hardware::Collective::AllToAll && has(b, "tokens") && impl.rfind("deepep-low-latency", 0) == 0) {
        // DeepEP's low-latency kernels: every (token, expert) pair travels to the expert's rank
        // (the accounting of DeepEP's own bandwidth figures), priced as the serving replay's
        // deepep_ll dispatcher prices it: an all-to-all of tokens x top_k rows.
        if (out.metric != "latency_us")
            throw Unsupported{"metric '" + out.metric + "' of a low-latency MoE all-to-all"};
        const double tokens = positive_int(b, "benchmark", "tokens"), hidden = positive_int(b, "benchmark", "hidden"),
                     k = positive_int(b, "benchmark", "top_k");
        const bool fp8 = opt_str(b, "dtype", "bf16") == "fp8";
        const double row = fp8 ? hidden + hidden / 128.0 * 4.0 : hidden * 2.0;
        out.predicted = network->collective(hardware::Collective::AllToAll, tokens * k * row, group).seconds * 1e6;
        out.assumptions.push_back("DeepEP low-latency accounting: every (token, expert) pair travels");
        return out;
    }
    if (it->second == hardware::Collective::AllToAll && has(b, "tokens")) {
        if (out.metric != "bandwidth_gb_per_s") throw Unsupported{"metric '" + out.metric + "' of an MoE all-to-all"};
        if (impl.rfind("deepep-normal", 0) != 0)
            throw Unsupported{"MoE all-to-all '" + impl + "' (only DeepEP's normal kernels)"};
        const double tokens = positive_int(b, "benchmark", "tokens"), hidden = positive_int(b, "benchmark", "hidden"),
                     k = positive_int(b, "benchmark", "top_k");
        const std::string dt = opt_str(b, "dtype", "bf16");
        // fp8 dispatch carries one float scale per 128 values.
        const double per_token = dt == "fp8" ? hidden + hidden / 128.0 * 4.0 : hidden * 2.0;
        const int64_t experts = 256;  // DeepSeek-V3's routed experts (the benchmark's shapes)
        const double g = std::min(ranks, cluster.gpus_per_node), nodes = std::ceil(n / g);
        out.assumptions.push_back("DeepEP accounting: a token travels once per destination " +
                                  std::string(nodes > 1 ? "node" : "rank") + ", 256 experts routed uniformly");
        // Destinations of one token among `parts` equal parts of the experts (as the training
        // replay's DeepEP dispatcher counts them).
        auto destinations = [&](double parts) {
            return models::moe_destinations(experts, static_cast<int64_t>(k), static_cast<int>(parts));
        };
        double counted = 0, leaving = 0;
        if (nodes <= 1) {
            const double d = destinations(n);
            counted = tokens * d * per_token;  // everything received over NVLink, self included
            leaving = tokens * d * (n - 1) / n * per_token;
        } else {
            const double d = destinations(nodes);
            counted = tokens * d * per_token;  // "logical" RDMA bytes, own node included
            leaving = tokens * d * (nodes - 1) / nodes * per_token;
        }
        // The all-to-all of the leaving bytes, as the training replay prices it (per-rank send
        // buffer: leaving x n / (n - 1) spread evenly, of which the remote part crosses the NIC).
        group.size = ranks;
        const double send_buffer = nodes > 1 ? leaving * n / (n - g) : leaving * n / (n - 1);
        const double t = network->collective(hardware::Collective::AllToAll, send_buffer, group).seconds;
        out.predicted = counted / t / 1e9;
        return out;
    }
    if (out.metric != "busbw_gb_per_s") throw Unsupported{"metric '" + out.metric + "' of a collective"};
    if (!has(b, "size_bytes")) throw Unsupported{"collective without size_bytes"};
    const double size = b["size_bytes"].as<double>();
    const double t = network->collective(it->second, size, group).seconds;
    out.predicted = size / t * hardware::bus_factor(it->second, n) / 1e9;
    if (impl != "nccl-tests" && !impl.empty()) out.assumptions.push_back("'" + impl + "' timed like nccl-tests");
    return out;
}

}  // namespace fathom::scenarios::detail
