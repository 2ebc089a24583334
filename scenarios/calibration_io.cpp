#include "scenarios/calibration_io.h"

#include "scenarios/output_file.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "sim/input_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fathom::scenarios {

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

std::map<std::string, size_t> read_csv_header(std::istream& in, const std::string& path, const std::string& what,
                                              std::initializer_list<const char*> required) {
    std::string line;
    if (!std::getline(in, line)) throw sim::InputError("empty " + what, path, 1);
    sim::strip_bom(line);
    const auto header = split_csv(line);
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* name : required)
        if (!col.count(name)) throw sim::InputError(std::string("missing column '") + name + "'", path, 1);
    return col;
}

namespace {

// One row of a measurements file, its fields read by column name; errors name the file, the line
// and the column.
struct CsvRow {
    const std::map<std::string, size_t>& col;
    std::vector<std::string> fields;
    const std::string& path;
    int line_no;

    std::string get(const char* name) const {
        auto it = col.find(name);
        return it == col.end() || it->second >= fields.size() ? std::string() : fields[it->second];
    }
    double num(const char* name, bool required) const {
        const std::string s = get(name);
        if (s.empty()) {
            if (required) throw sim::InputError(std::string("missing value"), path, line_no, name);
            return 0;
        }
        try {
            size_t pos = 0;
            const double v = std::stod(s, &pos);
            if (pos == s.size()) return v;
        } catch (const std::exception&) {}
        throw sim::InputError("expected a number, got '" + s + "'", path, line_no, name);
    }
    // Shapes are whole, positive and below 2^53 (a fuzzer found 2.9e23 converted to int64: UB).
    int64_t i64(const char* name) const {
        const double v = num(name, true);
        if (!(v >= 1 && v <= 9007199254740992.0) || v != std::floor(v))
            throw sim::InputError("expected a whole number from 1 to 2^53, got '" + get(name) + "'", path, line_no,
                                  name);
        return static_cast<int64_t>(v);
    }
};

// The kernel a row measured: a GEMM, an attention pass, or a memory-bound kernel named `op`. Row
// kernels give their row width on every row of the op or on none: the width is a coordinate of the
// op's table group (a fuzzer found a group mixing both read out of bounds).
models::OpDesc row_op(const CsvRow& r, const std::string& op, hardware::Dtype dtype,
                      std::map<std::string, bool>& row_width_given) {
    if (op == "gemm")
        return models::gemm_op("gemm", r.i64("m"), r.i64("n"), r.i64("k"), dtype,
                               r.get("batch").empty() ? 1 : r.i64("batch"));
    if (op == "attention_fwd" || op == "attention_bwd") {
        models::AttentionShape s;
        s.heads = r.i64("heads");
        s.kv_heads = r.get("kv_heads").empty() ? s.heads : r.i64("kv_heads");
        models::SequenceSlice x;
        x.count = r.i64("batch");
        x.q_len = r.i64("seq_len");
        x.kv_len = r.get("kv_len").empty() ? x.q_len : r.i64("kv_len");
        s.slices = {x};
        s.head_dim = r.i64("head_dim");
        s.causal = r.get("causal") == "1" || r.get("causal") == "true";
        return models::attention_op(op == "attention_bwd", s, dtype);
    }
    if (op.empty()) throw sim::InputError("missing value", r.path, r.line_no, "op");
    // A memory-bound row names a kernel the models price (an op no layer emits would be fitted
    // and never used).
    const auto& known = models::measured_memory_kernels();
    if (std::find(known.begin(), known.end(), op) == known.end()) {
        std::string list = "gemm, attention_fwd, attention_bwd, launch";
        for (const auto& k : known) list += ", " + k;
        throw sim::InputError("unknown op '" + op + "' (expected one of " + list + ")", r.path, r.line_no, "op");
    }
    const double bytes = r.num("bytes", true);
    if (!(bytes > 0) || !std::isfinite(bytes))
        throw sim::InputError("must be a positive finite number of bytes, got '" + r.get("bytes") + "'", r.path,
                              r.line_no, "bytes");
    models::OpDesc m = models::memory_op(op, bytes);
    m.dtype = dtype;
    // Row kernels keep their row width (a coordinate of their table group).
    if (models::row_kernel(op)) {
        const bool given = !r.get("n").empty();
        const auto [it, first] = row_width_given.emplace(op, given);
        if (!first && it->second != given)
            throw sim::InputError("the rows of '" + op + "' must all give their row width or none may (" +
                                      (given ? "earlier rows do not" : "earlier rows do") + ")",
                                  r.path, r.line_no, "n");
        if (given) m.n = r.i64("n");
    }
    return m;
}

}  // namespace

MeasurementFile read_measurements_csv(const std::string& path) {
    std::ifstream in = sim::open_input(path, "measurements file");
    const auto col = read_csv_header(in, path, "measurements file", {"op", "dtype", "time_us"});
    std::string line;
    MeasurementFile out;
    std::map<std::string, bool> row_width_given;
    int line_no = 1;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        const CsvRow r{col, split_csv(line), path, line_no};
        const std::string op = r.get("op");
        const double t = r.num("time_us", true) * 1e-6;
        if (!(t > 0) || !std::isfinite(t))
            throw sim::InputError(
                "a kernel time must be a positive finite number of microseconds, got '" + r.get("time_us") + "'", path,
                line_no, "time_us");
        if (op == "launch") {
            out.launch_us.push_back(t * 1e6);
            continue;
        }
        const auto dtype = sim::lookup<hardware::Dtype>(r.get("dtype"));
        if (!dtype)
            throw sim::InputError(r.get("dtype").empty() ? "missing value" : "unknown dtype '" + r.get("dtype") + "'",
                                  path, line_no, "dtype");
        models::Measurement m;
        m.seconds = t;
        m.op = row_op(r, op, *dtype, row_width_given);
        out.rows.push_back(std::move(m));
    }
    return out;
}

void write_calibration_table(const models::CalibrationTable& t, const std::string& path) {
    YAML::Emitter e;
    e.SetDoublePrecision(17);
    e << YAML::BeginMap;
    e << YAML::Key << "kind" << YAML::Value << "calibration_table";
    e << YAML::Key << "device" << YAML::Value << t.device;
    e << YAML::Key << "source" << YAML::Value << t.source;
    e << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
    for (const auto& g : t.groups) {
        e << YAML::BeginMap;
        e << YAML::Key << "kind" << YAML::Value << sim::name(g.kind);
        e << YAML::Key << "op" << YAML::Value << g.op;
        e << YAML::Key << "dtype" << YAML::Value << sim::name(g.dtype);
        e << YAML::Key << "coef" << YAML::Value << YAML::Flow << g.coef;
        e << YAML::Key << "lo" << YAML::Value << YAML::Flow << g.lo;
        e << YAML::Key << "hi" << YAML::Value << YAML::Flow << g.hi;
        e << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
        for (const auto& p : g.points) {
            std::vector<double> row = p.coords;
            row.push_back(p.log_ratio);
            e << YAML::Flow << row;
        }
        e << YAML::EndSeq << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
    write_output_file(path, std::string("# fathom calibration table: written by `fathom calibrate fit`; see "
                                        "models/cost/calibration_table.h\n") +
                                e.c_str() + "\n");
}

models::CalibrationTable read_calibration_table(const std::string& path) {
    const Node root = load_yaml_file(path);
    root.allow_only({"kind", "device", "source", "groups"});
    if (root.str("kind") != "calibration_table") root.fail("kind", "expected kind: calibration_table");
    models::CalibrationTable t;
    t.device = root.str("device");
    t.source = root.has("source") ? root.str("source") : "";
    auto doubles = [](const Node& n) {
        std::vector<double> v;
        for (const auto& item : n.items()) {
            try {
                v.push_back(std::stod(item.scalar()));
            } catch (const std::exception&) {
                item.fail("", "expected a number");
            }
        }
        return v;
    };
    for (const auto& gn : root.child("groups").items()) {
        gn.allow_only({"kind", "op", "dtype", "coef", "lo", "hi", "points"});
        models::CalibrationGroup g;
        const auto kind = sim::lookup<models::OpKind>(gn.str("kind"));
        if (!kind) gn.fail("kind", "unknown op kind '" + gn.str("kind") + "'");
        g.kind = *kind;
        g.op = gn.str("op");
        const auto d = sim::lookup<hardware::Dtype>(gn.str("dtype"));
        if (!d) gn.fail("dtype", "unknown dtype");
        g.dtype = *d;
        g.coef = doubles(gn.child("coef"));
        g.lo = doubles(gn.child("lo"));
        g.hi = doubles(gn.child("hi"));
        for (const auto& pn : gn.child("points").items()) {
            auto row = doubles(pn);
            if (row.size() != g.lo.size() + 1) pn.fail("", "point has the wrong number of coordinates");
            models::CalibrationPoint p;
            p.log_ratio = row.back();
            row.pop_back();
            p.coords = std::move(row);
            g.points.push_back(std::move(p));
        }
        t.groups.push_back(std::move(g));
    }
    return t;
}

}  // namespace fathom::scenarios
