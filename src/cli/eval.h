// `kj eval`: one submission judged against a problem, in this process or by a running
// `kj daemon` (src/cli/daemon.h), and the options every judging command shares.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "judge/judge.h"
#include "problem/problem.h"

namespace kj::cli {

// Exit codes: 0 accepted / all as declared, 1 rejected / a mismatch, 2 bad input, 3 internal error.
constexpr int kExitRejected = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

// --max-repeats and --max-time: timing caps over the device's defaults
// (kj::judge::default_timing: short on a CPU), --min-time, the stopping rule's minimum
// (docs/timing.md), and --in-process-timing, the clock in the submission's own process instead
// of a sealed replay (docs/sealed-timing.md); the same for every command that times.
struct TimingCaps {
  std::optional<int> max_samples;
  std::optional<double> max_time_s;
  std::optional<double> min_time_s;
  std::optional<double> precision;
  bool in_process = false;  // the harness's "sealed": 0

  void add_to(CLI::App* app, const std::string& per = "case") {
    app->add_option("--max-repeats", max_samples,
                    "timing: most samples per " + per + " (default 1000 on a GPU, 100 on a CPU)")
        ->check(CLI::PositiveNumber);
    app->add_option(
           "--max-time", max_time_s,
           "timing: most seconds of sampling per " + per + " (default 15 on a GPU, 1 on a CPU)")
        ->check(CLI::PositiveNumber);
    app->add_option("--min-time", min_time_s,
                    "timing: fewest seconds of sampling per " + per +
                        " before the stopping rule may stop (default 0.25; shorter runs, medians "
                        "over a shorter stretch)")
        ->check(CLI::NonNegativeNumber);
    app->add_option("--precision", precision,
                    "timing: the relative standard error of the mean or median at which the "
                    "stopping rule stops sampling a " +
                        per + " (default 0.001)")
        ->check(CLI::Range(1e-6, 0.1));
    app->add_flag("--in-process-timing", in_process,
                  "timing: time the submission in its own process, as before sealed timing "
                  "(docs/sealed-timing.md)");
  }
  // `settings` with the caps given on the command line written over it.
  nlohmann::json over(nlohmann::json settings) const {
    if (max_samples) settings["max_samples"] = *max_samples;
    if (max_time_s) settings["max_seconds"] = *max_time_s;
    if (min_time_s) settings["min_seconds"] = *min_time_s;
    if (precision) settings["target_rel_sem"] = *precision;
    if (in_process) settings["sealed"] = 0;
    return settings;
  }
};

struct EnvOptions {
  std::string device = "cpu";
  std::string python;
  std::string harness;
  double timeout_s = 0;
  std::uint64_t memory_mib = 8192;
  TimingCaps caps;
  int only_case = -1;
  bool no_reference = false;
  bool no_screen = false;
  std::size_t max_source_bytes = kj::judge::kDefaultMaxSourceBytes;

  void add_to(CLI::App* app) {
    app->add_option("--device", device,
                    "cpu or cuda:N; a multi_gpu problem takes one GPU per rank: cuda:0,cuda:1")
        ->capture_default_str();
    app->add_option("--python", python, "harness interpreter (default $KJ_PYTHON, else python3)");
    app->add_option("--harness", harness, "folder holding kj_harness (default: found beside kj)");
    app->add_option("--timeout", timeout_s, "wall-clock limit in seconds (default: task.yml's)");
    app->add_option("--memory-limit", memory_mib, "host memory cap in MiB")->capture_default_str();
    caps.add_to(app);
    app->add_option("--case", only_case, "time only benchmark number N (0-based)");
    app->add_flag("--no-reference", no_reference, "do not time the reference beside it");
    app->add_flag("--no-screen", no_screen, "skip the static screen (runtime defences stay)");
    app->add_option("--max-source-bytes", max_source_bytes, "refuse larger submission sources")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  }

  kj::judge::Environment environment() const {
    std::vector<std::string> devices;
    std::istringstream list(device);
    for (std::string one; std::getline(list, one, ',');) devices.push_back(one);
    if (devices.empty()) devices.push_back(device);
    auto environment = kj::judge::discover_environment(
        python.empty() ? std::nullopt : std::optional(python),
        harness.empty() ? std::nullopt : std::optional(harness), devices.front());
    if (devices.size() > 1) {
      for (const auto& one : devices) {
        if (!one.starts_with("cuda:") || one.size() < 6 ||
            one.find_first_not_of("0123456789", 5) != std::string::npos)
          throw std::runtime_error("--device: a list of GPUs is cuda:N,cuda:M,..., not '" + device +
                                   "'");
      }
      environment.rank_devices = devices;
    }
    return environment;
  }

  kj::judge::EvalRequest request(const kj::problem::Problem& problem, std::string source,
                                 std::string name, kj::judge::Mode mode) const {
    kj::judge::EvalRequest req;
    req.problem = &problem;
    req.submission_source = std::move(source);
    req.submission_name = std::move(name);
    req.mode = mode;
    if (timeout_s > 0) {
      req.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
    }
    req.limits.memory_bytes = memory_mib << 20;
    req.timing = timing();
    req.time_reference = !no_reference;
    req.screen = !no_screen;
    req.max_source_bytes = max_source_bytes;
    return req;
  }

  // The device's default caps (short on a CPU), with --max-repeats and --max-time over them.
  nlohmann::json timing() const { return caps.over(kj::judge::default_timing(device)); }

  // The problem as this device runs it (a CPU: its cpu_benchmarks), with only the benchmark
  // `--case` asks for.
  kj::problem::Problem narrowed(const kj::problem::Problem& given) const {
    kj::problem::Problem problem = given.on_device(device);
    if (only_case < 0) return problem;
    if (static_cast<std::size_t>(only_case) >= problem.benchmarks.size()) {
      throw std::runtime_error("--case " + std::to_string(only_case) + ": the problem has " +
                               std::to_string(problem.benchmarks.size()) + " " +
                               problem.benchmark_set + " on " + device);
    }
    const auto index = static_cast<std::size_t>(only_case);
    problem.benchmarks = {problem.benchmarks[index]};
    if (index < problem.benchmark_work.size())
      problem.benchmark_work = {problem.benchmark_work[index]};
    return problem;
  }
};

std::string read_text(const std::filesystem::path& path);

// A submission's source, refused unread when it is over the limit.
struct SourceTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string read_source(const std::filesystem::path& path, std::size_t limit);

int exit_code_for(kj::judge::Verdict verdict);

// What a command that threw reports, as `kj` reports it: the message on `err` and the exit code
// (bad input or internal). Call inside a catch block.
int exit_for_current_exception(std::ostream& err);

// One `kj eval` as its command line gave it, with its paths absolute and the source read: what a
// `kj daemon` is sent.
struct EvalCall {
  std::string problem_dir;
  std::string submission_path;
  std::string source;
  std::string mode = "test";
  std::optional<std::int64_t> secret;
  bool json = false;
  bool verbose = false;
  bool zygote = false;        // fork the harness from a zygote started for this run
  bool compile_cache = true;  // this account's runs of this exact source share compiled kernels
  EnvOptions options;
};

nlohmann::json to_json(const EvalCall& call);
EvalCall eval_call_from_json(const nlohmann::json& json);  // throws std::exception when malformed

// What a `kj daemon` keeps started: used by a call it fits, else the call starts its own.
struct WarmPath {
  kj::judge::HarnessZygote* zygote = nullptr;
  kj::judge::WarmHarness* warm = nullptr;
};

// Judges `call`, printing as `kj eval` prints; returns the exit code. Throws on bad input.
int run_eval(const EvalCall& call, std::ostream& out, std::ostream& err, WarmPath warm = {});

}  // namespace kj::cli
