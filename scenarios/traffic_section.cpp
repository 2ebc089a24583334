// The `traffic` section of a serving scenario: arrivals, lengths (an integer or a distribution's
// keys), shared prefixes, multi-turn sessions, or a trace file.
#include "scenarios/traffic_section.h"

#include "plans/keys.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "sim/error.h"
#include "sim/input_file.h"

#include <filesystem>
#include <string>

namespace fathom::scenarios {

using workloads::serving::ServingPlan;
using KeySet = std::set<std::string>;

namespace {

// A length under `parent` (traffic, traffic.sessions) at `which`: an integer (a fixed length) or a
// length distribution's keys.
void read_length(const Node& parent, const char* which, workloads::LengthDistribution& dist, ServingPlan& p,
                 KeySet& given) {
    const Node n = parent.child(which);
    if (n.is_scalar()) {
        dist.kind = workloads::LengthKind::Fixed;
        dist.value = parent.integer(which);
        if (dist.value < 1) parent.fail(which, "must be >= 1 token");
        return;
    }
    const std::string prefix = parent.path().empty() ? std::string("traffic.") + which : parent.path() + "." + which;
    check_section_keys(n, prefix);
    read_section(n, prefix, plans::serving_plan_keys(), p, &given);
    if (auto why = dist.check(); !why.empty()) n.fail("", why);
}

// traffic.prompt and traffic.output; `needed`: an absent one is an error.
void read_lengths(const Node& tr, ServingPlan& p, KeySet& given, bool needed) {
    for (const char* which : {"prompt", "output"}) {
        workloads::LengthDistribution& dist = which[0] == 'p' ? p.traffic.synthetic.prompt : p.traffic.synthetic.output;
        if (!tr.has(which)) {
            if (needed) tr.fail("", std::string("missing required key '") + which + "'");
            continue;
        }
        read_length(tr, which, dist, p, given);
    }
}

}  // namespace

void read_dataset_lengths(const Node& n, workloads::LengthDistribution& prompt, workloads::LengthDistribution& output) {
    ServingPlan p;
    KeySet given;
    read_lengths(n, p, given, true);
    prompt = p.traffic.synthetic.prompt;
    output = p.traffic.synthetic.output;
}

// The `traffic` section: arrivals, lengths, shared prefixes, sessions, or a trace file (relative
// to the scenario file).
void read_traffic(const Node& root, const plans::Catalog& cat, ServingPlan& p, std::set<std::string>& given) {
    const auto& keys = plans::serving_plan_keys();
    const Node tr = root.child("traffic");
    check_section_keys(tr, "traffic", {"prompt", "output", "shared_prefix", "sessions"});
    read_section(tr, "traffic", keys, p, &given);
    if (!p.traffic.dataset.empty()) {  // the dataset's lengths first; prompt or output given replace them
        try {
            const plans::DatasetSpec& d = cat.dataset(p.traffic.dataset);
            p.traffic.synthetic.prompt = d.prompt;
            p.traffic.synthetic.output = d.output;
        } catch (const sim::InputError& e) {
            tr.fail("dataset", e.bare_message());
        }
    }
    // Lengths may be left to a trace file or a dataset.
    read_lengths(tr, p, given, p.traffic.trace.empty() && p.traffic.dataset.empty());
    if (auto n = tr.find("shared_prefix")) {
        check_section_keys(*n, "traffic.shared_prefix");
        read_section(*n, "traffic.shared_prefix", keys, p, &given);
    }
    if (auto n = tr.find("sessions")) {
        check_section_keys(*n, "traffic.sessions", {"first_prompt"});
        read_section(*n, "traffic.sessions", keys, p, &given);
        if (n->has("first_prompt"))
            read_length(*n, "first_prompt", p.traffic.synthetic.sessions.first_prompt, p, given);
        const auto& s = p.traffic.synthetic.sessions;
        if (s.turns_max != 0 && s.turns_max < s.turns)
            n->fail("turns_max",
                    "turns_max (" + std::to_string(s.turns_max) + ") is below turns (" + std::to_string(s.turns) + ")");
    }
    if (given.count("traffic.arrival") &&
        std::get<std::string>(read_value(tr, *plans::find_key("traffic.arrival"))) == "trace") {
        if (!given.count("traffic.trace"))
            tr.fail("arrival", "arrival: trace needs traffic.trace (a .csv or .jsonl file)");
    } else if (given.count("traffic.trace")) {
        tr.fail("trace", "a trace file needs arrival: trace");
    }
    if (!p.traffic.trace.empty()) {
        std::filesystem::path t(p.traffic.trace);
        if (t.is_relative()) t = std::filesystem::path(root.file()).parent_path() / t;
        p.traffic.trace = t.lexically_normal().string();
        std::string why = sim::input_problem(t.string());
        // Read again by every run of a capacity search or a plan search: a file, not a stream.
        if (why.empty() && !std::filesystem::is_regular_file(t)) why = "not a regular file";
        if (!why.empty()) tr.fail("trace", "cannot open the trace '" + p.traffic.trace + "': " + why);
    }
}

}  // namespace fathom::scenarios
