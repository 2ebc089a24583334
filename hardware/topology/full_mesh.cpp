// Scale-up builder "full-mesh": a direct link between every pair of a node's GPUs at the fabric's
// per-peer bandwidth (AMD Infinity Fabric on MI300X/MI355X: seven links per GPU in an 8-GPU node).
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_full_mesh(Topology& topo, const ClusterSpec& c) {
    const ScaleUpSpec& su = c.scale_up;
    const double link =
        su.link_bandwidth > 0 ? su.link_bandwidth : su.bandwidth_per_gpu / std::max(1, c.gpus_per_node - 1);
    for (int node = 0; node < c.nodes; ++node) {
        std::vector<Vertex> gpus;
        for (int i = 0; i < c.gpus_per_node; ++i) {
            const int rank = node * c.gpus_per_node + i;
            gpus.push_back(
                topo.add_vertex(VertexKind::Gpu, "n" + std::to_string(node) + ".gpu" + std::to_string(i), node, rank));
            topo.set_gpu(rank, gpus.back());
        }
        for (size_t a = 0; a < gpus.size(); ++a)
            for (size_t b = a + 1; b < gpus.size(); ++b)
                topo.connect(gpus[a], gpus[b], link, su.busbw_efficiency, su.latency, LinkLevel::ScaleUp);
    }
}

}  // namespace fathom::hardware
