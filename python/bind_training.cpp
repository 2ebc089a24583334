// Python facade: run a training scenario and get the metrics as a dict; input errors become
// ValueError with the same file/line/key message as the CLI. The GIL is released while simulating.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "plans/evaluator.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"

namespace py = pybind11;
using namespace fathom;

namespace {

py::dict run_scenario(const std::string& path, const std::vector<std::string>& overrides) {
    workloads::StepReport r;
    std::string name;
    {
        py::gil_scoped_release release;
        const scenarios::Catalog catalog;
        const auto s = scenarios::load_scenario(path, catalog, overrides);
        name = s.name;
        plans::EvaluateOptions opt;
        opt.cost_table = s.cost_table.get();
        r = plans::evaluate_training(s.model, s.cluster, s.plan, opt);
    }
    py::dict d;
    d["scenario"] = name;
    d["step_time_s"] = r.step_time_s;
    d["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
    d["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
    d["mfu"] = r.mfu;
    d["bubble_fraction"] = r.bubble_fraction;
    d["exposed_comm_s"] = r.exposed_comm_s;
    d["peak_memory_bytes"] = r.peak_memory_bytes;
    d["memory_capacity_bytes"] = r.memory_capacity_bytes;
    d["out_of_memory"] = r.out_of_memory;
    return d;
}

}  // namespace

PYBIND11_MODULE(_fathom, m) {
    m.doc() = "fathom: predict LLM training steps on simulated clusters";
    py::register_exception<sim::InputError>(m, "InputError", PyExc_ValueError);
    m.def("run", &run_scenario, py::arg("scenario"), py::arg("overrides") = std::vector<std::string>{},
          "Predict one training step of a scenario file; overrides are 'key=value' strings like the CLI's --set.");
}
