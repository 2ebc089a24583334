// `fathom completion bash|zsh`: a completion script written from the command and option tables
// (tools/cli/commands.cpp), the scenario keys (plans/keys.h, for --set KEY=VALUE, with the choices
// of choice keys) and the registries (--collective-algorithm). Both shells share one candidate
// function, `_fathom_candidates CMD PREV CUR`, that prints the words for the word being completed
// (or `__files__ EXT`: complete file names); only the glue to each shell's completion differs.
#include "hardware/collectives/collective.h"
#include "plans/keys.h"
#include "scenarios/imports/imports.h"
#include "scenarios/launch/launch.h"
#include "tools/cli/commands.h"

#include <cctype>
#include <iostream>
#include <string>
#include <vector>

namespace fathom::cli {

namespace {

std::vector<std::string> import_formats() {
    std::vector<std::string> out;
    for (const auto& e : scenarios::imports::import_registry().entries()) out.push_back(e.name);
    return out;
}

// Words the scripts may carry unquoted.
bool plain(const std::string& w) {
    if (w.empty()) return false;
    for (char c : w)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+' || c == '/' ||
              c == ':' || c == '='))
            return false;
    return true;
}

std::string joined(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words)
        if (plain(w)) s += (s.empty() ? "" : " ") + w;
    return s;
}

std::string options_of(const CommandSpec& c) {
    std::vector<std::string> w;
    for (const char* o : c.options) {
        w.push_back(std::string("--") + o);
        if (const char s = find_option(o)->short_name) w.push_back(std::string("-") + s);
    }
    w.push_back("--help");
    return joined(w);
}

// The case arms of --set: keys (each "key="), and per choice key its "key=choice" words.
std::string set_arms() {
    std::vector<std::string> keys;
    std::string choice_arms;
    for (const plans::KeyInfo* k : plans::all_keys()) {
        if (!k->shown_type.empty() || !plain(k->path)) continue;  // a section, not a value
        keys.push_back(k->path + "=");
        std::vector<std::string> values;
        if (k->type == plans::KeyType::Boolean) values = {"true", "false"};
        else if (k->type == plans::KeyType::Choice) values = k->choices;
        for (std::string& v : values) v = k->path + "=" + v;
        if (!values.empty())
            choice_arms += "                    " + k->path + "=*) words=\"" + joined(values) + "\";;\n";
    }
    return "            --set)\n"
           "                case \"$cur\" in\n" +
           choice_arms +
           "                    *=*) return;;\n"
           "                    *) words=\"" +
           joined(keys) +
           "\";;\n"
           "                esac;;\n";
}

// The case arms of each command's positional arguments.
std::string positional_arms() {
    std::string s;
    for (const CommandSpec& c : command_table()) {
        s += std::string("                    ") + c.name + ") ";
        switch (c.positional) {
            case Positional::None: s += "return;;\n"; break;
            case Positional::Yaml: s += "echo \"__files__ yaml\"; return;;\n"; break;
            case Positional::Any: s += "echo \"__files__\"; return;;\n"; break;
            case Positional::Category:
                s += "[ \"$prev\" = \"" + std::string(c.name) + "\" ] && words=\"" + joined(list_categories()) +
                     "\";;\n";
                break;
            case Positional::Csv:
            case Positional::Subcommand: {
                std::vector<std::string> sub(c.words.begin(), c.words.end());
                s += "if [ \"$prev\" = \"" + std::string(c.name) + "\" ]; then words=\"" + joined(sub) + "\"; ";
                // calibrate: refit reads a measurement file (YAML), fit and layers CSVs.
                s += c.positional == Positional::Csv
                         ? "elif [ \"$prev\" = refit ]; then echo \"__files__ yaml\"; return; "
                           "else echo \"__files__ csv\"; return; fi;;\n"
                         : "fi;;\n";
                break;
            }
        }
    }
    return s;
}

std::string candidates_function() {
    std::vector<std::string> commands;
    for (const CommandSpec& c : command_table()) commands.push_back(c.name);
    commands.insert(commands.end(), {"--help", "--version"});
    std::vector<std::string> algorithms, frameworks;
    for (const auto& e : hardware::collective_registry().entries()) algorithms.push_back(e.name);
    for (const auto& e : scenarios::launch::launch_registry().entries()) frameworks.push_back(e.name);
    std::string value_opts, file_opts;
    for (const OptionSpec& o : option_table()) {
        if (!o.value || std::string(o.name) == "set") continue;
        const std::string v = o.value;
        std::string names = std::string("--") + o.name;
        if (o.short_name) names += std::string("|-") + o.short_name;
        (v == "FILE" ? file_opts : value_opts) += (v == "FILE" ? file_opts : value_opts).empty() ? names : "|" + names;
    }
    std::string s =
        "_fathom_candidates() {\n"
        "    [ -n \"${ZSH_VERSION:-}\" ] && setopt localoptions shwordsplit noglob\n"
        "    local cmd=\"$1\" prev=\"$2\" cur=\"$3\" words=\"\" w\n"
        "    if [ -z \"$cmd\" ]; then\n"
        "        words=\"" +
        joined(commands) +
        "\"\n"
        "    else\n"
        "        case \"$prev\" in\n" +
        set_arms() +
        "            --network) words=\"analytical simgrid\";;\n"
        "            --placement) words=\"packed interleaved\";;\n"
        "            --collective-algorithm) words=\"" +
        joined(algorithms) +
        "\";;\n"
        "            --from) words=\"" +
        joined(import_formats()) +
        "\";;\n"
        "            --for) words=\"" +
        joined(frameworks) +
        "\";;\n"
        "            " +
        file_opts +
        ") echo \"__files__\"; return;;\n"
        "            " +
        value_opts +
        ") return;;\n"
        "        esac\n"
        "    fi\n"
        "    if [ -z \"$words\" ]; then\n"
        "        case \"$cur\" in\n"
        "            -*)\n"
        "                case \"$cmd\" in\n";
    for (const CommandSpec& c : command_table())
        s += std::string("                    ") + c.name + ") words=\"" + options_of(c) + "\";;\n";
    s += "                esac;;\n"
         "            *)\n"
         "                case \"$cmd\" in\n";
    s += positional_arms();
    s += "                esac;;\n"
         "        esac\n"
         "    fi\n"
         "    for w in $words; do\n"
         "        case \"$w\" in \"$cur\"*) printf '%s\\n' \"$w\";; esac\n"
         "    done\n"
         "}\n";
    return s;
}

// The words of the line up to the cursor, split at white space (so "key=value" stays one word):
// the command (the second word, once there is a third), the previous word and the current one.
const char* kBash = R"SH(
_fathom() {
    local line="${COMP_LINE:0:COMP_POINT}" cur prev="" cmd="" c
    local -a w
    read -r -a w <<< "$line"
    [[ "$line" =~ [[:space:]]$ ]] && w+=("")
    cur="${w[${#w[@]}-1]}"
    (( ${#w[@]} > 1 )) && prev="${w[${#w[@]}-2]}"
    (( ${#w[@]} > 2 )) && cmd="${w[1]}"
    COMPREPLY=()
    local out
    out="$(_fathom_candidates "$cmd" "$prev" "$cur")"
    case "$out" in
        __files__*)
            compopt -o filenames 2>/dev/null
            local ext="${out#__files__}"; ext="${ext# }"
            if [[ -n "$ext" ]]; then
                COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X "!*.$ext" -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return;;
    esac
    while IFS= read -r c; do [[ -n "$c" ]] && COMPREPLY+=("$c"); done <<< "$out"
    [[ "${COMPREPLY[*]}" == *= || "${COMPREPLY[*]}" == *"= "* ]] && compopt -o nospace 2>/dev/null
    # bash replaces only what follows the last word break ('=' by default): drop what precedes it.
    if [[ "$cur" == *=* && "$COMP_WORDBREAKS" == *=* ]]; then
        local pre="${cur%=*}="
        COMPREPLY=("${COMPREPLY[@]#"$pre"}")
    fi
}
complete -F _fathom fathom
)SH";

const char* kZsh = R"SH(
_fathom() {
    local cmd="" prev="" cur="${words[CURRENT]}"
    (( CURRENT > 1 )) && prev="${words[CURRENT-1]}"
    (( CURRENT > 2 )) && cmd="${words[2]}"
    local out
    out="$(_fathom_candidates "$cmd" "$prev" "$cur")"
    case "$out" in
        "__files__ "*) _files -g "*.${out#__files__ }"; return;;
        __files__) _files; return;;
    esac
    local -a c ends
    c=("${(@f)out}")
    ends=(${(M)c:#*=})
    c=(${c:#*=})
    (( ${#ends} )) && compadd -Q -S '' -- "${ends[@]}"
    (( ${#c} )) && compadd -Q -- "${c[@]}"
}
# Autoloaded from $fpath: complete now; sourced after compinit: register.
if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then _fathom "$@"
elif (( $+functions[compdef] )); then compdef _fathom fathom; fi
)SH";

}  // namespace

int cmd_completion(const Args& a) {
    if (a.positional.size() != 1 || (a.positional[0] != "bash" && a.positional[0] != "zsh"))
        throw sim::InputError("completion: say which shell: fathom completion bash|zsh");
    const bool zsh = a.positional[0] == "zsh";
    std::cout << (zsh ? "#compdef fathom\n" : "") << "# " << a.positional[0]
              << " completion for fathom, written by `fathom completion " << a.positional[0]
              << "` from its command, option and key tables\n"
              << (zsh ? "# Save as _fathom in a directory of $fpath, or source it after compinit.\n"
                      : "# Load it with: source <(fathom completion bash)\n")
              << candidates_function() << (zsh ? kZsh : kBash);
    return 0;
}

}  // namespace fathom::cli
