#include "plans/scenario.h"

namespace fathom::plans {

std::string Warning::text() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line);
    if (!key.empty()) out += (out.empty() ? "" : ": ") + std::string("key '") + key + "'";
    return (out.empty() ? "" : out + ": ") + message;
}

}  // namespace fathom::plans
