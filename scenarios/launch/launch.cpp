#include "scenarios/launch/launch.h"

#include "scenarios/launch/dialects.h"
#include "sim/error.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace fathom::scenarios::launch {

const sim::Registry<Dialect>& launch_registry() {
    static const sim::Registry<Dialect> r = [] {
        sim::Registry<Dialect> x("framework");
        x.add("megatron", "Megatron-LM pretrain_gpt.py arguments under torchrun", megatron_dialect());
        x.add("nemo", "NeMo 24.07 GPT pretraining with Hydra overrides (Megatron-Core)", nemo_dialect());
        x.add("torchtitan", "torchtitan job TOML", torchtitan_dialect());
        x.add("vllm", "vllm serve command lines, one file per pool", vllm_dialect());
        x.add("sglang", "python -m sglang.launch_server command lines, one file per pool", sglang_dialect());
        x.add("trtllm", "trtllm-serve command lines with their LLM API options, one file per pool", trtllm_dialect());
        return x;
    }();
    return r;
}

std::vector<LaunchFile> export_launch(const Job& job, const std::string& framework) {
    const Dialect& d = launch_registry().get(framework).factory;
    const bool training = job.training != nullptr;
    if (training != (std::string(d.kind) == "training"))
        throw sim::InputError(
            framework + " runs " + d.kind + ", and this is a " + (training ? "training" : "serving") + " scenario",
            job.file);
    return d.write(job);
}

void cannot(const Job& job, const std::string& framework, const std::string& key, const std::string& why) {
    throw sim::InputError(framework + " cannot express this plan: " + why, job.file, 0, key);
}

std::string shell_quote(const std::string& word) {
    bool plain = !word.empty();
    for (char c : word)
        plain = plain &&
                (std::isalnum(static_cast<unsigned char>(c)) || std::string("_-.,/:=+@%").find(c) != std::string::npos);
    if (plain) return word;
    std::string q = "'";
    for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

namespace {

// `${NAME:-default}` (and `$NAME`, `${NAME}`) read as the default, or "" without one.
std::string expand(const std::string& w) {
    std::string out;
    for (size_t i = 0; i < w.size(); ++i) {
        if (w[i] != '$') {
            out += w[i];
            continue;
        }
        if (i + 1 < w.size() && w[i + 1] == '{') {
            const size_t end = w.find('}', i);
            if (end == std::string::npos) return out + w.substr(i);
            const std::string inner = w.substr(i + 2, end - i - 2);
            const size_t dflt = inner.find(":-");
            if (dflt != std::string::npos) out += inner.substr(dflt + 2);
            i = end;
        } else if (i + 1 < w.size() && (w[i + 1] == '@' || w[i + 1] == '*')) {
            ++i;  // the script's own arguments: none here
        } else {
            while (i + 1 < w.size() && (std::isalnum(static_cast<unsigned char>(w[i + 1])) || w[i + 1] == '_')) ++i;
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> shell_words(const std::string& script) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    auto finish = [&] {
        // An expansion to nothing ("$@", an unset variable) leaves no word.
        const std::string w = expand(word);
        if (in_word && !(w.empty() && word.find('$') != std::string::npos)) words.push_back(w);
        word.clear();
        in_word = false;
    };
    for (size_t i = 0; i < script.size(); ++i) {
        const char c = script[i];
        if (quote) {
            if (c == quote) quote = 0;
            else if (quote == '"' && c == '\\' && i + 1 < script.size() &&
                     std::string("\"\\$`").find(script[i + 1]) != std::string::npos)
                word += script[++i];  // an escaped character inside double quotes
            else word += c;
            continue;
        }
        if (c == '\\' && i + 1 < script.size() && script[i + 1] == '\n') {
            ++i;  // a line continuation
            continue;
        }
        if (c == '#' && !in_word) {
            while (i < script.size() && script[i] != '\n') ++i;
            finish();
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            finish();
            continue;
        }
        word += c;
        in_word = true;
    }
    finish();
    return words;
}

std::map<std::string, std::string> flag_values(const std::vector<std::string>& words, size_t from) {
    std::map<std::string, std::string> out;
    for (size_t i = from; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w.rfind("--", 0) != 0) continue;
        const size_t eq = w.find('=');
        if (eq != std::string::npos) {
            out[w.substr(0, eq)] = w.substr(eq + 1);
        } else if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
            out[w] = words[i + 1];
            ++i;
        } else {
            out[w] = "true";
        }
    }
    return out;
}

void CommandLine::flag(const std::string& name, const std::string& value, const std::string& cite) {
    lines_.push_back(value.empty() ? name : name + " " + shell_quote(value));
    if (!cite.empty()) cites_.emplace_back(name, cite);
}

void CommandLine::raw(const std::string& name, const std::string& quoted, const std::string& cite) {
    lines_.push_back(name + " " + quoted);
    if (!cite.empty()) cites_.emplace_back(name, cite);
}

std::string CommandLine::text(const std::string& sources) const {
    std::string s;
    if (!sources.empty() && !cites_.empty()) {
        s += "# Where each flag is defined (" + sources + "):\n";
        for (const auto& [flag, cite] : cites_) s += "#   " + flag + "  " + cite + "\n";
    }
    s += head_;
    for (const std::string& l : lines_) s += " \\\n    " + l;
    return s + "\n";
}

std::string number_text(double v) {
    for (int digits = 1; digits <= 17; ++digits) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::stod(buf) == v) return buf;
    }
    return std::to_string(v);
}

YAML::Node yaml_number(double v) { return YAML::Node(number_text(v)); }

}  // namespace fathom::scenarios::launch
