// Python facade: run a scenario file and get its report as a dict (the `fathom run --json` keys,
// with the per-stage table under "stages"); input errors become ValueError with the same
// file/line/key message as the CLI. The GIL is released while simulating.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "plans/evaluate.h"
#include "plans/report.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"

namespace py = pybind11;
using namespace fathom;

namespace {

py::object field(const plans::FieldValue& v) {
    return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

py::dict record(const plans::Record& r) {
    py::dict d;
    for (const auto& [name, value] : r.fields) d[py::str(name)] = field(value);
    return d;
}

py::dict run_scenario(const std::string& path, const std::vector<std::string>& overrides) {
    plans::Report rep;
    {
        py::gil_scoped_release release;
        const auto catalog = scenarios::load_catalog();
        const auto s = scenarios::load_scenario(path, *catalog, overrides);
        const auto outcome = plans::evaluate(s, scenarios::make_context(catalog, s.seed));
        rep = plans::make_report(s, outcome);
    }
    py::dict d = record(rep.summary);
    for (const auto& [name, rows] : rep.tables) {
        py::list l;
        for (const auto& row : rows) l.append(record(row));
        d[py::str(name)] = l;
    }
    return d;
}

}  // namespace

PYBIND11_MODULE(_fathom, m) {
    m.doc() = "fathom: predict LLM workloads on simulated clusters";
    py::register_exception<sim::InputError>(m, "InputError", PyExc_ValueError);
    m.def("run", &run_scenario, py::arg("scenario"), py::arg("overrides") = std::vector<std::string>{},
          "Predict a scenario file; overrides are 'key=value' strings like the CLI's --set. Returns the report as a "
          "dict (flat keys with dotted names, e.g. 'memory_bytes.total' per stage).");
}
