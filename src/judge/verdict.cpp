// Turning facts into a verdict. The harness reports; only this file decides.
#include <csignal>
#include <limits>
#include <sstream>

#include "judge/detail/not_started.h"
#include "judge/detail/text.h"
#include "judge/judge.h"

namespace kj::judge {

namespace {

constexpr std::pair<Verdict, std::string_view> kVerdictNames[] = {
    {Verdict::accepted, "accepted"},
    {Verdict::wrong_answer, "wrong_answer"},
    {Verdict::compile_error, "compile_error"},
    {Verdict::runtime_error, "runtime_error"},
    {Verdict::time_limit, "time_limit"},
    {Verdict::memory_limit, "memory_limit"},
    {Verdict::output_limit, "output_limit"},
    {Verdict::security_violation, "security_violation"},
    {Verdict::internal_error, "internal_error"},
};

std::string str(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  if (it == object.end()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The harness's stream is written where the submission runs, so any field may hold anything:
// a number the judge counts with is taken only when it is a whole number that fits an int, a flag
// only when it is a boolean; otherwise `fallback`.
std::optional<int> integer(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
    return static_cast<int>(value);
  }
  const auto value = it->get<std::int64_t>();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

int integer(const nlohmann::json& object, const char* key, int fallback) {
  return integer(object, key).value_or(fallback);
}

bool flag(const nlohmann::json& object, const char* key, bool fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

ErrorInfo error_from(const nlohmann::json& event) {
  const nlohmann::json& error = event.contains("error") ? event["error"] : nlohmann::json();
  ErrorInfo info{str(event, "stage"), str(error, "type"), str(error, "message"),
                 str(error, "traceback"), std::nullopt};
  info.signal = integer(error, "signal");
  return info;
}

CaseResult case_from(const nlohmann::json& event) {
  CaseResult result;
  result.index = integer(event, "index", 0);
  if (event.contains("spec") && event["spec"].is_object()) {
    result.spec = nlohmann::ordered_json::parse(event["spec"].dump());
  }
  result.status = str(event, "status");
  result.message = str(event, "message");
  if (event.contains("elapsed_ns") && event["elapsed_ns"].is_number()) {
    result.elapsed_ns = event["elapsed_ns"].get<double>();
  }
  if (event.contains("error") && event["error"].is_object()) {
    ErrorInfo error = error_from(event);
    error.stage = "run";
    result.error = error;
  }
  if (event.contains("samples_ns") && event["samples_ns"].is_array()) {
    for (const auto& sample : event["samples_ns"]) {
      if (sample.is_number()) result.samples.push_back(sample.get<double>());
    }
    result.summary = bench::summarize(result.samples);
  }
  result.phase = event.contains("phase") ? str(event, "phase") : "public";
  result.clock = str(event, "clock");
  result.method = str(event, "method");
  result.stop_reason = str(event, "stop_reason");
  result.batch = integer(event, "batch", 1);
  result.at_launch_floor = flag(event, "at_launch_floor", false);
  result.rechecked = integer(event, "rechecked", 0);
  result.recheck_path = str(event, "recheck_path");
  result.other_stream_samples = integer(event, "other_stream_samples", 0);
  result.timing = str(event, "timing");
  result.timing_note = str(event, "timing_note");
  if (event.contains("seconds") && event["seconds"].is_object()) {
    for (const auto& [key, value] : event["seconds"].items()) {
      if (value.is_number()) result.seconds[key] = value.get<double>();
    }
  }
  if (event.contains("sm_clock_mhz") && event["sm_clock_mhz"].is_array()) {
    for (const auto& mhz : event["sm_clock_mhz"]) {
      if (mhz.is_number()) result.sm_clock_mhz.push_back(mhz.get<double>());
    }
    result.median_clock_mhz = bench::summarize(result.sm_clock_mhz).median;
  }
  return result;
}

std::string first_line(const std::string& text, std::size_t max = 300) {
  return detail::cut(std::string_view(text).substr(0, text.find('\n')), max);
}

}  // namespace

std::string to_string(Verdict verdict) {
  for (const auto& [v, name] : kVerdictNames) {
    if (v == verdict) return std::string(name);
  }
  return "internal_error";
}

std::optional<Verdict> verdict_from_string(std::string_view name) {
  for (const auto& [v, text] : kVerdictNames) {
    if (text == name) return v;
  }
  return std::nullopt;
}

std::string to_string(Mode mode) {
  switch (mode) {
    case Mode::test:
      return "test";
    case Mode::benchmark:
      return "benchmark";
    case Mode::leaderboard:
      return "leaderboard";
    case Mode::compare:
      return "compare";
    case Mode::profile:
      return "profile";
  }
  return "test";
}

std::optional<Mode> mode_from_string(std::string_view name) {
  for (Mode mode : {Mode::test, Mode::benchmark, Mode::leaderboard, Mode::compare, Mode::profile}) {
    if (to_string(mode) == name) return mode;
  }
  return std::nullopt;
}

std::vector<nlohmann::json> parse_events(std::string_view result_data, std::string* error) {
  std::vector<nlohmann::json> events;
  std::size_t start = 0;
  int line_number = 0;
  while (start < result_data.size()) {
    std::size_t end = result_data.find('\n', start);
    if (end == std::string_view::npos) end = result_data.size();
    const std::string_view line = result_data.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (event.is_discarded() || !event.is_object() || !event.contains("event") ||
        !event["event"].is_string()) {
      if (error != nullptr && error->empty()) {
        *error = "result line " + std::to_string(line_number) + " is not an event object";
      }
      continue;
    }
    events.push_back(std::move(event));
  }
  return events;
}

namespace {

// What a run's events say, folded into one record: the result's cases, comparisons, timeline and
// system facts, the first error the harness reported, and how far the harness got.
struct FoldedRun {
  EvalResult result;
  std::string error_kind;
  std::string error_owner;  // compare mode: "a" or "b"
  std::string last_stage;
  bool done = false;
};

// The event's name with its stage or phase and index: a timeline entry.
std::string timeline_entry(const nlohmann::json& event, const std::string& name) {
  std::string what = name;
  for (const char* key : {"stage", "phase"}) {
    if (event.contains(key) && event[key].is_string()) what.append(" ").append(str(event, key));
  }
  if (const auto index = integer(event, "index")) what.append(" ").append(std::to_string(*index));
  return what;
}

Comparison comparison_from(const nlohmann::json& event, const problem::Problem& problem) {
  Comparison cmp;
  cmp.index = integer(event, "index", 0);
  cmp.trial = integer(event, "trial", 0);
  if (cmp.index >= 0 && static_cast<std::size_t>(cmp.index) < problem.benchmarks.size()) {
    cmp.spec = problem.benchmarks[static_cast<std::size_t>(cmp.index)];
  }
  for (const char* key : {"samples_a_ns", "samples_b_ns"}) {
    auto& out = key[8] == 'a' ? cmp.samples_a : cmp.samples_b;
    if (event.contains(key) && event[key].is_array()) {
      for (const auto& v : event[key]) {
        if (v.is_number()) out.push_back(v.get<double>());
      }
    }
  }
  cmp.stop_reason = str(event, "stop_reason");
  return cmp;
}

FoldedRun fold(const sandbox::Outcome& outcome, std::span<const nlohmann::json> events, Mode mode,
               const problem::Problem& problem) {
  FoldedRun run;
  EvalResult& result = run.result;
  result.mode = mode;
  result.problem = problem.name;
  result.outcome = outcome;
  result.ranking_by = problem::to_string(problem.ranking_by);
  for (const auto& event : events) {
    const std::string name = event["event"].get<std::string>();
    if (event.contains("t_s") && event["t_s"].is_number()) {
      result.timeline.emplace_back(timeline_entry(event, name), event["t_s"].get<double>());
    }
    if (name == "hello") {
      for (const char* key : {"python", "torch", "triton", "device"}) {
        if (event.contains(key)) result.system[key] = event[key];
      }
      for (const auto& [key, as] : {std::pair{"preload_s", "imports_s"}, {"age_s", "at_hello_s"}}) {
        if (event.contains(key) && event[key].is_number()) result.process_times[as] = event[key];
      }
    } else if (name == "device") {
      result.system["device_name"] = str(event, "name");
    } else if (name == "stage") {
      run.last_stage = str(event, "stage");
    } else if (name == "test" || name == "benchmark") {
      CaseResult c = case_from(event);
      // Show the arguments in task.yml's order, as the problem states them.
      const auto& specs = name == "test" ? problem.tests : problem.benchmarks;
      if (c.index >= 0 && static_cast<std::size_t>(c.index) < specs.size()) {
        c.spec = specs[static_cast<std::size_t>(c.index)];
      }
      const bool ranked = c.phase == "ranked";
      if (name == "test") {
        (ranked ? result.ranked_tests : result.tests).push_back(std::move(c));
      } else if (mode == Mode::leaderboard && !ranked) {
        result.public_benchmarks.push_back(std::move(c));
      } else {
        result.benchmarks.push_back(std::move(c));
      }
    } else if (name == "compare") {
      result.comparisons.push_back(comparison_from(event, problem));
    } else if (name == "error" && !result.error) {
      result.error = error_from(event);
      run.error_kind = str(event, "kind");
      run.error_owner = str(event, "submission");
    } else if (name == "done") {
      run.done = true;
      if (event.contains("age_s") && event["age_s"].is_number()) {
        result.process_times["at_done_s"] = event["age_s"];
      }
    }
  }
  return run;
}

// A verdict and the one line that says why.
struct Finding {
  Verdict verdict;
  std::string reason;
};

// The facts every rule reads.
struct Facts {
  const sandbox::Outcome& outcome;
  const FoldedRun& run;
  Mode mode;
};

using Rule = std::optional<Finding> (*)(const Facts&);

std::optional<Finding> sandbox_not_started(const Facts& facts) {
  if (facts.outcome.started) return std::nullopt;
  return Finding{Verdict::internal_error, "sandbox setup failed: " + facts.outcome.setup_error};
}

std::optional<Finding> seccomp_kill(const Facts& facts) {
  if (!facts.outcome.seccomp_violation) return std::nullopt;
  return Finding{Verdict::security_violation,
                 "a forbidden system call was made (killed by seccomp)"};
}

std::optional<Finding> sandbox_limit(const Facts& facts) {
  const sandbox::Outcome& outcome = facts.outcome;
  switch (outcome.limit) {
    case sandbox::LimitHit::wall_time:
      return Finding{
          Verdict::time_limit,
          "wall-clock limit exceeded (" +
              bench::format_ns(static_cast<double>(outcome.wall.count())) + ")" +
              (outcome.memory_cap_reached
                   ? "; the memory cap was reached during the run, so time may have gone "
                     "to reclaiming memory at the cap (peak " +
                         std::to_string(outcome.peak_memory_bytes >> 20) + " MiB)"
                   : "")};
    case sandbox::LimitHit::cpu_time:
      return Finding{Verdict::time_limit, "CPU-time limit exceeded"};
    case sandbox::LimitHit::memory:
      return Finding{Verdict::memory_limit, "memory limit exceeded"};
    case sandbox::LimitHit::output:
      return Finding{Verdict::output_limit, "output limit exceeded (stdout/stderr or results)"};
    case sandbox::LimitHit::file_size:
      return Finding{Verdict::output_limit, "file-size limit exceeded"};
    case sandbox::LimitHit::processes:
      return Finding{Verdict::runtime_error, "process-count limit reached"};
    case sandbox::LimitHit::none:
      break;
  }
  return std::nullopt;
}

std::optional<Finding> result_truncated(const Facts& facts) {
  if (!facts.outcome.result_truncated) return std::nullopt;
  return Finding{Verdict::output_limit, "result stream exceeded its cap"};
}

// The seccomp filter kills only the offending process (the runner), with SIGSYS.
std::optional<Finding> runner_killed_by_seccomp(const Facts& facts) {
  const auto& error = facts.run.result.error;
  if (!error || error->signal != SIGSYS) return std::nullopt;
  return Finding{Verdict::security_violation,
                 "a forbidden system call was made (the submission's process was killed by "
                 "seccomp)"};
}

// The runner found a function the judge relies on (timers, input generation) replaced.
std::optional<Finding> judge_function_replaced(const Facts& facts) {
  const auto& error = facts.run.result.error;
  if (!error || error->type != "SecurityViolation" || error->stage == "load_reference" ||
      error->stage == "harness") {
    return std::nullopt;
  }
  return Finding{Verdict::security_violation, first_line(error->message)};
}

// Device memory exhausted (torch's OutOfMemoryError): by the submission, or by the harness
// while the submission's process held the memory. Before the submission loaded, the problem's.
std::optional<Finding> device_memory_exhausted(const Facts& facts) {
  const auto& error = facts.run.result.error;
  if (!error || error->type != "OutOfMemoryError" || error->stage == "load_reference") {
    return std::nullopt;
  }
  return Finding{Verdict::memory_limit,
                 "device memory exhausted" +
                     std::string(error->stage == "harness" ? " (in the harness, while the "
                                                             "submission held device memory)"
                                                           : "") +
                     ": " + first_line(error->message)};
}

// Any other error the harness reported: whose it is decides between ours and the submission's.
std::optional<Finding> reported_error(const Facts& facts) {
  const auto& error = facts.run.result.error;
  if (!error) return std::nullopt;
  const std::string& kind = facts.run.error_kind;
  const std::string& owner = facts.run.error_owner;
  const std::string detail =
      error->type.empty() ? error->message : error->type + ": " + first_line(error->message);
  if (error->stage == "load_reference" || kind == "problem") {
    return Finding{Verdict::internal_error, "the problem's reference failed to load: " + detail};
  }
  if (error->stage == "harness" || kind == "harness") {
    return Finding{Verdict::internal_error, "harness failure: " + detail};
  }
  if (error->stage == "load_submission") {
    const std::string who = owner == "b"                                  ? "submission B"
                            : owner == "a" && facts.mode == Mode::compare ? "submission A"
                            : owner == "reference"                        ? "the reference runner"
                                                                          : "the submission";
    return Finding{kind == "compile" ? Verdict::compile_error : Verdict::runtime_error,
                   who + " failed to load: " + detail};
  }
  const std::string who = facts.mode == Mode::compare && !owner.empty()
                              ? "submission " + std::string(owner == "b" ? "B" : "A") + ": "
                              : "";
  return Finding{Verdict::runtime_error, who + detail};
}

// The verdict of one case that did not pass.
Finding case_failure(const CaseResult& c, const char* stage_label, bool ranked) {
  // In compare mode each submission's cases carry its letter in the phase (tests_a, ...).
  const std::string who = c.phase.ends_with("_b")   ? "submission B: "
                          : c.phase.ends_with("_a") ? "submission A: "
                                                    : "";
  const std::string label =
      who + stage_label + " " + std::to_string(c.index) + " (" + describe_args(c.spec) + ")";
  const std::string prefix = ranked ? "passed the public cases but failed the secret run, so it is "
                                      "not ranked: "
                                    : "";
  if (c.status == "error" && c.error && c.error->type == "SecurityViolation") {
    return {Verdict::security_violation, label + ": " + first_line(c.error->message)};
  }
  if (c.status == "error" && c.error && c.error->type == "OutOfMemoryError") {
    return {Verdict::memory_limit,
            prefix + label + ": device memory exhausted: " + first_line(c.error->message)};
  }
  if (c.status == "error") {
    const std::string detail =
        c.error ? c.error->type + ": " + first_line(c.error->message) : first_line(c.message);
    return {Verdict::runtime_error, prefix + label + " raised " + detail};
  }
  return {Verdict::wrong_answer, prefix + label + ": " + first_line(c.message)};
}

// Cases in the order they ran; the first that did not pass decides.
std::optional<Finding> failed_case(const Facts& facts) {
  const EvalResult& result = facts.run.result;
  struct Stage {
    const std::vector<CaseResult>* cases;
    const char* label;
    bool ranked;
  };
  std::vector<Stage> stages = {{&result.tests, "test", false}};
  if (facts.mode == Mode::benchmark) stages = {{&result.benchmarks, "benchmark", false}};
  if (facts.mode == Mode::leaderboard) {
    stages = {{&result.tests, "test", false},
              {&result.public_benchmarks, "benchmark", false},
              {&result.ranked_tests, "ranked test", true},
              {&result.benchmarks, "ranked benchmark", true}};
  }
  if (facts.mode == Mode::compare)
    stages = {{&result.tests, "test", false}, {&result.benchmarks, "benchmark", false}};
  for (const auto& stage : stages) {
    for (const auto& c : *stage.cases) {
      if (c.status != "pass") return case_failure(c, stage.label, stage.ranked);
    }
  }
  return std::nullopt;
}

// Our harness always ends with `done`; without it the process tree died early. Before the
// submission was loaded that is our fault, after it the submission's.
std::optional<Finding> ended_early(const Facts& facts) {
  if (facts.run.done) return std::nullopt;
  std::ostringstream how;
  if (facts.outcome.signal) {
    how << "killed by signal " << *facts.outcome.signal;
  } else if (facts.outcome.exit_code) {
    how << "exited with code " << *facts.outcome.exit_code;
  } else {
    how << "ended";
  }
  const std::string& stage = facts.run.last_stage;
  const bool user_phase =
      stage == "load_submission" || stage == "tests" || stage == "benchmarks" || stage == "compare";
  return Finding{user_phase ? Verdict::runtime_error : Verdict::internal_error,
                 "the evaluation " + how.str() + " before reporting its result" +
                     (user_phase ? " (during " + stage + ")" : "")};
}

// Verdict precedence, as DMOJ's result.py keeps its codes in order: the first rule that finds
// something decides. The sandbox's own facts come first: a limit or a forbidden system call ends
// everything; then what the harness reported; then the cases; then whether the harness finished.
constexpr Rule kPrecedence[] = {
    sandbox_not_started,
    seccomp_kill,
    sandbox_limit,
    result_truncated,
    runner_killed_by_seccomp,
    judge_function_replaced,
    device_memory_exhausted,
    reported_error,
    failed_case,
    ended_early,
};

std::optional<Finding> precedence(const Facts& facts) {
  for (const Rule rule : kPrecedence) {
    if (auto finding = rule(facts)) return finding;
  }
  return std::nullopt;
}

std::optional<Finding> count_mismatch(std::size_t got, std::size_t expected, const char* what) {
  if (got == expected) return std::nullopt;
  return Finding{Verdict::internal_error, "the harness reported " + std::to_string(got) + " of " +
                                              std::to_string(expected) + " " + what};
}

// Speed-of-light and the physical floor, where task.yml gives the work and the GPU is known.
std::optional<Finding> below_physical_floor(EvalResult& result, const problem::Problem& problem) {
  const std::string device_name = result.system.value("device_name", std::string());
  const auto ceilings = bench::ceilings_for(device_name);
  if (!ceilings) return std::nullopt;
  for (auto& c : result.benchmarks) {
    if (c.index < 0 || static_cast<std::size_t>(c.index) >= problem.benchmark_work.size()) continue;
    const bench::Work& work = problem.benchmark_work[static_cast<std::size_t>(c.index)];
    if (!work.known()) continue;
    c.floor_ns = bench::physical_floor_ns(work, *ceilings);
    c.sol_pct = bench::speed_of_light_pct(work, *ceilings, c.summary.median);
    // 5 % margin for clock and counting slack; below that the work cannot have been done.
    if (c.summary.median < 0.95 * c.floor_ns) {
      return Finding{Verdict::wrong_answer,
                     "benchmark " + std::to_string(c.index) + " (" + describe_args(c.spec) +
                         "): median " + bench::format_ns(c.summary.median) +
                         " is below the physical floor of " + bench::format_ns(c.floor_ns) +
                         " on an " + ceilings->name + ": impossible, so not ranked"};
    }
  }
  return std::nullopt;
}

Finding score_comparisons(EvalResult& result) {
  for (auto& cmp : result.comparisons) {
    try {
      cmp.result = bench::compare_paired(cmp.samples_a, cmp.samples_b);
    } catch (const std::invalid_argument& e) {
      return {Verdict::internal_error, std::string("cannot compare: ") + e.what()};
    }
  }
  if (result.comparisons.empty()) return {Verdict::internal_error, "no comparison was made"};
  return {Verdict::accepted,
          "both submissions passed; " + std::to_string(result.comparisons.size()) + " comparisons"};
}

Finding score_benchmarks(EvalResult& result, Mode mode, const problem::Problem& problem) {
  if (auto f = count_mismatch(result.benchmarks.size(), problem.benchmarks.size(), "benchmarks"))
    return *f;
  if (auto f = below_physical_floor(result, problem)) return *f;
  if (mode == Mode::leaderboard) {
    if (auto f = count_mismatch(result.ranked_tests.size(), problem.tests.size(), "ranked tests"))
      return *f;
  }
  if (!result.benchmarks.empty()) {
    std::vector<double> medians;
    for (const auto& c : result.benchmarks) medians.push_back(c.summary.median);
    try {
      // The speedup comes with the reference's own run, merged in later (merge_reference).
      result.score_ns = bench::aggregate(medians, result.ranking_by);
    } catch (const std::invalid_argument& e) {
      return {Verdict::internal_error, std::string("cannot score: ") + e.what()};
    }
  }
  const std::string n = std::to_string(result.benchmarks.size());
  return {Verdict::accepted, mode == Mode::leaderboard
                                 ? "ranked: passed all public and secret cases, " + n +
                                       " benchmarks timed on secret inputs"
                                 : "all " + n + " benchmarks passed"};
}

// A run nothing failed: every expected case reported, then its score (or comparisons).
Finding score(EvalResult& result, Mode mode, const problem::Problem& problem) {
  switch (mode) {
    case Mode::test:
      if (auto f = count_mismatch(result.tests.size(), problem.tests.size(), "tests")) return *f;
      return {Verdict::accepted, "all " + std::to_string(result.tests.size()) + " tests passed"};
    case Mode::compare:
      return score_comparisons(result);
    case Mode::benchmark:
    case Mode::leaderboard:
    case Mode::profile:  // run as a one-case benchmark (src/judge/profile.cpp)
      break;
  }
  return score_benchmarks(result, mode, problem);
}

}  // namespace

EvalResult decide(const sandbox::Outcome& outcome, std::span<const nlohmann::json> events,
                  Mode mode, const problem::Problem& problem) {
  FoldedRun run = fold(outcome, events, mode, problem);
  auto finding = precedence({outcome, run, mode});
  if (!finding) finding = score(run.result, mode, problem);
  run.result.verdict = finding->verdict;
  run.result.reason = std::move(finding->reason);
  return std::move(run.result);
}

namespace detail {

EvalResult not_started(const EvalRequest& request, const Environment& environment, Verdict verdict,
                       std::string reason, std::vector<ScreenFinding> screen) {
  EvalResult result;
  result.verdict = verdict;
  result.reason = std::move(reason);
  result.mode = request.mode;
  result.problem = request.problem->name;
  result.ranking_by = problem::to_string(request.problem->ranking_by);
  result.submission = request.submission_name;
  if (request.mode == Mode::compare) result.submission += " vs " + request.second_name;
  result.device = environment.device;
  result.screen = std::move(screen);
  result.outcome.started = false;
  return result;
}

}  // namespace detail

}  // namespace kj::judge
