// Judged Triton submissions as boostrap rows.
#include <fstream>
#include <map>
#include <sstream>

#include "datasets/datasets.h"
#include "datasets/detail/arrow_io.h"
#include "datasets/detail/boostrap_table.h"
#include "datasets/detail/card.h"
#include "datasets/detail/files.h"
#include "datasets/detail/progress.h"

namespace kj::data {
namespace fs = std::filesystem;

namespace {

bool is_triton(const std::string& code) {
  return code.find("import triton") != std::string::npos ||
         code.find("from triton") != std::string::npos;
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

const std::map<std::string, std::string>& boostrap_docs() {
  static const std::map<std::string, std::string> docs = {
      {"pt_code", "the PyTorch program (the problem's reference)"},
      {"triton_code", "the Triton program judged"},
      {"pt_entrypoint", "the PyTorch entry point"},
      {"triton_entrypoint", "the Triton entry point"},
      {"reasoning", "the model's reasoning, when a model wrote the row"},
      {"messages", "the whole conversation with the model (role, content)"},
      {"tests_code", "the tests the row was judged with"},
      {"pt_code_runs", "the PyTorch program ran"},
      {"stdout", "the judged run's output"},
      {"stderr", "the judged run's error output"},
      {"stop_reason", "why the model stopped (its finish reason)"},
      {"prompt", "the first prompt sent to the model (role, content)"},
      {"entrypoint", "the entry point the tests call"},
      {"tests", "the test cases run (JSON)"},
      {"verdict", "kj's verdict (`accepted`, `wrong_answer`, ...)"},
      {"max_error", "the largest error a test reported (null: not reported)"},
      {"speedup", "over the PyTorch program timed in the same run (null: not timed)"},
      {"timings", "per benchmark case: spec, median and the reference's median (ns)"},
  };
  return docs;
}

// Writes data/train-* and the card; returns the number of rows.
std::int64_t write_boostrap_dataset(const std::vector<nlohmann::json>& rows,
                                    const BoostrapExport& options, const std::string& source) {
  const auto table = detail::boostrap_table(rows);
  detail::ShardedParquetWriter file(table->schema(), options.out_dir / "data",
                                    options.max_shard_bytes);
  file.write(*table);
  const auto shards = static_cast<std::int64_t>(file.close().size());
  std::map<std::string, std::int64_t> verdicts;
  for (const auto& row : rows) ++verdicts[row["verdict"].get<std::string>()];
  detail::Card card;
  card.pretty_name = "boostrap_triton rows judged by kerneljudge";
  card.license = options.license;
  card.tags = {"code", "triton", "pytorch", "gpu", "kernels"};
  card.task_categories = {"text-generation"};
  card.configs.push_back(
      {"default", "data", table->schema(), table->num_rows(), shards, boostrap_docs()});
  card.summary =
      "PyTorch programs and Triton programs written for them, each judged by "
      "kerneljudge, with the columns of tcapelle/boostrap_triton and the judge's "
      "verdict, error and timings. Source: " +
      source + ".";
  std::ostringstream counts;
  counts << "| verdict | rows |\n|---|---|\n";
  for (const auto& [verdict, n] : verdicts) counts << "| " << verdict << " | " << n << " |\n";
  card.sections.emplace_back("Rows per verdict", counts.str());
  std::ostringstream settings;
  settings << "- Exported by " << detail::kj_version() << ".\n"
           << "- Each Triton program ran in kj's sandbox against the PyTorch program on the "
              "test cases in `tests`; `accepted` rows matched it within the problem's "
              "tolerances, and `speedup`/`timings` come from a timed run on the same device.\n"
           << "- Shards of at most " << options.max_shard_bytes / (1024 * 1024)
           << " MiB; row groups of " << detail::kRowGroupRows
           << " rows with a page index, for the dataset viewer.\n";
  card.sections.emplace_back("How the rows were judged", settings.str());
  detail::write_card(card, options.out_dir);
  return table->num_rows();
}

}  // namespace

std::int64_t export_boostrap(store::Store& store, const BoostrapExport& options) {
  std::map<store::Id, std::pair<std::string, std::string>> problems;  // reference, task.yml
  for (const auto& l : store.list_leaderboards(true)) {
    problems[l.id] = {l.problem_dir.empty()
                          ? ""
                          : detail::read_file_or_empty(fs::path(l.problem_dir) / "reference.py"),
                      l.task_yaml};
  }
  std::vector<nlohmann::json> rows;
  {
    detail::ProgressBar bar(detail::want_progress(options.progress), "reading submissions", 0);
    store.for_each_submission_record({}, [&](const store::SubmissionRecord& r) {
      bar.advance();
      if (r.submission.verdict.empty() || !is_triton(r.code)) return;
      const auto& [reference, task_yaml] = problems[r.submission.leaderboard_id];
      rows.push_back(boostrap_row(r, reference, task_yaml));
    });
  }
  return write_boostrap_dataset(rows, options, "submissions to Triton leaderboards");
}

std::int64_t export_boostrap_run(const fs::path& run_dir, const BoostrapExport& options) {
  std::vector<nlohmann::json> rows;
  for (const auto& row :
       detail::read_jsonl_objects(run_dir / "rows.jsonl", "a kj bootstrap output directory")) {
    rows.push_back(boostrap_columns(row));
  }
  return write_boostrap_dataset(rows, options, "a kj bootstrap run (model translations)");
}

}  // namespace kj::data
