#include "tools/cli/html.h"

#include "plans/scenario.h"

namespace fathom::cli {

void write_html(const Args& a, const std::string& name, const plans::Scenario* s,
                const std::function<void(report::Page&)>& add) {
    if (a.html.empty()) return;
    report::Page page("fathom " + a.command + ": " + name);
    if (s) {
        page.fact("scenario", s->name + (s->file.empty() ? "" : " (" + s->file + ")"));
        page.fact("model", s->model.name);
        page.fact("cluster", std::to_string(s->cluster.gpus()) + " x " + s->cluster.accelerator.id + " (" +
                                 std::to_string(s->cluster.nodes) + " nodes x " +
                                 std::to_string(s->cluster.gpus_per_node) + ")");
        if (const auto* p = s->training()) page.fact("plan", p->describe());
        if (const auto* p = s->serving())
            page.fact("serving", std::to_string(p->gpus()) + " GPUs, policy " + p->batching.policy + ", router " +
                                     p->router + (p->engine.preset.empty() ? "" : ", engine " + p->engine.preset));
        for (const auto& set : a.sets) page.fact("--set", set);
    }
    page.fact("fathom", std::string(FATHOM_VERSION));
    add(page);
    write_file(a.html, page.html());
}

}  // namespace fathom::cli
