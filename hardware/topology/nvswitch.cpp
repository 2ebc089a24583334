// Scale-up builder "nvswitch": each node's GPUs on one switch vertex, each GPU linked to it at the
// fabric's per-GPU bandwidth (all of its NVLinks together). The four NVSwitch chips of an HGX
// board form one non-blocking crossbar, so one vertex stands for them; the same shape holds for
// Ascend HCCS and NVL72-class domains (one node = one scale-up domain).
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_nvswitch(Topology& topo, const ClusterSpec& c) {
    const ScaleUpSpec& su = c.scale_up;
    for (int node = 0; node < c.nodes; ++node) {
        const Vertex sw =
            topo.add_vertex(VertexKind::ScaleUpSwitch, "n" + std::to_string(node) + ".switch", node, node);
        topo.set_scale_up_switch(node, sw);
        for (int i = 0; i < c.gpus_per_node; ++i) {
            const int rank = node * c.gpus_per_node + i;
            const Vertex g =
                topo.add_vertex(VertexKind::Gpu, "n" + std::to_string(node) + ".gpu" + std::to_string(i), node, rank);
            topo.set_gpu(rank, g);
            topo.connect(g, sw, su.bandwidth_per_gpu, su.busbw_efficiency, su.latency / 2, LinkLevel::ScaleUp);
        }
    }
}

}  // namespace fathom::hardware
