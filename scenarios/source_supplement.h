#pragma once
// What a source states outside the table a measured case was transcribed from: the run scripts a
// paper publishes as its artifact, a repository's launch script; or what it states in prose that
// measured-format v1 has no typed field for, written as fathom's extension fields
// (scenarios/measured-format-fathom.md: a serving engine's MoE dispatch, two-batch overlap,
// packaging). One file per source under
// scenarios/sources/, each with the source it quotes; `fathom compare` fills a case's missing
// configuration fields from the run of that source whose model the case describes, before any
// rule of its own. A field the case states is never replaced (a disagreement is reported as an
// assumption instead); one the recorder inferred (the case's `assumed`) is. Keyed by the source
// and the model's shape, not by case id, so that every measurement of the same table, in any
// file, gets the same fill-ins.
#include "scenarios/yaml_node.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::scenarios {

struct SourceSupplement {
    std::string id;
    std::string name;  // optional, for `fathom list sources`
    std::string file;
    std::string source;  // the artifact quoted, with its commit
    std::string cites;   // a case's source.title or source.url must contain this
    std::string table;   // and its source.table equal this (empty: any table of the source)
    struct Run {
        int64_t layers = 0, hidden = 0;  // the model of the run
        std::string section;             // "training" or "serving": the case block it fills
        YAML::Node fields;               // that block's fields the artifact states
        std::string what;                // the artifact's own words for the run
    };
    std::vector<Run> runs;
};

// Every supplement under `dir` (no directory: none). A malformed file throws InputError naming
// the file, line and key.
std::vector<SourceSupplement> load_source_supplements(const std::string& dir);

// The case with the training or serving fields of its run in `supplements` added where the case has none or
// has only the recorder's inference (listed in its `assumed`); each field supplied, and each stated
// one the artifact contradicts (kept), is appended to `assumptions`.
// `arena`, when given, holds the copies of the mappings it changes (scenarios/yaml_node.h).
YAML::Node supplement_case(const YAML::Node& c, const std::vector<SourceSupplement>& supplements,
                           std::vector<std::string>& assumptions, NodeArena* arena = nullptr);

}  // namespace fathom::scenarios
