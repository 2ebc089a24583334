// `fathom topology SCENARIO [-o FILE.dot]`: the scenario's cluster as the flow-level network sees
// it: a summary of the graph (vertices by kind, links by level with their bandwidths, the builders)
// on standard output, and the whole graph as GraphViz DOT in FILE.dot (default: the scenario's
// name with .dot, in the current directory).
#include "hardware/topology/topology.h"

#include "scenarios/scenario.h"
#include "tools/cli/cli.h"

#include <filesystem>
#include <iostream>
#include <sstream>

namespace fathom::cli {

int cmd_topology(const Args& a) {
    const auto catalog = scenarios::load_catalog();
    const plans::Scenario s = scenarios::load_scenario(one_file(a), *catalog, a.sets);
    for (const auto& w : s.warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
    const hardware::Topology t = naming_file(s.file, [&] { return hardware::build_topology(s.cluster, s.file); });
    const std::string out = !a.out.empty() ? a.out : std::filesystem::path(s.file).stem().string() + ".dot";
    std::ostringstream dot;
    t.write_dot(dot);
    write_file(out, dot.str());
    std::cout << s.file << ": " << s.cluster.gpus() << " x " << s.cluster.accelerator.id << " (" << s.cluster.nodes
              << " nodes x " << s.cluster.gpus_per_node << "), routing " << s.cluster.routing << ", network "
              << sim::name(s.cluster.network) << "\n"
              << t.summary() << "DOT: " << out << "\n";
    return 0;
}

}  // namespace fathom::cli
