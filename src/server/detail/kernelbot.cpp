#include "server/detail/kernelbot.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "bench/stats.h"
#include "judge/judge.h"
#include "problem/problem.h"
#include "server/detail/archive.h"
#include "server/server.h"

namespace kj::server::detail {
namespace {

using nlohmann::json;

json time_or_null(const std::optional<store::Time>& time) {
  return time ? json(format_time(*time)) : json(nullptr);
}

json score_or_null(const std::optional<double>& score) {
  return score ? json(*score) : json(nullptr);
}

bool is_final(store::SubmissionStatus status) {
  return status == store::SubmissionStatus::done || status == store::SubmissionStatus::failed;
}

json parse_object(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_object() ? parsed : json::object();
}

std::string describe_spec(const json& spec) {
  return spec.is_object() ? problem::describe_args(nlohmann::ordered_json(spec)) : "";
}

// The public run: the one whose details the submitter may read.
const store::Run* public_run(const std::vector<store::Run>& runs) {
  for (const auto& run : runs) {
    if (!run.secret) return &run;
  }
  return nullptr;
}

// Tests, benchmarks, verdict and score of a run, as lines for people.
std::string report_text(const store::Submission& s, const store::Run* run) {
  std::ostringstream out;
  out << "submission " << s.id << " on " << s.leaderboard_name << " (" << s.gpu_type << ", "
      << s.mode << "): " << (s.verdict.empty() ? "no verdict" : s.verdict) << "\n";
  const json result = run ? parse_object(run->result_json) : json::object();
  if (!result.value("reason", "").empty()) out << result.value("reason", "") << "\n";
  for (const auto& t : result.value("tests", json::array())) {
    out << "test " << t.value("index", 0) << " " << t.value("status", "") << ": "
        << describe_spec(t.value("spec", json::object()));
    if (!t.value("message", "").empty()) out << " — " << t.value("message", "");
    out << "\n";
  }
  for (const auto& b : result.value("benchmarks", json::array())) {
    out << "benchmark " << b.value("index", 0) << " " << b.value("status", "") << ": "
        << describe_spec(b.value("spec", json::object()));
    const json summary = b.value("summary", json::object());
    if (summary.value("n", 0) > 0) {
      out << " — median " << bench::format_ns(summary.value("median_ns", 0.0)) << " (n "
          << summary.value("n", 0) << ")";
    }
    if (b.contains("speedup") && b["speedup"].is_number()) {
      out << ", " << bench::format_speedup(b["speedup"].get<double>()) << " the reference";
    }
    out << "\n";
  }
  if (s.score) out << "score: " << bench::format_ns(*s.score * 1e9) << "\n";
  return out.str();
}

// popcorn-cli's profile handler reads run.result's "benchmark-count", "benchmark.N.spec" and
// "benchmark.N.report" (base64); the other modes only need stdout and stderr, but the flat keys
// KernelBot sends are cheap to give.
json flat_result(const json& result) {
  json flat = json::object();
  const json tests = result.value("tests", json::array());
  flat["test-count"] = tests.size();
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const std::string prefix = "test." + std::to_string(i) + ".";
    flat[prefix + "spec"] = describe_spec(tests[i].value("spec", json::object()));
    flat[prefix + "status"] = tests[i].value("status", "");
    if (!tests[i].value("message", "").empty()) flat[prefix + "error"] = tests[i]["message"];
  }
  const json benchmarks = result.value("benchmarks", json::array());
  flat["benchmark-count"] = benchmarks.size();
  for (std::size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string prefix = "benchmark." + std::to_string(i) + ".";
    const json summary = benchmarks[i].value("summary", json::object());
    flat[prefix + "spec"] = describe_spec(benchmarks[i].value("spec", json::object()));
    flat[prefix + "status"] = benchmarks[i].value("status", "");
    for (const char* key : {"mean", "std", "best", "worst", "median"}) {
      static const std::map<std::string, std::string> from = {{"mean", "mean_ns"},
                                                              {"std", "stdev_ns"},
                                                              {"best", "min_ns"},
                                                              {"worst", "max_ns"},
                                                              {"median", "median_ns"}};
      if (summary.contains(from.at(key))) flat[prefix + key] = summary[from.at(key)];
    }
    flat[prefix + "runs"] = summary.value("n", 0);
  }
  if (result.contains("profile") && !benchmarks.empty()) {
    flat["benchmark.0.report"] = base64(judge::profile_text(result["profile"]));
  }
  flat["check"] = result.value("verdict", "") == "accepted" ? "pass" : "fail";
  return flat;
}

json run_json(const store::Run& run) {
  const json result = parse_object(run.result_json);
  const double seconds = std::chrono::duration<double>(run.end_time - run.start_time).count();
  return {
      {"start", format_time(run.start_time)},
      {"end", format_time(run.end_time)},
      {"compilation", result.value("compilation", json(nullptr))},
      {"run",
       {{"success", result.value("verdict", "") != "internal_error"},
        {"passed", run.passed},
        {"stdout", result.value("stdout", "")},
        {"stderr", result.value("stderr", "")},
        {"exit_code", result.value("sandbox", json::object()).value("exit_code", json(nullptr))},
        {"duration", seconds},
        {"result", flat_result(result)}}}};
}

}  // namespace

json kernelbot_leaderboard(const store::Leaderboard& lb, const json& task) {
  return {{"id", lb.id},
          {"name", lb.name},
          {"description", lb.description},
          {"deadline", time_or_null(lb.deadline)},
          {"task", task.is_object() ? task : json::object()},
          {"gpu_types", lb.gpu_types}};
}

json kernelbot_submission_summary(const store::Submission& s, const std::vector<store::Run>& runs) {
  json run_list = json::array();
  for (const auto& run : runs) {
    run_list.push_back({{"gpu_type", run.runner},
                        {"score", score_or_null(run.score)},
                        {"mode", run.mode},
                        {"secret", run.secret},
                        {"passed", run.passed}});
  }
  return {{"id", s.id},
          {"leaderboard_name", s.leaderboard_name},
          {"file_name", s.file_name},
          {"submission_time", format_time(s.created_at)},
          {"done", is_final(s.status)},
          {"status", store::to_string(s.status)},
          {"verdict", s.verdict.empty() ? json(nullptr) : json(s.verdict)},
          {"runs", run_list}};
}

json kernelbot_runner_queue(const std::string& gpu_type, int queued_jobs) {
  return {{"runner", "kj"}, {"gpu", gpu_type}, {"queued_jobs", queued_jobs}};
}

json kernelbot_submission_details(const store::Submission& s, const std::vector<store::Run>& runs,
                                  const std::string& code,
                                  const std::optional<store::Job>& latest_job,
                                  const json& runner_queue) {
  json out = kernelbot_submission_summary(s, runs);
  out["leaderboard_id"] = s.leaderboard_id;
  out["user_id"] = std::to_string(s.user_id);  // popcorn-cli reads a string
  out["user_name"] = s.user_name;
  out["code"] = code;
  json run_list = json::array();
  for (const auto& run : runs) {
    run_list.push_back({{"start_time", format_time(run.start_time)},
                        {"end_time", format_time(run.end_time)},
                        {"mode", run.mode},
                        {"secret", run.secret},
                        {"runner", run.runner},
                        {"score", score_or_null(run.score)},
                        {"passed", run.passed}});
  }
  out["runs"] = run_list;
  if (latest_job) {
    out["job"] = {{"status", store::to_string(latest_job->state)},
                  {"error", latest_job->error.empty() ? json(nullptr) : json(latest_job->error)},
                  {"attempts", latest_job->attempts}};
  } else {
    out["job"] = nullptr;
  }
  out["runner_queue"] = runner_queue;
  return out;
}

json kernelbot_result(const store::Submission& s, const std::vector<store::Run>& runs,
                      const std::optional<ProfileDownload>& profile) {
  const store::Run* run = public_run(runs);
  json result = {{"success", s.status == store::SubmissionStatus::done},
                 {"error", ""},
                 {"system", run ? parse_object(run->system_json) : json::object()},
                 {"runs", json::object()}};
  if (run) {
    json& mode_run = result["runs"][s.mode] = run_json(*run);
    const json outcome = parse_object(run->result_json);
    if (outcome.contains("profile")) {
      json& shown = mode_run["profile"] = {{"profiler", "Nsight Compute"}};
      if (profile) {
        shown["download_url"] = profile->url;
        shown["trace"] =
            base64(stored_zip({{"profile.ncu-rep", profile->report},
                               {"ncu-details.txt", judge::profile_text(outcome["profile"])}}));
      }
    }
  }
  return {{"status", "success"},
          {"submission_id", s.id},
          {"verdict", s.verdict.empty() ? json(nullptr) : json(s.verdict)},
          {"score", score_or_null(s.score)},
          {"results", json::array({result})},
          {"reports", json::array({report_text(s, run)})}};
}

std::string kernelbot_status_message(const json& event) {
  const std::string kind = event.value("event", "");
  if (kind == "claimed") return "judging on " + event.value("device", "?");
  if (kind == "stage" && event.value("state", "") == "started") {
    return "evaluation started (" + event.value("mode", "") + " mode)";
  }
  if (kind == "stage") {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", event.value("seconds", 0.0));
    return "evaluation finished in " + std::string(seconds) + " s: " + event.value("verdict", "");
  }
  if (kind == "verdict") {
    const std::string reason = event.value("reason", "");
    return "verdict: " + event.value("verdict", "") + (reason.empty() ? "" : " (" + reason + ")");
  }
  if (kind == "released") return "infrastructure fault, queued again";
  return "";
}

std::string sse_event(const std::string& name, const json& data) {
  return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

}  // namespace kj::server::detail
