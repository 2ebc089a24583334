#pragma once
// Error tiers (see STYLE.md, DuckDB's error handling):
//  - InputError: the user's input is wrong (bad YAML, unknown key, missing unit, impossible plan).
//    It carries the file, line and key when known; the CLI maps it to exit code 2.
//  - InternalError: a broken invariant inside fathom (a bug). Raised by FATHOM_CHECK.
// Expected outcomes (an out-of-memory plan, a case that cannot be expressed) are return values,
// never exceptions.
#include <stdexcept>
#include <string>

namespace fathom::sim {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class InputError : public Error {
public:
    InputError(std::string message, std::string file = {}, int line = 0, std::string key = {})
        : Error(compose(message, file, line, key)),
          message_(std::move(message)),
          file_(std::move(file)),
          line_(line),
          key_(std::move(key)) {}
    const std::string& file() const { return file_; }
    int line() const { return line_; }
    const std::string& key() const { return key_; }
    const std::string& bare_message() const { return message_; }

private:
    static std::string compose(const std::string& m, const std::string& f, int line, const std::string& key) {
        std::string out;
        if (!f.empty()) out += f;
        if (line > 0) out += (out.empty() ? "line " : ":") + std::to_string(line);
        if (!key.empty()) out += (out.empty() ? "" : ": ") + std::string("key '") + key + "'";
        if (!out.empty()) out += ": ";
        return out + m;
    }
    std::string message_, file_;
    int line_ = 0;
    std::string key_;
};

// A request larger than a replica's whole KV cache: the plan cannot serve the traffic (vLLM refuses
// to start when max_model_len exceeds its KV capacity). An input error for `fathom run`; a plan
// search records it as the candidate's out-of-memory verdict.
class KvCapacityError : public InputError {
public:
    using InputError::InputError;
};

// Simulated time past its range (sim/time.h): the input's scale is off. Thrown without a key; the
// evaluation that knows which key sets the scale rethrows it naming that key.
class TimeRangeError : public InputError {
public:
    using InputError::InputError;
};

class InternalError : public Error {
public:
    using Error::Error;
};

}  // namespace fathom::sim

// Always-on invariant check for programmer errors (never reachable from user input).
#define FATHOM_CHECK(cond, msg)                                                                                        \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            throw ::fathom::sim::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + (msg)); \
    } while (0)
