// Judged Triton submissions as boostrap rows.
#include <fstream>
#include <map>
#include <sstream>

#include "data/data.h"
#include "data/detail/boostrap_table.h"
#include "data/detail/progress.h"

namespace kj::data {
namespace fs = std::filesystem;

namespace {

bool is_triton(const std::string& code) {
  return code.find("import triton") != std::string::npos ||
         code.find("from triton") != std::string::npos;
}

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json boostrap_row(const store::SubmissionRecord& r, const std::string& reference,
                            const std::string& task_yaml) {
  // The latest public run holds the judge's full result.
  nlohmann::json result = nlohmann::json::object();
  for (const auto& run : r.runs) {
    if (run.secret) continue;
    result = nlohmann::json::parse(run.result_json, nullptr, false);
    if (result.is_discarded()) result = nlohmann::json::object();
  }
  nlohmann::json timings = nlohmann::json::array();
  for (const auto& b : result.value("benchmarks", nlohmann::json::array())) {
    timings.push_back(
        {{"spec", b.value("spec", nlohmann::json::object()).dump()},
         {"median_ns", optional_json(number_at(b.value("summary", nlohmann::json()), "median_ns"))},
         {"reference_median_ns",
          optional_json(number_at(b.value("reference_summary", nlohmann::json()), "median_ns"))}});
  }
  // The largest error any test reported, when the harness measured one.
  std::optional<double> max_error;
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& t : result.value("tests", nlohmann::json::array())) {
    tests.push_back(t.value("spec", nlohmann::json::object()));
    if (auto e = number_at(t, "max_error"); e && (!max_error || *e > *max_error)) max_error = e;
  }
  const std::string& verdict = r.submission.verdict;
  return {{"pt_code", reference},
          {"triton_code", r.code},
          {"pt_entrypoint", "ref_kernel"},
          {"triton_entrypoint", "custom_kernel"},
          {"reasoning", ""},
          {"messages", nlohmann::json::array()},
          {"tests_code", task_yaml},
          {"pt_code_runs", verdict == "accepted" || verdict == "wrong_answer"},
          {"stdout", result.value("stdout", "")},
          {"stderr", result.value("stderr", "")},
          {"stop_reason", "done"},
          {"prompt", nlohmann::json::array()},
          {"entrypoint", "custom_kernel"},
          {"tests", tests.dump()},
          {"verdict", verdict},
          {"max_error", optional_json(max_error)},
          {"speedup", optional_json(number_at(result, "speedup"))},
          {"timings", timings}};
}

}  // namespace

std::int64_t export_boostrap(store::Store& store, const fs::path& out, bool progress) {
  std::map<store::Id, std::pair<std::string, std::string>> problems;  // reference, task.yml
  for (const auto& l : store.list_leaderboards(true)) {
    problems[l.id] = {
        l.problem_dir.empty() ? "" : read_file_or_empty(fs::path(l.problem_dir) / "reference.py"),
        l.task_yaml};
  }
  std::vector<nlohmann::json> rows;
  {
    detail::ProgressBar bar(detail::want_progress(progress), "reading submissions", 0);
    store.for_each_submission_record({}, [&](const store::SubmissionRecord& r) {
      bar.advance();
      if (r.submission.verdict.empty() || !is_triton(r.code)) return;
      const auto& [reference, task_yaml] = problems[r.submission.leaderboard_id];
      rows.push_back(boostrap_row(r, reference, task_yaml));
    });
  }
  detail::write_boostrap_table(rows, out);
  return static_cast<std::int64_t>(rows.size());
}

}  // namespace kj::data
