// `fathom import` (scenarios/imports/): vLLM's, SGLang's, GenAI-Perf's and AIPerf's serving
// benchmark results, nccl-tests output and Megatron-LM and NeMo logs become measured-format cases
// whose fields are the file's and the scenario's, which `fathom compare` then simulates. The
// fixtures (tests/data/import/, README.md there names each format's source) are written by hand in
// each tool's format; their numbers are illustrative.
#include "plans/keys.h"
#include "scenarios/imports/imports.h"
#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/import_fixture.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

using namespace fathom;
using namespace fathom::scenarios::imports;
using testing::kSource;

namespace {

Source fixture(const std::string& name) { return testing::import_fixture(name); }

// The imported document compared: the results of its cases.
std::vector<scenarios::CompareResult> compared(const YAML::Node& doc, const std::string& name) {
    const std::string path = std::string(FATHOM_BINARY_DIR) + "/" + name;
    std::ofstream(path) << doc;
    return scenarios::compare_measured(path, testing::source_context());
}

plans::Scenario scenario(const std::string& name, const std::vector<std::string>& sets = {}) {
    return scenarios::load_scenario(testing::example(name), testing::source_catalog(), sets);
}

double metric_of(const YAML::Node& c, const std::string& metric, const std::string& statistic) {
    for (const auto& m : c["other_metrics"])
        if (m["metric"].as<std::string>() == metric && m["statistic"].as<std::string>() == statistic)
            return m["value"].as<double>();
    return -1;
}

}  // namespace

TEST_CASE("a vLLM benchmark result becomes a serving case that compare runs on the scenario's layout",
          "[scenarios][import]") {
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    const Context ctx{&s, &testing::source_catalog(), ""};
    const YAML::Node doc = import_file(fixture("vllm_bench_serve.json"), "", ctx);
    const YAML::Node c = doc["cases"][0];
    CHECK(c["source"]["type"].as<std::string>() == "import");
    const YAML::Node w = c["serving"]["workload"];
    CHECK(w["arrival"].as<std::string>() == "poisson");
    CHECK(w["request_rate"].as<double>() == 4.0);
    CHECK(w["num_requests"].as<int>() == 200);
    CHECK(w["input_len"].as<int>() == 1024);  // 204800 input tokens over 200 requests
    CHECK(w["output_len"].as<int>() == 128);
    CHECK(c["metric"].as<std::string>() == "output_tokens_per_s");
    CHECK(c["value"].as<double>() == 491.4);
    CHECK(metric_of(c, "ttft_ms", "p99") == 160.4);
    CHECK(metric_of(c, "e2e_latency_s", "mean") == Approx(3.155));  // 3155 ms
    // The layout is the scenario's: 2 x TP 4.
    CHECK(c["serving"]["tp"].as<int>() == 4);
    CHECK(c["serving"]["dp"].as<int>() == 2);
    const auto r = compared(doc, "import_vllm.yaml");
    REQUIRE(r.size() == 1);
    INFO(r.front().reason);
    REQUIRE(r.front().ok());
    CHECK(r.front().predicted > 0);
    // The plan compare ran is the scenario's, but for the traffic (and what only a capacity search
    // reads), and max_model_len: the scenario leaves it to the model's context, which the launch
    // files cannot say, and compare sets it from the case's lengths.
    for (const auto& [key, value] : plans::changed_serving_keys(*s.serving(), *r.front().serving_plan)) {
        INFO(key << " -> " << plans::format_value(value));
        CHECK((key.rfind("traffic.", 0) == 0 || key.rfind("slo.", 0) == 0 || key.rfind("capacity.", 0) == 0 ||
               key == "serving.max_model_len"));
    }
}

TEST_CASE("an SGLang bench_serving JSONL gives a case per line, an infinite rate a closed loop",
          "[scenarios][import]") {
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml", {"serving.engine=sglang"});
    const YAML::Node doc = import_file(fixture("sglang_bench_serving.jsonl"), "sglang-bench", {&s, nullptr, "run"});
    REQUIRE(doc["cases"].size() == 2);
    CHECK(doc["cases"][0]["id"].as<std::string>() == "run-1");
    CHECK(doc["cases"][1]["serving"]["workload"]["arrival"].as<std::string>() == "concurrency");
    CHECK(doc["cases"][1]["serving"]["workload"]["concurrency"].as<int>() == 32);  // request_rate Infinity
    CHECK(doc["cases"][0]["serving"]["engine"].as<std::string>() == "sglang");
    const auto r = compared(doc, "import_sglang.yaml");
    REQUIRE(r.size() == 2);
    CHECK((r[0].ok() && r[1].ok()));
}

TEST_CASE("nccl-tests output becomes an all-reduce microbenchmark, every size a variant", "[scenarios][import]") {
    const YAML::Node doc = import_file(fixture("nccl_all_reduce_8xh100.txt"), "", {});
    const YAML::Node c = doc["cases"][0];
    CHECK(c["kind"].as<std::string>() == "microbench");
    CHECK(c["hardware"]["accelerator"].as<std::string>() == "h100-sxm-80gb");  // "NVIDIA H100 80GB HBM3"
    CHECK(c["benchmark"]["op"].as<std::string>() == "allreduce");
    CHECK(c["benchmark"]["ranks"].as<int>() == 8);
    CHECK(c["benchmark"]["size_bytes"].as<int64_t>() == int64_t{1} << 33);
    CHECK(c["value"].as<double>() == 468.2);  // busbw at 8 GiB, out of place
    CHECK(c["other_metrics"].size() == 14);   // in place at 8 GiB, and 13 other sizes
    const auto r = compared(doc, "import_nccl.yaml");
    REQUIRE(r.front().ok());
    CHECK(r.front().predicted > 0);
}

TEST_CASE("a Megatron-LM log becomes a training case: its arguments the plan, the median iteration the step",
          "[scenarios][import]") {
    const plans::Scenario s = scenario("quickstart.yaml");
    const YAML::Node doc = import_file(fixture("megatron_llama3_8b_8xh100.log"), "", {&s, nullptr, ""});
    const YAML::Node c = doc["cases"][0];
    const YAML::Node t = c["training"];
    CHECK(t["tp"].as<int>() == 1);
    CHECK(t["dp"].as<int>() == 8);
    CHECK(t["global_batch_size"].as<int>() == 128);
    CHECK(t["recompute"].as<std::string>() == "full");
    CHECK(t["zero_stage"].as<int>() == 1);
    CHECK(c["model"]["kv_heads"].as<int>() == 8);
    // Iterations after the first: 21498.4, 21512.3, 21526.8, 21530.2, 21541.9 ms; the median.
    CHECK(c["value"].as<double>() == Approx(21.5268));
    const auto r = compared(doc, "import_megatron.yaml");
    INFO(r.front().reason);
    REQUIRE(r.front().ok());
}

TEST_CASE("files written in the tools' own formats import: vLLM 0.11 with metadata, nccl-tests 2.19 over two nodes",
          "[scenarios][import]") {
    // Written with the tools' own printf and json.dump formats (vllm 0.11.0 serve.py, nccl-tests
    // v2.19.6 common.cu under MPI: nGpus counts a process's GPUs, ranks are the "#  Rank" lines).
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    const YAML::Node v = import_file(fixture("vllm_bench_serve_0.11.json"), "", {&s, nullptr, ""})["cases"][0];
    CHECK(v["serving"]["workload"]["request_rate"].as<double>() == 4.0);
    CHECK(v["serving"]["workload"]["num_requests"].as<int>() == 100);
    CHECK(metric_of(v, "ttft_ms", "p90") > 0);
    const YAML::Node n = import_file(fixture("nccl_all_reduce_2x8xh100_v2.19.txt"), "", {})["cases"][0];
    CHECK(n["cluster"]["nodes"].as<int>() == 2);
    CHECK(n["benchmark"]["ranks"].as<int>() == 16);
    CHECK(n["completeness"].as<std::string>() == "partial");  // the scale-out network: the scenario's
}

TEST_CASE("import errors name the file, its line or key, and what is missing", "[scenarios][import]") {
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    Source truncated = fixture("vllm_bench_serve.json");
    truncated.text = "{\n  \"output_throughput\": 491.4,\n  \"mean_e2el_ms\": 3155.0,\n  \"completed\": ";
    try {
        import_file(truncated, "vllm-bench", {&s, nullptr, ""});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.file() == truncated.path);
        CHECK(e.line() == 4);
    }
    // A serving result does not say the server's layout: the scenario must.
    CHECK_THROWS_WITH(import_file(fixture("vllm_bench_serve.json"), "", {}),
                      Catch::Contains("does not say the server's model, GPUs and layout"));
    CHECK_THROWS_WITH(import_file(fixture("vllm_bench_serve.json"), "nccl-tests", {}),
                      Catch::Contains("not a file of"));
    const plans::Scenario training = scenario("quickstart.yaml");
    CHECK_THROWS_WITH(import_file(fixture("vllm_bench_serve.json"), "", {&training, nullptr, ""}),
                      Catch::Contains("a serving file needs a serving scenario, and this is a training one"));
    Source cut = fixture("nccl_all_reduce_8xh100.txt");
    cut.text = cut.text.substr(0, cut.text.find("     1048576"));
    CHECK_THROWS_WITH(import_file(cut, "nccl-tests", {}), Catch::Contains("no result rows"));
    // A type the format has no dtype for is refused, naming the row's line (not passed on as text).
    Source doubles = fixture("nccl_all_reduce_8xh100.txt");
    for (size_t at = doubles.text.find("     float"); at != std::string::npos; at = doubles.text.find("     float"))
        doubles.text.replace(at, 10, "    double");
    CHECK_THROWS_WITH(import_file(doubles, "nccl-tests", {}), Catch::Contains("'double' is none of"));
}

TEST_CASE("a GenAI-Perf export becomes a serving case: its concurrency a closed loop, inter_token_latency the tpot",
          "[scenarios][import]") {
    // genai_perf/export_data/json_exporter.py: the statistics a metric each, the arguments as input_config.
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    const YAML::Node doc = import_file(fixture("genai_perf_profile_export_genai_perf.json"), "", {&s, nullptr, ""});
    const YAML::Node c = doc["cases"][0];
    CHECK(c["serving"]["benchmark_tool"].as<std::string>() == "genai-perf");  // recognized from the content
    const YAML::Node w = c["serving"]["workload"];
    CHECK(w["arrival"].as<std::string>() == "concurrency");  // input_config.concurrency 16, request_rate null
    CHECK(w["concurrency"].as<int>() == 16);
    CHECK(w["num_requests"].as<int>() == 200);  // input_config.request_count
    CHECK(w["input_len"].as<int>() == 1024);    // input_sequence_length.avg
    CHECK(w["output_len"].as<int>() == 128);
    CHECK(c["value"].as<double>() == 660.5);  // output_token_throughput.avg, tokens/sec
    CHECK(metric_of(c, "requests_per_s", "single") == 5.16);
    CHECK(metric_of(c, "ttft_ms", "p99") == 330.0);
    // inter_token_latency is per request (request_latency - ttft) / (osl - 1): (3100 - 180) / 127 =
    // 22.99 ms in the mean, fathom's tpot; the export has no per-gap ITL.
    CHECK(metric_of(c, "tpot_ms", "mean") == 23.0);
    CHECK(metric_of(c, "tpot_ms", "median") == 22.9);  // p50
    CHECK(metric_of(c, "itl_ms", "mean") == -1);
    CHECK(metric_of(c, "e2e_latency_s", "p90") == Approx(3.21));  // request_latency.p90 3210 ms
    const auto r = compared(doc, "import_genai_perf.yaml");
    INFO(r.front().reason);
    REQUIRE(r.front().ok());
    CHECK(r.front().predicted > 0);
}

TEST_CASE("an AIPerf export: its request rate and mode the arrivals, its request_count the requests",
          "[scenarios][import]") {
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    const Source aiperf = fixture("aiperf_profile_export_aiperf.json");
    const YAML::Node c = import_file(aiperf, "aiperf", {&s, nullptr, ""})["cases"][0];
    const YAML::Node w = c["serving"]["workload"];
    CHECK(w["arrival"].as<std::string>() == "poisson");  // loadgen.request_rate_mode
    CHECK(w["request_rate"].as<double>() == 8.0);
    CHECK(w["num_requests"].as<int>() == 400);  // request_count.avg (requests completed)
    CHECK(w["input_len"].as<int>() == 2048);
    CHECK(c["value"].as<double>() == 1012.5);
    CHECK(metric_of(c, "tpot_ms", "p99") == 24.87);
    CHECK(metric_of(c, "e2e_latency_s", "median") == Approx(2.6502));
    CHECK(import_file(aiperf, "", {&s, nullptr, ""})["cases"][0]["serving"]["benchmark_tool"].as<std::string>() ==
          "aiperf");
    // AIPerf's first exporter put the metrics under "records": the same case.
    nlohmann::json j = nlohmann::json::parse(aiperf.text), records;
    for (const char* k :
         {"request_throughput", "request_latency", "time_to_first_token", "inter_token_latency",
          "output_token_throughput", "output_sequence_length", "input_sequence_length", "request_count"}) {
        records[k] = j[k];
        j.erase(k);
    }
    j["records"] = records;
    const YAML::Node nested = import_file({aiperf.path, j.dump(2)}, "", {&s, nullptr, ""})["cases"][0];
    CHECK(nested["value"].as<double>() == 1012.5);
    CHECK(metric_of(nested, "tpot_ms", "p99") == 24.87);
    // A file of the other tool is refused by name.
    CHECK_THROWS_WITH(import_file(aiperf, "genai-perf", {&s, nullptr, ""}),
                      Catch::Contains("not a file of GenAI-Perf"));
    CHECK_THROWS_WITH(import_file(fixture("genai_perf_profile_export_genai_perf.json"), "aiperf", {&s, nullptr, ""}),
                      Catch::Contains("not a file of AIPerf"));
}

TEST_CASE("GenAI-Perf and AIPerf errors name the file and the JSON key or line", "[scenarios][import]") {
    const plans::Scenario s = scenario("serving-llama70b-8xh100.yaml");
    Source cut = fixture("genai_perf_profile_export_genai_perf.json");
    cut.text = cut.text.substr(0, cut.text.find("\"inter_token_latency\""));
    try {
        import_file(cut, "genai-perf", {&s, nullptr, ""});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.file() == cut.path);
        CHECK(e.line() == 1 + std::count(cut.text.begin(), cut.text.end(), '\n'));  // where the text ends
    }
    Source no_arrival = fixture("genai_perf_profile_export_genai_perf.json");
    no_arrival.text.replace(no_arrival.text.find("\"concurrency\": 16"), 17, "\"concurrency\": null");
    CHECK_THROWS_WITH(import_file(no_arrival, "", {&s, nullptr, ""}),
                      Catch::Contains("key 'input_config'") && Catch::Contains("neither a concurrency nor"));
    Source tokens = fixture("aiperf_profile_export_aiperf.json");
    tokens.text.replace(tokens.text.find("\"unit\": \"ms\""), 12, "\"unit\": \"tokens\"");  // request_latency's
    CHECK_THROWS_WITH(import_file(tokens, "", {&s, nullptr, ""}), Catch::Contains("key 'request_latency.unit'"));
    Source no_osl = fixture("aiperf_profile_export_aiperf.json");
    no_osl.text.replace(no_osl.text.find("\"output_sequence_length\""), 24, "\"output_seq_len\"");
    CHECK_THROWS_WITH(import_file(no_osl, "", {&s, nullptr, ""}), Catch::Contains("key 'output_sequence_length.avg'"));
}

TEST_CASE("a NeMo 1.x log: the plan from its configuration dump, the median train_step_timing the step",
          "[scenarios][import]") {
    // The quickstart's plan is TP 1 x CP 2; the log's Hydra configuration says TP 2 with sequence
    // parallelism, CP 1, on trainer.devices 8 x num_nodes 1.
    const plans::Scenario s = scenario("quickstart.yaml");
    const Source log = fixture("nemo_1x_llama3_8b_8xh100.log");
    const YAML::Node c = import_file(log, "", {&s, nullptr, ""})["cases"][0];
    CHECK(c["source"]["note"].as<std::string>().find("nemo-log") != std::string::npos);
    const YAML::Node t = c["training"];
    CHECK(t["framework"].as<std::string>() == "nemo");
    CHECK(t["tp"].as<int>() == 2);
    CHECK(t["cp"].as<int>() == 1);
    CHECK(t["dp"].as<int>() == 4);
    CHECK(t["sequence_parallel"].as<bool>());
    CHECK(t["global_batch_size"].as<int>() == 128);
    CHECK(t["zero_stage"].as<int>() == 1);  // distributed_fused_adam
    CHECK(c["model"]["seq_len"].as<int>() == 8192);
    CHECK(!c["assumed"]);
    // Steps 1-6 after the warm-up step 0 (12.85 s): 10.62, 10.58, 10.61 (step 3 redrawn: its 10.70
    // replaced), 10.60, 10.65, 10.59; the median of six is (10.60 + 10.61) / 2.
    CHECK(c["value"].as<double>() == Approx(10.605));
    const auto r = compared(import_file(log, "nemo-log", {&s, nullptr, ""}), "import_nemo1.yaml");
    INFO(r.front().reason);
    REQUIRE(r.front().ok());
    CHECK(r.front().training_plan->layout.tp == 2);
}

TEST_CASE("a NeMo 2.0 log: ProgressPrinter's steps, the plan the scenario's with its global batch checked",
          "[scenarios][import]") {
    const plans::Scenario s = scenario("quickstart.yaml");
    const Source log = fixture("nemo2_llama3_8b_8xh100.log");
    const YAML::Node c = import_file(log, "", {&s, nullptr, ""})["cases"][0];
    CHECK(c["training"]["cp"].as<int>() == 2);  // the scenario's
    CHECK(c["completeness"].as<std::string>() == "mostly_complete");
    CHECK(c["assumed"][0].as<std::string>() == "training.tp");
    // After iteration 0 (13.91 s): 10.62, 10.58, 10.61, 10.6, 10.65; the median 10.61.
    CHECK(c["value"].as<double>() == Approx(10.61));
    REQUIRE(compared(import_file(log, "", {&s, nullptr, ""}), "import_nemo2.yaml").front().ok());
    const plans::Scenario bigger = scenario("quickstart.yaml", {"training.global_batch_size=256"});
    try {
        import_file(log, "", {&bigger, nullptr, ""});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "global_batch_size");
        CHECK(e.line() == 15);  // the first "Training epoch" line
    }
}

TEST_CASE("NeMo log errors name the file, its line and the key", "[scenarios][import]") {
    const plans::Scenario s = scenario("quickstart.yaml");
    CHECK_THROWS_WITH(import_file(fixture("nemo2_llama3_8b_8xh100.log"), "", {}),
                      Catch::Contains("does not say the accelerator"));
    CHECK_THROWS_WITH(import_file(fixture("nemo2_llama3_8b_8xh100.log"), "megatron-log", {&s, nullptr, ""}),
                      Catch::Contains("not a file of a Megatron-LM training log"));
    Source cut = fixture("nemo2_llama3_8b_8xh100.log");
    cut.text = cut.text.substr(0, cut.text.find("Training epoch"));  // NeMo's lines, no step yet
    CHECK_THROWS_WITH(import_file(cut, "nemo-log", {&s, nullptr, ""}), Catch::Contains("no step with"));
    Source garbled = fixture("nemo2_llama3_8b_8xh100.log");
    garbled.text.replace(garbled.text.find("train_step_timing in s: 10.58"), 29, "train_step_timing in s: nan?");
    try {
        import_file(garbled, "", {&s, nullptr, ""});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "train_step_timing in s");
        CHECK(e.line() == 17);
    }
    // The dump's model is not the scenario's: refused at its key and line.
    const plans::Scenario big = scenario("quickstart.yaml", {"model=llama3-70b"});
    try {
        import_file(fixture("nemo_1x_llama3_8b_8xh100.log"), "", {&big, nullptr, ""});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "model.num_layers");
        CHECK(e.line() == 42);
    }
    Source devices = fixture("nemo_1x_llama3_8b_8xh100.log");
    devices.text.replace(devices.text.find("devices: 8"), 10, "devices: auto");
    CHECK_THROWS_WITH(import_file(devices, "", {&s, nullptr, ""}),
                      Catch::Contains("key 'trainer.devices'") && Catch::Contains("not a whole number"));
}
