// Multi-rank (multi_gpu) problems: one sandboxed harness per rank, all in one network namespace
// that holds only loopback, each rank confined to its own GPU's device node. The harnesses keep
// each other in lockstep (harness/kj_harness/ranks.py); this file starts them, ends the others
// once one rank failed, and merges the ranks' facts into one verdict (docs/multi-gpu.md).
#include <algorithm>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "judge/detail/harness_run.h"
#include "judge/detail/not_started.h"
#include "judge/detail/reference_alone.h"
#include "judge/detail/temp_dir.h"
#include "judge/judge.h"

namespace kj::judge::detail {
namespace {

namespace fs = std::filesystem;

// How long the driver may take to release a killed run's GPU memory and contexts.
constexpr std::chrono::seconds kGpuHealthGrace{5};

struct RankRun {
  int rank = 0;
  std::string device;
  sandbox::Outcome outcome;
  std::vector<nlohmann::json> events;
  std::string parse_error;
  EvalResult result;
  std::optional<GpuMonitor> monitor;
  std::optional<GpuReading> gpu_before;
};

// A failure that only follows from another rank's: the harness stopped because a peer failed,
// or the process group reported a peer gone (gloo's closed connection, NCCL's remote error).
bool secondary_failure(const RankRun& run) {
  if (run.outcome.cancelled) return true;
  for (const auto& event : run.events) {
    if (event.value("event", "") == "error" && event.value("kind", "") == "peer") return true;
  }
  const auto& error = run.result.error;
  std::vector<std::string> texts;
  if (error) texts.push_back(error->type + " " + error->message);
  for (const auto* cases : {&run.result.tests, &run.result.benchmarks, &run.result.ranked_tests,
                            &run.result.public_benchmarks}) {
    for (const auto& c : *cases) {
      if (c.status == "error" && c.error) texts.push_back(c.error->type + " " + c.error->message);
    }
  }
  for (const auto& text : texts) {
    for (const char* marker :
         {"DistBackendError", "DistNetworkError", "Connection closed by peer",
          "Connection reset by peer", "gloo/transport/tcp", "remote process exited",
          "NCCL communicator was aborted", "ncclRemoteError"}) {
      if (text.find(marker) != std::string::npos) return true;
    }
  }
  return false;
}

// The ranks this rank was still waiting for at its last step, when it was waiting at all (its
// last event is a "waiting" one): such a rank was stopped by another, not by itself.
std::vector<int> waiting_for(const RankRun& run) {
  for (auto it = run.events.rbegin(); it != run.events.rend(); ++it) {
    const std::string name = it->value("event", "");
    if (name == "waiting") {
      std::vector<int> ranks;
      if (it->contains("ranks") && (*it)["ranks"].is_array()) {
        for (const auto& r : (*it)["ranks"])
          if (r.is_number_integer()) ranks.push_back(r.get<int>());
      }
      return ranks;
    }
    if (name == "test" || name == "benchmark" || name == "stage" || name == "error" ||
        name == "done")
      return {};
  }
  return {};
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// Whether an event is one case's (a test's, a benchmark's, or the reference's timing alone).
bool case_event(const nlohmann::json& event) {
  const std::string name = event.value("event", "");
  return name == "test" || name == "benchmark" || name == "reference";
}

// The ranks' events with every timed sample the slowest rank's: event by event, rank 0's
// events with their sample arrays (and untimed call times) replaced by the maximum over ranks.
// The submission's run and the reference's alone alike.
std::optional<std::vector<nlohmann::json>> merge_events(const std::vector<RankRun>& runs,
                                                        std::string* error) {
  auto cases_of = [](const std::vector<nlohmann::json>& events) {
    std::vector<const nlohmann::json*> out;
    for (const auto& e : events) {
      if (case_event(e)) out.push_back(&e);
    }
    return out;
  };
  const auto first = cases_of(runs[0].events);
  std::vector<nlohmann::json> merged;
  std::size_t case_index = 0;
  for (const auto& event : runs[0].events) {
    if (!case_event(event)) {
      if (event.value("event", "") != "waiting") merged.push_back(event);
      continue;
    }
    nlohmann::json out = event;
    for (std::size_t r = 1; r < runs.size(); ++r) {
      const auto others = cases_of(runs[r].events);
      if (others.size() != first.size()) {
        *error = "rank " + std::to_string(r) + " reported " + std::to_string(others.size()) +
                 " cases, rank 0 " + std::to_string(first.size());
        return std::nullopt;
      }
      const nlohmann::json& other = *others[case_index];
      if (other.value("index", -1) != event.value("index", -1) ||
          other.value("phase", "") != event.value("phase", "")) {
        *error = "rank " + std::to_string(r) + " ran its cases in another order than rank 0";
        return std::nullopt;
      }
      // Every rank times on rank 0's salt (harness.py, timed_benchmark): the reference's ranks,
      // timed alone later, are given rank 0's.
      if (event.contains("salt") && other.value("salt", nlohmann::json()) != event["salt"]) {
        *error = "rank " + std::to_string(r) + " timed on other inputs than rank 0";
        return std::nullopt;
      }
      if (event.contains("elapsed_ns") && other.contains("elapsed_ns") &&
          other["elapsed_ns"].is_number()) {
        out["elapsed_ns"] =
            std::max(out["elapsed_ns"].get<double>(), other["elapsed_ns"].get<double>());
      }
      if (out.contains("samples_ns")) {
        const auto& theirs = other.value("samples_ns", nlohmann::json());
        if (!theirs.is_array() || theirs.size() != out["samples_ns"].size()) {
          *error = "rank " + std::to_string(r) + " took a different number of samples than rank 0";
          return std::nullopt;
        }
        for (std::size_t i = 0; i < theirs.size(); ++i) {
          if (theirs[i].is_number() && out["samples_ns"][i].is_number())
            out["samples_ns"][i] =
                std::max(out["samples_ns"][i].get<double>(), theirs[i].get<double>());
        }
      }
    }
    merged.push_back(std::move(out));
    ++case_index;
  }
  return merged;
}

sandbox::Outcome merge_outcomes(const std::vector<RankRun>& runs) {
  sandbox::Outcome out = runs[0].outcome;
  out.stdout_data.clear();
  out.stderr_data.clear();
  out.cpu = std::chrono::nanoseconds(0);
  out.peak_memory_bytes = 0;
  for (const auto& run : runs) {
    const auto& o = run.outcome;
    out.wall = std::max(out.wall, o.wall);
    out.cpu += o.cpu;
    out.peak_memory_bytes += o.peak_memory_bytes;  // the ranks' memory is held at once
    const std::string tag = "[rank " + std::to_string(run.rank) + "] ";
    if (!o.stdout_data.empty()) out.stdout_data += tag + "\n" + o.stdout_data;
    if (!o.stderr_data.empty()) out.stderr_data += tag + "\n" + o.stderr_data;
    out.stdout_truncated = out.stdout_truncated || o.stdout_truncated;
    out.stderr_truncated = out.stderr_truncated || o.stderr_truncated;
    for (const auto& warning : o.warnings) {
      if (std::find(out.warnings.begin(), out.warnings.end(), warning) == out.warnings.end())
        out.warnings.push_back(warning);
    }
  }
  return out;
}

// The ranks' sandboxes for one job (the submission's, or the reference's alone), in `network`,
// one per device, each given `job` with its rank's part; collected as they end. `passed` reads
// an ended rank (its outcome and events set) and says whether it passed: once one did not, the
// others get a grace period to end (they stop at their next step, or their process group
// reports the peer gone), then are cancelled: a rank stuck in a collective with a dead peer
// would otherwise wait for the wall. `watch_gpu`: each rank's GPU read before its start, for
// the health check after the run.
std::vector<RankRun> run_ranks(const EvalRequest& request, const Environment& environment,
                               const std::vector<std::string>& devices,
                               const sandbox::SharedNetwork& network, const fs::path& task_root,
                               nlohmann::json job, const std::string& secret,
                               std::chrono::milliseconds wall, bool watch_gpu,
                               const std::function<bool(RankRun&)>& passed) {
  const bool gpu = environment.device != "cpu";
  const int world_size = static_cast<int>(devices.size());
  std::vector<RankRun> runs(devices.size());
  std::vector<std::shared_ptr<sandbox::Cancel>> cancels;
  std::vector<std::future<sandbox::Outcome>> futures;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    RankRun& run = runs[r];
    run.rank = static_cast<int>(r);
    run.device = devices[r];
    job["ranks"] = {
        {"rank", r},
        {"world_size", world_size},
        {"backend", gpu ? "cpu:gloo,cuda:nccl" : "gloo"},
        {"ports",
         {{"harness", kHarnessGroupPort},
          {"a", kSubmissionGroupPort},
          {"reference", kReferenceGroupPort}}},
        // The groups' own timeouts outlast the wall limit: a hang is the judge's to name.
        {"timeout_s", std::chrono::duration<double>(wall).count() + 60},
    };
    Environment rank_environment = environment;
    rank_environment.device = devices[r];
    sandbox::Spec spec = harness_spec(rank_environment, task_root, false, request.limits);
    spec.stdin_data = job.dump() + "\n" + secret;
    spec.limits.wall = wall;
    spec.network_namespace_fd = network.fd();
    spec.hostname = "kj-rank" + std::to_string(r);
    spec.cancel = std::make_shared<sandbox::Cancel>();
    cancels.push_back(spec.cancel);
    if (gpu && watch_gpu) {
      run.monitor.emplace(std::stoi(devices[r].substr(5)));
      std::string ignored;
      run.gpu_before = run.monitor->read(&ignored);
    }
    futures.push_back(
        std::async(std::launch::async, [spec = std::move(spec)] { return sandbox::run(spec); }));
  }

  std::vector<bool> collected(runs.size(), false);
  std::optional<std::chrono::steady_clock::time_point> first_failure;
  std::size_t remaining = runs.size();
  while (remaining > 0) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (collected[r] ||
          futures[r].wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
        continue;
      collected[r] = true;
      --remaining;
      RankRun& run = runs[r];
      run.outcome = futures[r].get();
      run.events = parse_events(run.outcome.result_data, &run.parse_error);
      if (!passed(run) && !first_failure) first_failure = std::chrono::steady_clock::now();
    }
    if (first_failure && std::chrono::steady_clock::now() - *first_failure > kRankGrace) {
      for (std::size_t r = 0; r < runs.size(); ++r)
        if (!collected[r]) cancels[r]->cancel();
    }
  }
  return runs;
}

// The reference's job in world_size fresh sandboxes, in a network namespace of their own, after
// the submission's ranks ended (docs/multi-gpu.md, "The reference, alone"): the ranks' reference
// runners join their process group as in the submission's run, and each sample is the slowest
// rank's. `events` are rank 0's of the submission's run: every rank timed on rank 0's salts
// (merge_events checked that they agree). A failure leaves the verdict as it is, without a
// speedup (omit_speedup).
void time_reference_ranks(const EvalRequest& request, const Environment& environment,
                          const std::vector<std::string>& devices,
                          std::span<const nlohmann::json> events, const std::string& secret,
                          std::chrono::milliseconds wall, EvalResult& result) {
  const bool gpu = environment.device != "cpu";
  std::string why;
  const auto job = reference_job(request, gpu, result, events, &why);
  if (!job) return omit_speedup(result, why);
  std::optional<sandbox::SharedNetwork> network;
  TempDir task_root;
  try {
    network.emplace();
    // Nothing of the submission goes into the reference's sandboxes: its submission.py is empty.
    problem::materialize(*request.problem, "", task_root.path() / "task");
  } catch (const std::exception& e) {
    return omit_speedup(result, std::string("its sandboxes could not be made: ") + e.what());
  }
  const std::size_t expected = result.benchmarks.size();
  std::vector<std::string> failures(devices.size());
  std::vector<RankRun> runs =
      run_ranks(request, environment, devices, *network, task_root.path(), *job, secret, wall,
                false, [&](RankRun& run) {
                  failures[static_cast<std::size_t>(run.rank)] =
                      reference_run_failure(run.outcome, run.events, run.parse_error, expected);
                  return failures[static_cast<std::size_t>(run.rank)].empty();
                });
  // The rank to name: one that failed on its own rather than stopped by a peer's failure.
  std::optional<std::size_t> failed;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (failures[r].empty()) continue;
    if (!failed || (secondary_failure(runs[*failed]) && !secondary_failure(runs[r]))) failed = r;
  }
  if (failed) {
    return omit_speedup(result, "in its run alone, rank " + std::to_string(*failed) + " of " +
                                    std::to_string(runs.size()) + ": " + failures[*failed]);
  }
  std::string merge_error;
  const auto merged = merge_events(runs, &merge_error);
  if (!merged) return omit_speedup(result, "its ranks' times do not match: " + merge_error);
  merge_reference(result, merge_outcomes(runs), *merged, "");
}

}  // namespace

EvalResult evaluate_ranks(const EvalRequest& request, const Environment& environment,
                          std::vector<ScreenFinding> findings) {
  const problem::Problem& problem = *request.problem;
  auto refuse = [&](std::string reason) {
    return not_started(request, environment, Verdict::internal_error, std::move(reason), findings);
  };
  if (request.mode == Mode::compare || request.mode == Mode::profile) {
    return refuse(to_string(request.mode) + " mode is not available for multi_gpu problems");
  }
  std::set<int> sizes;
  for (const auto* cases : {&problem.tests, &problem.benchmarks}) {
    for (const auto& c : *cases) {
      if (c.contains("world_size") && c["world_size"].is_number_integer())
        sizes.insert(c["world_size"].get<int>());
      else
        return refuse("multi_gpu case without an integer world_size: " + c.dump());
    }
  }
  if (sizes.size() != 1) {
    return refuse("the cases of a multi_gpu problem must share one world_size (these have " +
                  std::to_string(sizes.size()) + ")");
  }
  const int world_size = *sizes.begin();
  if (world_size < 1 || world_size > 64) {
    return refuse("world_size " + std::to_string(world_size) + " is not between 1 and 64");
  }
  const bool gpu = environment.device != "cpu";
  std::vector<std::string> devices(static_cast<std::size_t>(world_size), "cpu");
  if (gpu) {
    std::vector<std::string> given = environment.rank_devices;
    if (given.empty()) given.push_back(environment.device);
    if (given.size() < devices.size()) {
      return refuse("world_size " + std::to_string(world_size) + " needs " +
                    std::to_string(world_size) + " GPUs; this run was given " +
                    std::to_string(given.size()) + " (" +
                    [&] {
                      std::string s;
                      for (const auto& d : given) s += (s.empty() ? "" : ", ") + d;
                      return s;
                    }() +
                    ")");
    }
    std::copy_n(given.begin(), devices.size(), devices.begin());
  }

  std::optional<sandbox::SharedNetwork> network;
  try {
    network.emplace();
  } catch (const std::exception& e) {
    return refuse(std::string("cannot make the ranks' network: ") + e.what());
  }
  TempDir task_root;
  try {
    problem::materialize(problem, request.submission_source, task_root.path() / "task");
  } catch (const std::exception& e) {
    return refuse(std::string("cannot prepare the task files: ") + e.what());
  }

  // Every rank's GPU leased, always in one order, so that two runs wanting the same GPUs
  // cannot each hold some and wait for the rest. Held until the reference's ranks ended too.
  std::vector<GpuLease> leases;
  if (gpu) {
    std::set<std::string> wanted(devices.begin(), devices.end());
    try {
      for (const auto& device : wanted) leases.emplace_back(device);
    } catch (const std::exception& e) {
      return refuse(e.what());
    }
  }
  const auto wall = harness_wall(request);
  const std::string secret = secret_line(request);
  std::vector<RankRun> runs =
      run_ranks(request, environment, devices, *network, task_root.path(),
                harness_job(request, gpu), secret, wall, true, [&](RankRun& run) {
                  run.result = decide(run.outcome, run.events, request.mode, problem);
                  return run.result.verdict == Verdict::accepted;
                });

  nlohmann::json summary = nlohmann::json::array();
  for (const auto& run : runs) {
    summary.push_back({{"rank", run.rank},
                       {"device", run.device},
                       {"verdict", to_string(run.result.verdict)},
                       {"reason", run.result.reason},
                       {"cancelled", run.outcome.cancelled},
                       {"wall_s", std::chrono::duration<double>(run.outcome.wall).count()}});
    // This rank's own timing, beside the merged (slowest-rank) one.
    nlohmann::json medians = nlohmann::json::array();
    for (const auto& c : run.result.benchmarks) medians.push_back(c.summary.median);
    summary.back()["benchmark_medians_ns"] = std::move(medians);
  }
  EvalResult result;
  std::vector<int> culprits;
  for (const auto& run : runs) {
    if (run.result.verdict != Verdict::accepted || !run.parse_error.empty()) {
      culprits.push_back(run.rank);
    }
  }
  if (culprits.empty()) {
    std::string merge_error;
    auto merged = merge_events(runs, &merge_error);
    const sandbox::Outcome outcome = merge_outcomes(runs);
    if (merged) {
      result = decide(outcome, *merged, request.mode, problem);
    } else {
      result = decide(outcome, runs[0].events, request.mode, problem);
      result.verdict = Verdict::internal_error;
      result.reason = "the ranks' results do not match: " + merge_error;
    }
  } else {
    // The rank to blame: one that failed on its own (not stopped by a peer, not waiting for
    // one), else one that ran into a peer's failure, else the first that failed at all.
    std::vector<int> own, waited_for, waiting, secondary;
    for (int r : culprits) {
      const RankRun& run = runs[static_cast<std::size_t>(r)];
      const auto awaited = waiting_for(run);
      if (!awaited.empty()) {
        waiting.push_back(r);
        for (int a : awaited)
          if (std::find(waited_for.begin(), waited_for.end(), a) == waited_for.end())
            waited_for.push_back(a);
      } else if (secondary_failure(run)) {
        secondary.push_back(r);
      } else {
        own.push_back(r);
      }
    }
    std::vector<int> blamed;
    for (int r : own) {
      // A rank that timed out while others waited for it is the one that hung.
      if (waited_for.empty() ||
          std::find(waited_for.begin(), waited_for.end(), r) != waited_for.end() ||
          runs[static_cast<std::size_t>(r)].outcome.limit != sandbox::LimitHit::wall_time)
        blamed.push_back(r);
    }
    if (blamed.empty()) blamed = !own.empty() ? own : !secondary.empty() ? secondary : culprits;
    const int rank = blamed.front();
    RankRun& run = runs[static_cast<std::size_t>(rank)];
    result = std::move(run.result);
    if (!run.parse_error.empty() && result.verdict == Verdict::accepted) {
      result.verdict = Verdict::internal_error;
      result.reason = run.parse_error;
    }
    std::string others;
    if (!waiting.empty())
      others += "; rank " + join_ranks(waiting) + " waited for rank " + join_ranks(waited_for);
    std::vector<int> stopped;
    for (int r : culprits)
      if (r != rank && std::find(waiting.begin(), waiting.end(), r) == waiting.end())
        stopped.push_back(r);
    if (!stopped.empty()) others += "; rank " + join_ranks(stopped) + " stopped with it";
    result.reason = "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + ": " +
                    result.reason + others;
    result.outcome = merge_outcomes(runs);
  }
  result.ranks = std::move(summary);
  result.mode = request.mode;
  result.problem = problem.name;
  result.submission = request.submission_name;
  result.device = gpu ? [&] {
    std::string s;
    for (const auto& d : devices) s += (s.empty() ? "" : ",") + d;
    return s;
  }()
                      : "cpu";
  result.screen = std::move(findings);
  result.gpu_health.message = "not a GPU run";
  if (gpu) {
    for (auto& run : runs) {
      GpuHealth health = check_gpu_after_run(*run.monitor, run.gpu_before, kGpuHealthGrace);
      if (!health.ok)
        health.message = run.device + " (rank " + std::to_string(run.rank) + "): " + health.message;
      if (run.rank == 0 || !health.ok) result.gpu_health = health;
      if (!health.ok) break;
    }
  }
  // Every rank of the submission's run is gone with every process of it: the reference is timed
  // alone, in sandboxes of its own, under the same leases.
  if (culprits.empty() && reference_timed(request) && result.verdict == Verdict::accepted &&
      !result.benchmarks.empty()) {
    time_reference_ranks(request, environment, devices, runs[0].events, secret, wall, result);
  }
  return result;
}

}  // namespace kj::judge::detail
