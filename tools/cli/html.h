#pragma once
// `--html FILE` of run, capacity, search and compare: the command's report page (tools/report/),
// headed by the scenario it ran, written whole once the work is done.
#include "tools/cli/cli.h"
#include "tools/report/report.h"

#include <functional>
#include <string>

namespace fathom::cli {

// Writes a.html (when given): a page titled "fathom COMMAND: NAME", the scenario's facts under the
// title (none without a scenario), and the sections `add` writes.
void write_html(const Args& a, const std::string& name, const plans::Scenario* s,
                const std::function<void(report::Page&)>& add);

}  // namespace fathom::cli
