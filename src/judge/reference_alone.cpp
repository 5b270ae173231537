// The reference timed alone, after the submission's run (detail/reference_alone.h).
#include "judge/detail/reference_alone.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>

#include "judge/detail/harness_run.h"
#include "judge/detail/text.h"

namespace kj::judge::detail {

namespace {

// A whole non-negative number that fits 64 bits (the harness draws 48-bit salts).
std::optional<std::int64_t> salt_of(const nlohmann::json& event) {
  const auto it = event.find("salt");
  if (it == event.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(value);
  }
  const auto value = it->get<std::int64_t>();
  return value >= 0 ? std::optional(value) : std::nullopt;
}

std::optional<int> index_of(const nlohmann::json& event) {
  const auto it = event.find("index");
  if (it == event.end() || !it->is_number_integer()) return std::nullopt;
  const auto value = it->get<std::int64_t>();
  if (value < 0 || value > 1'000'000) return std::nullopt;
  return static_cast<int>(value);
}

// A string field, or empty: the harness's stream is read as untrusted (verdict.cpp).
std::string text(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What an error event, or a reference event without samples, says went wrong.
std::string error_of(const nlohmann::json& event) {
  const auto e = event.find("error");
  if (e != event.end() && e->is_object()) {
    const std::string type = text(*e, "type");
    return (type.empty() ? "error" : type) + ": " + text(*e, "message");
  }
  const std::string message = text(event, "message");
  return message.empty() ? "an error" : message;
}

// Why the reference's run gave no times, or empty when it did (`samples` filled per index).
// `events` are the run's (a multi-rank run's merged over its ranks), `parse_error` why they were
// not all readable.
std::string read_reference_run(const sandbox::Outcome& outcome,
                               std::span<const nlohmann::json> events,
                               const std::string& parse_error, std::size_t expected,
                               std::map<int, std::vector<double>>* samples) {
  if (!outcome.started) return "it could not start (" + cut(outcome.setup_error, 300) + ")";
  std::string error;
  bool done = false, passed = false;
  for (const auto& event : events) {
    const std::string name = text(event, "event");
    if (name == "reference") {
      const auto index = index_of(event);
      const auto found = event.find("samples_ns");
      if (error.empty() && (found == event.end() || !found->is_array())) error = error_of(event);
      if (!index || found == event.end() || !found->is_array()) continue;
      std::vector<double>& out = (*samples)[*index];
      out.clear();
      for (const auto& ns : *found) {
        if (ns.is_number() && ns.get<double>() > 0) out.push_back(ns.get<double>());
      }
      if (out.empty()) samples->erase(*index);
    } else if (name == "error" && error.empty()) {
      error = error_of(event);
    } else if (name == "done") {
      done = true;
      const auto it = event.find("passed");
      passed = it != event.end() && it->is_boolean() && it->get<bool>();
    }
  }
  if (outcome.limit != sandbox::LimitHit::none)
    return "it reached its " + sandbox::to_string(outcome.limit) + " limit";
  if (!error.empty()) return "it failed: " + cut(error, 300);
  if (!parse_error.empty()) return "its report was unreadable (" + cut(parse_error, 200) + ")";
  if (!done || !passed || outcome.signal || outcome.exit_code.value_or(1) != 0) {
    return outcome.signal ? "it was killed by signal " + std::to_string(*outcome.signal)
                          : "it ended before its report was complete";
  }
  if (samples->size() != expected) {
    return "it timed " + std::to_string(samples->size()) + " of " + std::to_string(expected) +
           " benchmarks";
  }
  return {};
}

}  // namespace

bool reference_timed(const EvalRequest& request) {
  const bool timed = request.mode == Mode::benchmark || request.mode == Mode::leaderboard;
  return timed && request.time_reference;
}

std::optional<nlohmann::json> reference_job(const EvalRequest& request, bool gpu,
                                            const EvalResult& result,
                                            std::span<const nlohmann::json> events,
                                            std::string* why) {
  // A GPU left with a process or memory of the run would time the reference slow.
  if (result.gpu_health.checked && !result.gpu_health.ok) {
    *why = "a GPU was unhealthy after the submission's run";
    return std::nullopt;
  }
  // The timed phase's salts: a ranked run's benchmarks are its "ranked" phase.
  const std::string phase = request.mode == Mode::leaderboard ? "ranked" : "public";
  std::map<int, std::int64_t> salts;
  for (const auto& event : events) {
    const std::string event_phase = text(event, "phase");
    if (text(event, "event") != "benchmark" ||
        (event_phase.empty() ? "public" : event_phase) != phase)
      continue;
    const auto index = index_of(event);
    const auto salt = salt_of(event);
    if (index && salt) salts[*index] = *salt;
  }
  const auto& cases = request.problem->benchmarks;
  std::vector<nlohmann::ordered_json> picked;
  nlohmann::json picked_salts = nlohmann::json::array();
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& c : result.benchmarks) {
    const auto salt = salts.find(c.index);
    if (c.index < 0 || static_cast<std::size_t>(c.index) >= cases.size() || salt == salts.end()) {
      *why = "the submission's run did not say which inputs benchmark " + std::to_string(c.index) +
             " was timed on";
      return std::nullopt;
    }
    picked.push_back(cases[static_cast<std::size_t>(c.index)]);
    picked_salts.push_back(salt->second);
    counts.push_back(std::max<std::size_t>(1, c.summary.n));
  }
  nlohmann::json job = harness_job(request, gpu);
  job["mode"] = "reference";
  job["benchmarks"] = picked;
  job["salts"] = std::move(picked_salts);
  // No more samples than the submission got, as when both were sampled in the same rounds.
  job["samples"] = std::move(counts);
  job["tests"] = nlohmann::json::array();
  job["ranked"] = request.mode == Mode::leaderboard;
  job["time_reference"] = false;
  job.erase("compile_cache");
  return job;
}

void omit_speedup(EvalResult& result, const std::string& why) {
  result.speedup.reset();
  for (auto& c : result.benchmarks) {
    c.reference_samples.clear();
    c.reference_summary = {};
  }
  result.outcome.warnings.push_back("the reference was not timed: " + why +
                                    "; no speedup is given (the verdict stands)");
}

std::string reference_run_failure(const sandbox::Outcome& outcome,
                                  std::span<const nlohmann::json> events,
                                  const std::string& parse_error, std::size_t expected) {
  std::map<int, std::vector<double>> samples;
  return read_reference_run(outcome, events, parse_error, expected, &samples);
}

void merge_reference(EvalResult& result, const sandbox::Outcome& outcome) {
  std::string parse_error;
  const auto events = parse_events(outcome.result_data, &parse_error);
  merge_reference(result, outcome, events, parse_error);
}

void merge_reference(EvalResult& result, const sandbox::Outcome& outcome,
                     std::span<const nlohmann::json> events, const std::string& parse_error) {
  if (outcome.started)
    result.process_times["reference_wall_s"] = std::chrono::duration<double>(outcome.wall).count();
  for (const auto& warning : outcome.warnings)
    result.outcome.warnings.push_back("the reference's run: " + warning);
  std::map<int, std::vector<double>> samples;
  const std::string failure =
      read_reference_run(outcome, events, parse_error, result.benchmarks.size(), &samples);
  if (!failure.empty()) return omit_speedup(result, "in its run alone, " + failure);
  // The run timed the benchmarks in the order of result.benchmarks (reference_job).
  std::size_t position = 0;
  for (auto& c : result.benchmarks) {
    const auto found = samples.find(static_cast<int>(position++));
    if (found == samples.end()) return omit_speedup(result, "its run alone missed a benchmark");
    c.reference_samples = found->second;
    c.reference_summary = bench::summarize(c.reference_samples);
  }
  try {
    result.speedup = speedup_of(result);
  } catch (const std::invalid_argument& e) {
    omit_speedup(result, std::string("its times could not be scored: ") + e.what());
  }
}

std::optional<double> speedup_of(const EvalResult& result) {
  if (result.benchmarks.empty() || !result.score_ns) return std::nullopt;
  std::vector<double> reference_medians;
  for (const auto& c : result.benchmarks) {
    if (c.reference_summary.n == 0) return std::nullopt;
    reference_medians.push_back(c.reference_summary.median);
  }
  return bench::aggregate(reference_medians, result.ranking_by) / *result.score_ns;
}

}  // namespace kj::judge::detail
