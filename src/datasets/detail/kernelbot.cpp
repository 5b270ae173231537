// kernelbot-data parquet: export in the published layouts, import of either layout.
#include <arrow/api.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "datasets/datasets.h"
#include "datasets/detail/arrow_io.h"
#include "datasets/detail/card.h"
#include "datasets/detail/files.h"
#include "datasets/detail/progress.h"
#include "datasets/detail/scoring.h"

namespace kj::data {
namespace fs = std::filesystem;
using detail::check;
using detail::value_or_throw;

namespace {

std::int64_t micros(store::Time t) { return t.time_since_epoch().count(); }
store::Time from_micros(std::int64_t v) { return store::Time(std::chrono::microseconds(v)); }

std::shared_ptr<arrow::DataType> utc_micros() {
  return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
}

// The type of every string column written: kernelbot-data's exporter writes large_string, and
// `datasets` aligns string with large_string only by casting, so files concatenate as published.
std::shared_ptr<arrow::DataType> text() { return arrow::large_utf8(); }

// Column builders of one output table, appended to in schema order.
class TableBuilder {
 public:
  void add(const std::string& name, std::shared_ptr<arrow::DataType> type) {
    fields_.push_back(arrow::field(name, type));
    builders_.push_back(value_or_throw(arrow::MakeBuilder(type), "export"));
  }
  arrow::ArrayBuilder& operator[](std::size_t i) { return *builders_[i]; }
  void string(std::size_t i, std::string_view v) {
    check(static_cast<arrow::LargeStringBuilder&>(*builders_[i]).Append(v), "export");
  }
  void integer(std::size_t i, std::int64_t v) {
    check(static_cast<arrow::Int64Builder&>(*builders_[i]).Append(v), "export");
  }
  void time(std::size_t i, std::int64_t us) {
    check(static_cast<arrow::TimestampBuilder&>(*builders_[i]).Append(us), "export");
  }
  void optional_time(std::size_t i, const std::optional<store::Time>& t) {
    auto& b = static_cast<arrow::TimestampBuilder&>(*builders_[i]);
    check(t ? b.Append(micros(*t)) : b.AppendNull(), "export");
  }
  void number(std::size_t i, std::optional<double> v) {
    auto& b = static_cast<arrow::DoubleBuilder&>(*builders_[i]);
    check(v ? b.Append(*v) : b.AppendNull(), "export");
  }
  void boolean(std::size_t i, bool v) {
    check(static_cast<arrow::BooleanBuilder&>(*builders_[i]).Append(v), "export");
  }
  void strings(std::size_t i, const std::vector<std::string>& values) {
    auto& list = static_cast<arrow::ListBuilder&>(*builders_[i]);
    auto& items = static_cast<arrow::StringBuilder&>(*list.value_builder());
    check(list.Append(), "export");
    for (const auto& v : values) check(items.Append(v), "export");
  }
  std::shared_ptr<arrow::Schema> schema() const { return arrow::schema(fields_); }
  std::int64_t rows() const { return builders_.empty() ? 0 : builders_.front()->length(); }
  // The rows appended since the last call, as one batch; the builders start over empty.
  std::shared_ptr<arrow::RecordBatch> flush() {
    arrow::ArrayVector arrays;
    const auto n = rows();
    for (auto& b : builders_) arrays.push_back(value_or_throw(b->Finish(), "export"));
    return arrow::RecordBatch::Make(schema(), n, arrays);
  }
  std::shared_ptr<arrow::Table> finish() {
    return value_or_throw(arrow::Table::FromRecordBatches({flush()}), "export");
  }

 private:
  arrow::FieldVector fields_;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders_;
};

// ---- export -----------------------------------------------------------------------------------

std::string task_lang(const std::string& task_yaml) {
  std::istringstream in(task_yaml);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("lang:", 0) != 0) continue;
    std::string value = line.substr(5);
    value.erase(0, value.find_first_not_of(" \t\"'"));
    value.erase(value.find_last_not_of(" \t\"'\r") + 1);
    return value;
  }
  return "";
}

// The ids an export writes: those imported rows had in their dataset (Store::source_ids), else
// the store's own.
class ExportedIds {
 public:
  explicit ExportedIds(store::Store& store) {
    for (const auto kind :
         {store::SourceKind::leaderboard, store::SourceKind::user, store::SourceKind::code,
          store::SourceKind::submission, store::SourceKind::run}) {
      sources_[static_cast<std::size_t>(kind)] = store.source_ids(kind);
    }
  }
  // A number (an id column of type int64): the source id when it is one.
  std::int64_t number(store::SourceKind kind, store::Id local) const {
    const auto* source = find(kind, local);
    if (source == nullptr) return local;
    std::int64_t value = 0;
    const auto [end, error] =
        std::from_chars(source->data(), source->data() + source->size(), value);
    return error == std::errc() && end == source->data() + source->size() ? value : local;
  }
  std::string text(store::SourceKind kind, store::Id local) const {
    const auto* source = find(kind, local);
    return source != nullptr ? *source : std::to_string(local);
  }

 private:
  const std::string* find(store::SourceKind kind, store::Id local) const {
    const auto& ids = sources_[static_cast<std::size_t>(kind)];
    const auto it = ids.find(local);
    return it == ids.end() ? nullptr : &it->second;
  }
  std::array<std::unordered_map<store::Id, std::string>, 5> sources_;
};

// The user ids and names as written: the store's (the source's ids of imported users), or
// user-1..user-N in a random order.
class UserNames {
 public:
  UserNames(bool anonymize, const ExportedIds& ids) : anonymize_(anonymize), ids_(ids) {}
  void see(store::Id id, const std::string& name) { names_.emplace(id, name); }
  void finish() {
    if (!anonymize_) return;
    std::vector<store::Id> ids;
    for (const auto& [id, name] : names_) ids.push_back(id);
    std::shuffle(ids.begin(), ids.end(), std::mt19937_64(std::random_device{}()));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      anonymous_[ids[i]] = static_cast<store::Id>(i + 1);
    }
  }
  std::int64_t id(store::Id user) const {
    return anonymize_ ? anonymous_.at(user) : ids_.number(store::SourceKind::user, user);
  }
  std::string id_text(store::Id user) const {
    return anonymize_ ? std::to_string(anonymous_.at(user))
                      : ids_.text(store::SourceKind::user, user);
  }
  std::string name(store::Id user) const {
    return anonymize_ ? "user-" + std::to_string(anonymous_.at(user)) : names_.at(user);
  }

 private:
  bool anonymize_;
  const ExportedIds& ids_;
  std::map<store::Id, std::string> names_;
  std::unordered_map<store::Id, store::Id> anonymous_;
};

struct SubmissionRow {
  store::Id submission_id = 0, leaderboard_id = 0, user_id = 0, code_id = 0;
  std::string problem_name, file_name, status, mode, runner;
  std::int64_t time = 0;
  std::optional<double> score;
  bool passed = false;
};

// kernelbot's status column: succeeded when the score counts or the verdict is accepted (a
// passing job, in kernelbot's words), hacked, else our verdict (or the submission's state while
// it has none).
std::string status_of(const store::SubmissionRecord& r, const std::optional<double>& score) {
  if (r.submission.hacked) return "hacked";
  if (score || r.submission.verdict == "accepted") return "succeeded";
  if (!r.submission.verdict.empty()) return r.submission.verdict;
  return store::to_string(r.submission.status);
}

SubmissionRow submission_row(const store::SubmissionRecord& r, const ExportedIds& ids) {
  SubmissionRow row;
  const auto& s = r.submission;
  row.submission_id = ids.number(store::SourceKind::submission, s.id);
  row.leaderboard_id = ids.number(store::SourceKind::leaderboard, s.leaderboard_id);
  row.user_id = s.user_id;
  row.code_id = ids.number(store::SourceKind::code, s.code_id);
  row.problem_name = s.leaderboard_name;
  row.file_name = s.file_name;
  row.mode = s.mode;
  row.runner = s.gpu_type;
  row.time = micros(s.created_at);
  row.score = detail::counted_score(r);
  row.status = status_of(r, row.score);
  // passed: the counted run's, else whether every public run passed.
  row.passed = row.score.has_value();
  if (!row.score) {
    bool any = false, all = true;
    for (const auto& run : r.runs) {
      if (run.secret) continue;
      any = true;
      all = all && run.passed;
    }
    row.passed = any && all;
  }
  return row;
}

TableBuilder submission_table() {
  TableBuilder t;
  t.add("submission_id", arrow::int64());
  t.add("leaderboard_id", arrow::int64());
  t.add("problem_name", text());
  t.add("user_id", text());
  t.add("user_name", text());
  t.add("code_id", arrow::int64());
  t.add("file_name", text());
  t.add("submission_time", utc_micros());
  t.add("status", text());
  t.add("score", arrow::float64());
  t.add("passed", arrow::boolean());
  t.add("mode", text());
  t.add("runner", text());
  t.add("code", text());
  return t;
}

void append(TableBuilder& t, const SubmissionRow& r, std::string_view code,
            const UserNames& users) {
  t.integer(0, r.submission_id);
  t.integer(1, r.leaderboard_id);
  t.string(2, r.problem_name);
  t.string(3, users.id_text(r.user_id));
  t.string(4, users.name(r.user_id));
  t.integer(5, r.code_id);
  t.string(6, r.file_name);
  t.time(7, r.time);
  t.string(8, r.status);
  t.number(9, r.score);
  t.boolean(10, r.passed);
  t.string(11, r.mode);
  t.string(12, r.runner);
  t.string(13, code);
}

TableBuilder run_table() {
  TableBuilder t;
  for (const char* name : {"submission_id", "leaderboard_id", "user_id"})
    t.add(name, arrow::int64());
  t.add("submission_time", utc_micros());
  t.add("file_name", text());
  t.add("code", text());
  t.add("code_id", arrow::int64());
  t.add("run_id", arrow::int64());
  t.add("run_start_time", utc_micros());
  t.add("run_end_time", utc_micros());
  t.add("run_mode", text());
  t.add("run_score", arrow::float64());
  t.add("run_passed", arrow::boolean());
  for (const char* name : {"run_result", "run_compilation", "run_meta", "run_system_info"}) {
    t.add(name, text());
  }
  return t;
}

// One public run with its submission. The AMD release has no column for the GPU: run_meta
// carries it, with the submission's mode and verdict, so that an import restores them.
void append_run(TableBuilder& t, const store::SubmissionRecord& r, const store::Run& run,
                const UserNames& users, const ExportedIds& ids) {
  const auto& s = r.submission;
  t.integer(0, ids.number(store::SourceKind::submission, s.id));
  t.integer(1, ids.number(store::SourceKind::leaderboard, s.leaderboard_id));
  t.integer(2, users.id(s.user_id));
  t.time(3, micros(s.created_at));
  t.string(4, s.file_name);
  t.string(5, r.code);
  t.integer(6, ids.number(store::SourceKind::code, s.code_id));
  t.integer(7, ids.number(store::SourceKind::run, run.id));
  t.time(8, micros(run.start_time));
  t.time(9, micros(run.end_time));
  t.string(10, run.mode);
  t.number(11, run.score);
  t.boolean(12, run.passed);
  t.string(13, run.result_json);
  t.string(14, run.compilation_json);
  // An imported run's run_meta as published; else ours.
  t.string(15, !run.meta_json.empty() ? run.meta_json
                                      : nlohmann::json{{"runner", run.runner},
                                                       {"submission_mode", s.mode},
                                                       {"verdict", s.verdict},
                                                       {"hacked", s.hacked}}
                                            .dump());
  t.string(16, run.system_json);
}

std::vector<store::Leaderboard> selected_leaderboards(store::Store& store,
                                                      const KernelbotExport& options) {
  const auto all = store.list_leaderboards(true);
  std::vector<store::Leaderboard> chosen;
  if (options.leaderboards.empty()) {
    chosen = all;
  } else {
    for (const auto& name : options.leaderboards) {
      auto it = std::find_if(all.begin(), all.end(), [&](const auto& l) { return l.name == name; });
      if (it == all.end()) throw DataError("no leaderboard named '" + name + "'");
      chosen.push_back(*it);
    }
  }
  const auto now =
      std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  for (const auto& l : chosen) {
    if (options.force || (l.deadline && *l.deadline <= now)) continue;
    throw DataError("leaderboard '" + l.name + "' is still open (" +
                    (l.deadline ? "its deadline has not passed" : "it has no deadline") +
                    "): its submissions are published after the deadline; --force exports it "
                    "anyway");
  }
  return chosen;
}

// Writes the leaderboards config; returns its schema and number of shards.
std::pair<std::shared_ptr<arrow::Schema>, std::int64_t> write_leaderboards(
    const std::vector<store::Leaderboard>& leaderboards, const ExportedIds& ids,
    const fs::path& dir, std::int64_t max_shard_bytes) {
  TableBuilder t;
  t.add("id", arrow::int64());
  t.add("name", text());
  t.add("deadline", utc_micros());
  t.add("lang", text());
  t.add("description", text());
  t.add("reference", text());
  t.add("gpu_types", arrow::list(arrow::utf8()));
  for (const auto& l : leaderboards) {
    t.integer(0, ids.number(store::SourceKind::leaderboard, l.id));
    t.string(1, l.name);
    t.optional_time(2, l.deadline);
    t.string(3, task_lang(l.task_yaml));
    t.string(4, l.description);
    t.string(5, l.problem_dir.empty()
                    ? l.reference
                    : detail::read_file_or_empty(fs::path(l.problem_dir) / "reference.py"));
    t.strings(6, l.gpu_types);
  }
  detail::ShardedParquetWriter file(t.schema(), dir, max_shard_bytes);
  const auto schema = t.schema();
  file.write(*t.finish());
  return {schema, static_cast<std::int64_t>(file.close().size())};
}

// ---- the dataset card ---------------------------------------------------------------------------

const std::map<std::string, std::string>& submission_docs() {
  static const std::map<std::string, std::string> docs = {
      {"submission_id", "the judge's submission id"},
      {"leaderboard_id", "the leaderboard's id (`leaderboards` config)"},
      {"problem_name", "the leaderboard's name"},
      {"user_id", "the author's id (as text)"},
      {"user_name", "the author's name"},
      {"code_id", "id of the deduplicated source"},
      {"file_name", "the submitted file's name"},
      {"submission_time", "when it was submitted (UTC)"},
      {"status",
       "`succeeded` when the score counts, `hacked` when marked so, else the verdict "
       "(`wrong_answer`, `compile_error`, ...)"},
      {"score", "the counted score: benchmark time in seconds, lower is better (null: none)"},
      {"passed", "the counted run passed, or every public run passed"},
      {"mode", "`test`, `benchmark` or `leaderboard`"},
      {"runner", "the GPU type it was judged on"},
      {"code", "the submitted source, byte for byte"},
      {"run_id", "the run's id"},
      {"run_start_time", "when the run started (UTC)"},
      {"run_end_time", "when the run ended (UTC)"},
      {"run_mode", "`test`, `benchmark` or `leaderboard`"},
      {"run_score", "the run's score in seconds (null: none)"},
      {"run_passed", "every test of the run passed"},
      {"run_result", "the harness's full result (JSON)"},
      {"run_compilation", "compiler output (JSON)"},
      {"run_meta", "`runner`, `submission_mode`, `verdict`, `hacked` (JSON)"},
      {"run_system_info", "the machine that ran it (JSON)"},
  };
  return docs;
}

const std::map<std::string, std::string>& leaderboard_docs() {
  static const std::map<std::string, std::string> docs = {
      {"id", "the leaderboard's id"},
      {"name", "its name (`problem_name` of the submissions)"},
      {"deadline", "when it closed (UTC; null: none)"},
      {"lang", "the submission language of its task.yml"},
      {"description", "the problem's description"},
      {"reference", "the problem's reference.py (empty when not available)"},
      {"gpu_types", "the GPU types it ranks"},
  };
  return docs;
}

// Rows per (leaderboard, GPU type): all rows, successful rows.
using LeaderboardGpuCounts =
    std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>>;

std::string counts_table(const LeaderboardGpuCounts& counts) {
  std::ostringstream out;
  out << "| leaderboard | GPU | rows | successful |\n|---|---|---|---|\n";
  for (const auto& [key, n] : counts) {
    out << "| " << key.first << " | " << key.second << " | " << n.first << " | " << n.second
        << " |\n";
  }
  if (counts.empty()) out << "| (none) | | 0 | 0 |\n";
  return out.str();
}

// The scored rows written, per leaderboard and GPU type, for the card's plots: the best score
// over time, as `kj stats progression --plot` draws one user's (here every user's rows).
class ScoreHistory {
 public:
  void add(const std::string& leaderboard, const std::string& gpu, std::int64_t id,
           std::int64_t time, double score) {
    auto& points = rows_[{leaderboard, gpu}];
    ProgressionPoint p;
    p.submission_id = id;
    p.time = from_micros(time);
    p.score = score;
    points.push_back(p);
  }
  // One plot per leaderboard and GPU type, those with the most scored rows first, at most
  // kMaxPlots. Of many rows the plot shows every new best and an even sample of the rest.
  std::vector<detail::CardPlot> plots() const {
    std::vector<
        std::pair<std::pair<std::string, std::string>, const std::vector<ProgressionPoint>*>>
        order;
    for (const auto& [key, points] : rows_) order.emplace_back(key, &points);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.second->size() > b.second->size();
    });
    if (order.size() > kMaxPlots) order.resize(kMaxPlots);
    std::vector<detail::CardPlot> plots;
    for (const auto& [key, rows] : order) {
      auto points = *rows;
      std::stable_sort(points.begin(), points.end(),
                       [](const auto& a, const auto& b) { return a.time < b.time; });
      std::optional<double> best;
      std::vector<ProgressionPoint> shown;
      const std::size_t every = (points.size() + kMaxDots - 1) / kMaxDots;  // 1 up to kMaxDots
      for (std::size_t i = 0; i < points.size(); ++i) {
        auto& p = points[i];
        const bool record = !best || *p.score < *best;
        if (record) best = p.score;
        p.best_so_far = best;
        if (record || i % every == 0 || i + 1 == points.size()) shown.push_back(p);
      }
      std::string title = key.first + " on " + key.second + ": best score over time (" +
                          std::to_string(points.size()) + " scored rows";
      title += shown.size() < points.size() ? ", " + std::to_string(shown.size()) + " shown)" : ")";
      plots.push_back({"best-" + file_part(key.first) + "-" + file_part(key.second) + ".svg", title,
                       progression_svg(shown, title)});
    }
    return plots;
  }

 private:
  static constexpr std::size_t kMaxPlots = 12;
  static constexpr std::size_t kMaxDots = 2000;
  // A name as part of a file name: letters, digits, '.', '_' and '-' kept, the rest '_'.
  static std::string file_part(std::string name) {
    for (char& c : name) {
      const bool keep =
          std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      if (!keep) c = '_';
    }
    return name;
  }
  std::map<std::pair<std::string, std::string>, std::vector<ProgressionPoint>> rows_;
};

detail::Card kernelbot_card(const KernelbotExport& options, std::vector<detail::CardConfig> configs,
                            const LeaderboardGpuCounts& counts, const ScoreHistory& scores) {
  const bool by_submission = options.layout == KernelbotLayout::submission;
  detail::Card card;
  card.pretty_name = "kernelbot-data export";
  card.license = options.license;
  card.tags = {"code", "gpu", "kernels", "cuda", "triton"};
  card.task_categories = {"text-generation"};
  card.configs = std::move(configs);
  card.summary = std::string(
                     "GPU kernel submissions judged by kerneljudge, in the layout of GPUMODE/"
                     "kernelbot-data (") +
                 (by_submission ? "one row per submission" : "one row per public run") +
                 "), with the leaderboards they were submitted to.";
  card.sections.emplace_back("Rows per leaderboard and GPU", counts_table(counts));
  std::ostringstream judged;
  judged << "- Submissions judged by kj ran in its sandbox against the leaderboard's reference: "
            "public `test`, `benchmark` and `leaderboard` runs, and secret runs with a seed the "
            "author never saw (secret runs are not published). Submissions imported from another "
            "dataset keep the verdicts and scores recorded there.\n"
            "- A score counts when it comes from a passed public `leaderboard`-mode run, of a "
            "submission not marked hacked and with no failed secret run; it is the benchmark "
            "time in seconds (lower is better).\n";
  if (by_submission) {
    judged << "- Deduplicated: of the submissions with the same leaderboard, user, code and GPU "
              "type only the fastest is kept (counted scores first, lowest score, then the "
              "earliest).\n";
  } else {
    judged << "- Not deduplicated: every public run is a row.\n";
  }
  judged << "- `successful_submissions` holds the rows of `submissions` that passed.\n";
  card.sections.emplace_back("How the rows were judged", judged.str());
  std::ostringstream settings;
  settings << "- Exported by " << detail::kj_version() << ".\n"
           << "- Layout: `" << (by_submission ? "submission" : "run") << "`.\n"
           << "- Users: "
           << (options.anonymize ? "anonymized (`user-1` ... `user-N`)" : "as stored") << ".\n"
           << "- Leaderboards: "
           << (options.leaderboards.empty() ? std::string("all") : std::string("selected"))
           << (options.force ? ", open ones included (`--force`)" : ", closed ones only") << ".\n"
           << "- Shards of at most " << options.max_shard_bytes / (1024 * 1024)
           << " MiB; row groups of " << detail::kRowGroupRows
           << " rows with a page index, for the dataset viewer.\n";
  card.sections.emplace_back("Export settings", settings.str());
  card.sections.emplace_back(
      "Use",
      "```python\nfrom datasets import load_dataset\n"
      "submissions = load_dataset(\"<repo>\", \"submissions\", split=\"train\")\n"
      "leaderboards = load_dataset(\"<repo>\", \"leaderboards\", split=\"train\")\n```\n\n"
      "`kj import kernelbot data/submissions/*.parquet data/leaderboards/*.parquet` loads the "
      "files into a kerneljudge store; "
      "`kj stats top --leaderboard NAME` ranks them.\n");
  card.plots = scores.plots();
  card.plots_text =
      "Each leaderboard's best score over time on each GPU type, from the scored rows of the "
      "`submissions` config (" +
      std::string(by_submission ? "counted scores" : "passed public `leaderboard` runs") +
      "): a dot per row (of more than 2,000, every new best and an even sample of the others; "
      "log scale when scores span more than 10×), the line the best so far. "
      "Drawn by kj as `kj stats progression --plot` draws one user's.\n";
  return card;
}

// ---- import -----------------------------------------------------------------------------------

struct LeaderboardRow {
  std::int64_t id = 0;
  std::string name, lang, description, reference;
  std::optional<store::Time> deadline;
  std::vector<std::string> gpu_types;
};

// The submission-level columns of one file, checked for presence and type. The code column is
// read last: whole, or, when the file's rows are stored in file order, batch by batch while the
// submissions are stored (on the store's second thread), so that decoding it runs beside the
// inserts and one batch is in memory at a time.
struct SubmissionColumns {
  std::shared_ptr<arrow::Array> submission_id, leaderboard_id, problem_name, user_id, user_name,
      code_id, file_name, status, mode, runner, code;
  std::unique_ptr<detail::StreamedStrings> streamed_code;
  std::shared_ptr<arrow::TimestampArray> time;
  std::shared_ptr<arrow::DoubleArray> score;
  std::shared_ptr<arrow::BooleanArray> passed;

  std::string_view code_at(std::int64_t i) const {
    return streamed_code ? streamed_code->at(i) : detail::string_at(*code, i);
  }
};

// Rows of the code column per batch when it is read while storing (4 KiB of code a row: 16 MiB).
constexpr std::int64_t kCodeBatchRows = 4096;

// A submission found in the files. Submission-level rows stay in their Arrow columns until they
// are stored (the code is copied once, into the store); run-level ones are gathered from their
// runs first.
struct PendingSubmission {
  std::int64_t time = 0, origin = 0;  // the order they are stored in: oldest first
  std::size_t leaderboard = 0;        // index into Pending::leaderboards
  std::size_t file = 0;               // submission level: index into Pending::columns
  std::int64_t row = 0;               // submission level: its row
  std::int64_t run_level = -1;        // run level: index into Pending::run_level
};

struct Pending {
  std::vector<PendingSubmission> submissions;
  std::vector<std::string> leaderboards;            // names, resolved to ids at the end
  std::vector<std::vector<std::string>> gpu_types;  // per leaderboard, as seen in the rows
  std::vector<std::int64_t> source_ids;             // per leaderboard, as the first row has it
  std::map<std::string, std::size_t, std::less<>> leaderboard_index;
  std::vector<SubmissionColumns> columns;            // per submission-level file
  std::vector<store::ImportedSubmission> run_level;  // complete but for leaderboard_id

  std::size_t leaderboard(std::string_view name, std::int64_t source_id) {
    auto it = leaderboard_index.find(name);
    if (it != leaderboard_index.end()) return it->second;
    leaderboards.emplace_back(name);
    gpu_types.emplace_back();
    source_ids.push_back(source_id);
    return leaderboard_index.emplace(std::string(name), leaderboards.size() - 1).first->second;
  }
  void see_gpu(std::size_t leaderboard, std::string_view gpu) {
    auto& seen = gpu_types[leaderboard];
    if (std::find(seen.begin(), seen.end(), gpu) == seen.end()) seen.emplace_back(gpu);
  }
};

std::vector<LeaderboardRow> read_leaderboards(const detail::ColumnReader& c) {
  auto id = c.integers("id");
  auto name = c.strings("name");
  auto deadline = c.timestamps("deadline");
  auto lang = c.strings("lang");
  auto description = c.strings("description");
  auto reference = c.strings("reference");
  auto gpus = c.string_lists("gpu_types");
  auto gpu_values = std::static_pointer_cast<arrow::StringArray>(gpus->values());
  std::vector<LeaderboardRow> rows;
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    LeaderboardRow r;
    r.id = detail::integer_at(*id, i);
    r.name = detail::string_at(*name, i);
    if (r.name.empty()) throw DataError(c.file() + ": row " + std::to_string(i) + " has no name");
    if (!deadline->IsNull(i)) r.deadline = from_micros(detail::micros_at(*deadline, i));
    r.lang = detail::string_at(*lang, i);
    r.description = detail::string_at(*description, i);
    r.reference = detail::string_at(*reference, i);
    if (!gpus->IsNull(i)) {
      for (auto k = gpus->value_offset(i); k < gpus->value_offset(i + 1); ++k) {
        r.gpu_types.emplace_back(gpu_values->GetView(k));
      }
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string verdict_from_status(std::string_view status) {
  if (status == "succeeded" || status == "hacked") return "accepted";
  return std::string(status);
}

void read_submission_layout(const detail::ColumnReader& c, Pending& pending,
                            detail::ProgressBar& bar) {
  SubmissionColumns cols;
  cols.submission_id = c.integers("submission_id");
  cols.leaderboard_id = c.integers("leaderboard_id");
  cols.problem_name = c.strings("problem_name");
  cols.user_id = c.strings("user_id");
  cols.user_name = c.strings("user_name");
  cols.code_id = c.integers("code_id");
  cols.file_name = c.strings("file_name");
  cols.time = c.timestamps("submission_time");
  cols.status = c.strings("status");
  cols.score = c.doubles("score");
  cols.passed = c.booleans("passed");
  cols.mode = c.strings("mode");
  cols.runner = c.strings("runner");
  // cols.code: read after every row is placed (import_kernelbot)
  const std::size_t file = pending.columns.size();
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    if (cols.time->IsNull(i)) {
      throw DataError(c.file() + ": row " + std::to_string(i) + " has no submission_time");
    }
    PendingSubmission p;
    p.time = detail::micros_at(*cols.time, i);
    p.origin = detail::integer_at(*cols.submission_id, i);
    p.leaderboard = pending.leaderboard(detail::string_at(*cols.problem_name, i),
                                        detail::integer_at(*cols.leaderboard_id, i));
    p.file = file;
    p.row = i;
    const auto gpu = detail::string_at(*cols.runner, i);
    if (detail::string_at(*cols.file_name, i).empty() || gpu.empty() ||
        detail::string_at(*cols.mode, i).empty()) {
      throw DataError("submission " + std::to_string(p.origin) + " on '" +
                      pending.leaderboards[p.leaderboard] +
                      "' lacks a user name, file name, GPU or mode");
    }
    pending.see_gpu(p.leaderboard, gpu);
    pending.submissions.push_back(p);
    bar.advance();
  }
  pending.columns.push_back(std::move(cols));
}

// The submission at row i of a submission-level file, into `s` (whose buffers are reused).
void fill_submission(const SubmissionColumns& c, std::int64_t i, store::ImportedSubmission& s) {
  s.source_id = detail::integer_at(*c.submission_id, i);
  s.source_code_id = detail::integer_at(*c.code_id, i);
  s.source_user_id.assign(detail::string_at(*c.user_id, i));
  s.source_run_ids.clear();
  const auto name = detail::string_at(*c.user_name, i);
  if (name.empty()) {
    s.user_name.assign("user-").append(detail::string_at(*c.user_id, i));
  } else {
    s.user_name.assign(name);
  }
  s.file_name.assign(detail::string_at(*c.file_name, i));
  s.code.assign(c.code_at(i));
  s.gpu_type.assign(detail::string_at(*c.runner, i));
  s.mode.assign(detail::string_at(*c.mode, i));
  s.created_at = from_micros(detail::micros_at(*c.time, i));
  const auto status = detail::string_at(*c.status, i);
  s.verdict = verdict_from_status(status);
  s.hacked = status == "hacked";
  s.score = c.score->IsNull(i) ? std::nullopt : std::optional<double>(c.score->Value(i));
  s.runs.resize(1);
  auto& run = s.runs.front();
  run.mode = s.mode;
  run.runner = s.gpu_type;
  run.score = s.score;
  run.passed = !c.passed->IsNull(i) && c.passed->Value(i);
  run.secret = false;
  run.compilation_json = run.result_json = run.system_json = "{}";
  run.start_time = run.end_time = s.created_at;
}

std::string json_or_empty_object(std::string_view text) {
  return text.empty() ? "{}" : std::string(text);
}

void read_run_layout(const detail::ColumnReader& c,
                     const std::map<std::int64_t, std::string>& leaderboard_names, Pending& pending,
                     detail::ProgressBar& bar) {
  auto submission_id = c.integers("submission_id");
  auto leaderboard_id = c.integers("leaderboard_id");
  auto user_id = c.integers("user_id");
  auto time = c.timestamps("submission_time");
  auto file_name = c.strings("file_name");
  auto code = c.strings("code");
  auto code_id = c.integers("code_id");
  auto run_id = c.integers("run_id");
  auto start = c.timestamps("run_start_time");
  auto end = c.timestamps("run_end_time");
  auto mode = c.strings("run_mode");
  auto score = c.doubles("run_score");
  auto passed = c.booleans("run_passed");
  auto result = c.strings("run_result");
  auto compilation = c.strings("run_compilation");
  auto meta = c.strings("run_meta");
  auto system = c.strings("run_system_info");
  const std::size_t first = pending.submissions.size();
  std::map<std::int64_t, std::size_t> by_origin;  // submission_id -> index in pending.run_level
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    const std::int64_t origin = detail::integer_at(*submission_id, i);
    const std::int64_t lb = detail::integer_at(*leaderboard_id, i);
    auto lb_name = leaderboard_names.find(lb);
    if (lb_name == leaderboard_names.end()) {
      throw DataError(c.file() + ": row " + std::to_string(i) + " is on leaderboard id " +
                      std::to_string(lb) +
                      ", which no leaderboards.parquet given with it names (run-level files name "
                      "leaderboards by id only)");
    }
    nlohmann::json meta_json = nlohmann::json::object();
    try {
      const auto text = detail::string_at(*meta, i);
      if (!text.empty()) meta_json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw DataError(c.file() + ": row " + std::to_string(i) + ": run_meta is not JSON");
    }
    // Its keys are read with value(), which throws json's type_error for another type: checked
    // here, so that a foreign file is a DataError: a run_meta of [1] threw out of kj import.
    if (!meta_json.is_object()) {
      throw DataError(c.file() + ": row " + std::to_string(i) + ": run_meta is not a JSON object");
    }
    for (const char* key : {"runner", "submission_mode", "verdict"}) {
      if (meta_json.contains(key) && !meta_json[key].is_string()) {
        throw DataError(c.file() + ": row " + std::to_string(i) + ": run_meta's " + key +
                        " is not a string");
      }
    }
    if (meta_json.contains("hacked") && !meta_json["hacked"].is_boolean()) {
      throw DataError(c.file() + ": row " + std::to_string(i) +
                      ": run_meta's hacked is not a boolean");
    }
    for (auto* column : {&result, &compilation, &system}) {
      const auto text = detail::string_at(**column, i);
      if (!text.empty() && !nlohmann::json::accept(text)) {
        throw DataError(c.file() + ": row " + std::to_string(i) + ": a run_* column is not JSON");
      }
    }
    auto [it, inserted] = by_origin.emplace(origin, pending.run_level.size());
    if (inserted) {
      store::ImportedSubmission s;
      s.user_name = "user-" + std::to_string(detail::integer_at(*user_id, i));
      s.file_name = detail::string_at(*file_name, i);
      s.code = detail::string_at(*code, i);
      if (time->IsNull(i)) {
        throw DataError(c.file() + ": row " + std::to_string(i) + " has no submission_time");
      }
      s.created_at = from_micros(detail::micros_at(*time, i));
      s.gpu_type = meta_json.value("runner", std::string());
      s.mode = meta_json.value("submission_mode", std::string());
      s.verdict = meta_json.value("verdict", std::string());
      s.hacked = meta_json.value("hacked", false);
      s.source_id = origin;
      s.source_code_id = detail::integer_at(*code_id, i);
      s.source_user_id = std::to_string(detail::integer_at(*user_id, i));
      PendingSubmission p;
      p.time = micros(s.created_at);
      p.origin = origin;
      p.leaderboard = pending.leaderboard(lb_name->second, lb);
      p.run_level = static_cast<std::int64_t>(pending.run_level.size());
      pending.submissions.push_back(p);
      pending.run_level.push_back(std::move(s));
    }
    auto& s = pending.run_level[it->second];
    store::NewRun run;
    run.mode = detail::string_at(*mode, i);
    run.runner = meta_json.value("runner", s.gpu_type);
    if (!score->IsNull(i)) run.score = score->Value(i);
    run.passed = !passed->IsNull(i) && passed->Value(i);
    run.result_json = json_or_empty_object(detail::string_at(*result, i));
    run.compilation_json = json_or_empty_object(detail::string_at(*compilation, i));
    run.system_json = json_or_empty_object(detail::string_at(*system, i));
    run.meta_json = detail::string_at(*meta, i);
    run.start_time = start->IsNull(i) ? s.created_at : from_micros(detail::micros_at(*start, i));
    run.end_time = end->IsNull(i) ? run.start_time : from_micros(detail::micros_at(*end, i));
    s.runs.push_back(std::move(run));
    s.source_run_ids.emplace_back(detail::integer_at(*run_id, i));
    bar.advance();
  }
  // Files of the AMD release carry no GPU, mode or verdict: taken from the runs.
  for (const auto& [origin, index] : by_origin) {
    auto& s = pending.run_level[index];
    if (s.gpu_type.empty()) {
      s.gpu_type = "unknown";
      for (auto& run : s.runs) {
        if (run.runner.empty()) run.runner = s.gpu_type;
      }
    }
    bool has_leaderboard_run = false, all_passed = true;
    std::optional<double> best;
    for (const auto& run : s.runs) {
      all_passed = all_passed && run.passed;
      if (run.mode != "leaderboard") continue;
      has_leaderboard_run = true;
      if (run.passed && run.score && (!best || *run.score < *best)) best = run.score;
    }
    if (s.mode.empty()) s.mode = has_leaderboard_run ? "leaderboard" : s.runs.front().mode;
    if (s.verdict.empty()) s.verdict = all_passed ? "accepted" : "failed";
    s.score = best;
  }
  for (std::size_t k = first; k < pending.submissions.size(); ++k) {
    const auto& p = pending.submissions[k];
    const auto& s = pending.run_level[static_cast<std::size_t>(p.run_level)];
    if (s.file_name.empty() || s.mode.empty()) {
      throw DataError("submission " + std::to_string(p.origin) + " on '" +
                      pending.leaderboards[p.leaderboard] +
                      "' lacks a user name, file name, GPU or mode");
    }
    pending.see_gpu(p.leaderboard, s.gpu_type);
  }
}

enum class FileKind { leaderboards, submission_layout, run_layout };

FileKind kind_of(const arrow::Schema& schema, const std::string& file) {
  if (schema.GetFieldIndex("run_id") >= 0) return FileKind::run_layout;
  if (schema.GetFieldIndex("problem_name") >= 0) return FileKind::submission_layout;
  if (schema.GetFieldIndex("gpu_types") >= 0) return FileKind::leaderboards;
  throw DataError(file +
                  ": not a kernelbot-data file: it has no column run_id (run-level submissions), "
                  "problem_name (submission-level submissions) or gpu_types (leaderboards)");
}

// The code column of a submission-level file, checked from the file's schema (its values are
// read later) as ColumnReader::strings checks a column it reads.
void check_code_column(const arrow::Schema& schema, const std::string& file) {
  const auto field = schema.GetFieldByName("code");
  if (!field) throw DataError(file + ": column 'code' (string) is missing");
  const auto id = field->type()->id();
  if (id != arrow::Type::STRING && id != arrow::Type::LARGE_STRING) {
    throw DataError(file + ": column 'code' has type " + field->type()->ToString() +
                    ", expected string");
  }
}

}  // namespace

ExportCounts export_kernelbot(store::Store& store, const KernelbotExport& options) {
  const auto leaderboards = selected_leaderboards(store, options);
  std::vector<store::Id> ids;
  for (const auto& l : leaderboards) ids.push_back(l.id);
  fs::create_directories(options.out_dir);
  ExportCounts counts;
  counts.leaderboards = static_cast<std::int64_t>(leaderboards.size());
  const ExportedIds exported_ids(store);
  UserNames users(options.anonymize, exported_ids);
  const bool progress = detail::want_progress(options.progress);
  const bool by_submission = options.layout == KernelbotLayout::submission;
  // First pass, without code: the users (anonymized ids need them all) and, per submission, the
  // submissions dedup keeps (ids ascending).
  std::vector<store::Id> kept;
  std::int64_t total = 0;
  store::Id last_id = 0;  // submissions added after the first pass are left out of the second
  if (!ids.empty()) {
    detail::ProgressBar bar(progress, "reading submissions", 0);
    struct Best {
      std::optional<double> score;
      std::int64_t time = 0;
      store::Id id = 0;
    };
    std::map<std::tuple<store::Id, store::Id, store::Id, std::string>, Best> best;
    store.for_each_submission_record(
        ids, store::Store::RecordCode::without, [&](const store::SubmissionRecord& r) {
          users.see(r.submission.user_id, r.submission.user_name);
          last_id = r.submission.id;
          ++total;
          bar.advance();
          if (!by_submission) return;
          const auto& s = r.submission;
          Best row{detail::counted_score(r), micros(s.created_at), s.id};
          auto [it, inserted] = best.try_emplace(
              std::make_tuple(s.leaderboard_id, s.user_id, s.code_id, s.gpu_type), row);
          if (inserted) return;
          // Fastest first (no score last), then the earliest.
          const Best& a = row;
          const Best& b = it->second;
          const bool a_better = a.score.has_value() != b.score.has_value() ? a.score.has_value()
                                : a.score && *a.score != *b.score          ? *a.score < *b.score
                                : a.time != b.time                         ? a.time < b.time
                                                                           : a.id < b.id;
          if (a_better) it->second = row;
        });
    kept.reserve(best.size());
    for (const auto& [key, b] : best) kept.push_back(b.id);
    std::sort(kept.begin(), kept.end());
  }
  users.finish();
  // Second pass, with code: rows go to both files in batches, so memory holds one batch.
  constexpr std::int64_t kBatchRows = 4 * detail::kRowGroupRows;  // whole row groups
  TableBuilder all = by_submission ? submission_table() : run_table();
  TableBuilder successful = by_submission ? submission_table() : run_table();
  const fs::path data = options.out_dir / "data";
  detail::ShardedParquetWriter all_file(all.schema(), data / "submissions",
                                        options.max_shard_bytes);
  detail::ShardedParquetWriter successful_file(successful.schema(), data / "successful_submissions",
                                               options.max_shard_bytes);
  const auto flush = [](TableBuilder& t, detail::ShardedParquetWriter& file,
                        std::int64_t at_least) {
    if (t.rows() > 0 && t.rows() >= at_least) file.write(*t.flush());
  };
  std::map<store::Id, std::string> names;
  for (const auto& l : leaderboards) names[l.id] = l.name;
  LeaderboardGpuCounts per_gpu;
  ScoreHistory scores;
  if (!ids.empty()) {
    detail::ProgressBar bar(progress, by_submission ? "writing submissions" : "writing runs",
                            total);
    std::size_t next_kept = 0;
    store.for_each_submission_record(
        ids, store::Store::RecordCode::with, [&](const store::SubmissionRecord& r) {
          bar.advance();
          if (r.submission.id > last_id) return;
          if (by_submission) {
            while (next_kept < kept.size() && kept[next_kept] < r.submission.id) ++next_kept;
            if (next_kept == kept.size() || kept[next_kept] != r.submission.id) return;
            const SubmissionRow row = submission_row(r, exported_ids);
            append(all, row, r.code, users);
            ++counts.submissions;
            auto& n = per_gpu[{row.problem_name, row.runner}];
            ++n.first;
            if (row.score) {
              scores.add(row.problem_name, row.runner, row.submission_id, row.time, *row.score);
            }
            if (row.passed) {
              append(successful, row, r.code, users);
              ++counts.successful_submissions;
              ++n.second;
            }
          } else {
            for (const auto& run : r.runs) {
              if (run.secret) continue;  // secret runs stay private, as in the published release
              append_run(all, r, run, users, exported_ids);
              ++counts.submissions;
              auto& n = per_gpu[{names[r.submission.leaderboard_id], run.runner}];
              ++n.first;
              if (run.passed && run.mode == "leaderboard" && run.score) {
                scores.add(names[r.submission.leaderboard_id], run.runner,
                           exported_ids.number(store::SourceKind::submission, r.submission.id),
                           micros(r.submission.created_at), *run.score);
              }
              if (!run.passed) continue;
              append_run(successful, r, run, users, exported_ids);
              ++counts.successful_submissions;
              ++n.second;
            }
          }
          flush(all, all_file, kBatchRows);
          flush(successful, successful_file, kBatchRows);
        });
  }
  flush(all, all_file, 0);
  flush(successful, successful_file, 0);
  std::vector<detail::CardConfig> configs(3);
  configs[0] = {"submissions",
                "data/submissions",
                all.schema(),
                counts.submissions,
                static_cast<std::int64_t>(all_file.close().size()),
                submission_docs()};
  configs[1] = {"successful_submissions",
                "data/successful_submissions",
                successful.schema(),
                counts.successful_submissions,
                static_cast<std::int64_t>(successful_file.close().size()),
                submission_docs()};
  const auto [leaderboard_schema, leaderboard_shards] = write_leaderboards(
      leaderboards, exported_ids, data / "leaderboards", options.max_shard_bytes);
  configs[2] = {"leaderboards",      "data/leaderboards", leaderboard_schema,
                counts.leaderboards, leaderboard_shards,  leaderboard_docs()};
  detail::write_card(kernelbot_card(options, std::move(configs), per_gpu, scores), options.out_dir);
  return counts;
}

ImportCounts import_kernelbot(store::Store& store, std::span<const fs::path> files, bool progress) {
  const bool show = detail::want_progress(progress);
  ImportCounts counts;
  // Read and check everything first: a bad file stops the import before anything is stored. The
  // code of submission-level files is checked for type here and read below.
  std::vector<std::unique_ptr<detail::ParquetFile>> parquet_files;
  std::vector<detail::ColumnReader> tables;
  std::vector<FileKind> kinds;
  for (const auto& file : files) {
    parquet_files.push_back(std::make_unique<detail::ParquetFile>(file));
    auto& parquet = *parquet_files.back();
    const auto schema = parquet.schema();
    kinds.push_back(kind_of(*schema, parquet.file()));
    if (kinds.back() == FileKind::submission_layout) {
      check_code_column(*schema, parquet.file());
      tables.emplace_back(parquet.read("code"), parquet.file());
    } else {
      tables.emplace_back(parquet.read(), parquet.file());
    }
  }
  std::vector<LeaderboardRow> leaderboard_rows;
  std::map<std::int64_t, std::string> names_by_id;
  for (std::size_t f = 0; f < tables.size(); ++f) {
    if (kinds[f] != FileKind::leaderboards) continue;
    for (auto& row : read_leaderboards(tables[f])) {
      names_by_id[row.id] = row.name;
      leaderboard_rows.push_back(std::move(row));
    }
  }
  Pending pending;
  std::int64_t total_rows = 0;
  for (std::size_t f = 0; f < tables.size(); ++f) {
    if (kinds[f] != FileKind::leaderboards) total_rows += tables[f].rows();
  }
  std::vector<std::size_t> parquet_of_columns;  // per pending.columns: its file
  {
    detail::ProgressBar bar(show, "reading rows", total_rows);
    for (std::size_t f = 0; f < tables.size(); ++f) {
      if (kinds[f] == FileKind::submission_layout) {
        read_submission_layout(tables[f], pending, bar);
        parquet_of_columns.push_back(f);
      }
      if (kinds[f] == FileKind::run_layout) read_run_layout(tables[f], names_by_id, pending, bar);
    }
  }
  counts.rows = total_rows;
  tables.clear();  // the columns read stay alive in `pending`
  // Oldest first, so ids in the store follow submission time as in the source.
  std::stable_sort(pending.submissions.begin(), pending.submissions.end(),
                   [](const PendingSubmission& a, const PendingSubmission& b) {
                     return std::tie(a.time, a.origin) < std::tie(b.time, b.origin);
                   });
  // A file whose rows are stored in the file's order (published files are in time order) has
  // its code read batch by batch while they are stored; any other, whole, now.
  std::vector<bool> in_order(pending.columns.size(), true);
  {
    std::vector<std::int64_t> last(pending.columns.size(), -1);
    for (const auto& p : pending.submissions) {
      if (p.run_level >= 0) continue;
      if (p.row < last[p.file]) in_order[p.file] = false;
      last[p.file] = p.row;
    }
  }
  for (std::size_t k = 0; k < pending.columns.size(); ++k) {
    auto& parquet = *parquet_files[parquet_of_columns[k]];
    if (in_order[k]) {
      pending.columns[k].streamed_code =
          std::make_unique<detail::StreamedStrings>(parquet, "code", kCodeBatchRows);
    } else {
      pending.columns[k].code =
          detail::ColumnReader(parquet.read_only("code"), parquet.file()).strings("code");
    }
  }
  // Every leaderboard the files name: from leaderboards.parquet, else named only by the rows.
  // Those the store lacks are created in the import's transaction; all keep their source ids.
  std::vector<store::ImportedLeaderboard> leaderboards;
  std::set<std::string> described;  // by a leaderboards.parquet row, GPU types included
  for (const auto& row : leaderboard_rows) {
    if (!described.insert(row.name).second) continue;
    store::ImportedLeaderboard l;
    l.name = row.name;
    l.task_yaml = row.lang.empty() ? "" : "lang: " + row.lang + "\n";
    l.description = row.description;
    l.deadline = row.deadline;
    l.gpu_types = row.gpu_types;
    l.reference = row.reference;
    l.source_id = row.id;
    leaderboards.push_back(std::move(l));
  }
  for (std::size_t i = 0; i < pending.leaderboards.size(); ++i) {
    const auto& name = pending.leaderboards[i];
    if (described.contains(name)) continue;
    store::ImportedLeaderboard l;
    l.name = name;
    l.gpu_types = pending.gpu_types[i];
    l.source_id = pending.source_ids[i];
    leaderboards.push_back(std::move(l));
  }
  std::map<std::string, store::Id> leaderboard_ids;
  std::vector<store::Id> stored;  // filled by the store before the first call of the lambda
  std::vector<store::Id> ids;     // per pending.leaderboards
  detail::ProgressBar bar(show, "storing submissions",
                          static_cast<std::int64_t>(pending.submissions.size()));
  std::size_t next = 0;
  const auto outcome =
      store.import_submissions(leaderboards, stored, [&](store::ImportedSubmission& s) {
        if (ids.empty()) {
          for (std::size_t k = 0; k < leaderboards.size(); ++k) {
            leaderboard_ids[leaderboards[k].name] = stored.at(k);
          }
          for (const auto& name : pending.leaderboards) ids.push_back(leaderboard_ids.at(name));
        }
        if (next == pending.submissions.size()) return false;
        const auto& p = pending.submissions[next++];
        if (p.run_level >= 0) {
          s = std::move(pending.run_level[static_cast<std::size_t>(p.run_level)]);
        } else {
          fill_submission(pending.columns[p.file], p.row, s);
        }
        s.leaderboard_id = ids[p.leaderboard];
        bar.advance();
        return true;
      });
  counts.submissions_added = outcome.submissions_added;
  counts.leaderboards_added = outcome.leaderboards_added;
  return counts;
}

}  // namespace kj::data
