// kernelbot-data parquet: export in the published layouts, import of either layout.
#include <arrow/api.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "data/data.h"
#include "data/detail/arrow_io.h"
#include "data/detail/progress.h"
#include "data/detail/scoring.h"

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

// Column builders of one output table, appended to in schema order.
class TableBuilder {
 public:
  void add(const std::string& name, std::shared_ptr<arrow::DataType> type) {
    fields_.push_back(arrow::field(name, type));
    builders_.push_back(value_or_throw(arrow::MakeBuilder(type), "export"));
  }
  arrow::ArrayBuilder& operator[](std::size_t i) { return *builders_[i]; }
  void string(std::size_t i, std::string_view v) {
    check(static_cast<arrow::StringBuilder&>(*builders_[i]).Append(v), "export");
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
  std::shared_ptr<arrow::Table> finish() {
    arrow::ArrayVector arrays;
    for (auto& b : builders_) arrays.push_back(value_or_throw(b->Finish(), "export"));
    return arrow::Table::Make(arrow::schema(fields_), arrays);
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

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The user ids and names as written: the store's, or user-1..user-N in a random order.
class UserNames {
 public:
  explicit UserNames(bool anonymize) : anonymize_(anonymize) {}
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
  store::Id id(store::Id user) const { return anonymize_ ? anonymous_.at(user) : user; }
  std::string name(store::Id user) const {
    return anonymize_ ? "user-" + std::to_string(anonymous_.at(user)) : names_.at(user);
  }

 private:
  bool anonymize_;
  std::map<store::Id, std::string> names_;
  std::unordered_map<store::Id, store::Id> anonymous_;
};

struct SubmissionRow {
  store::Id submission_id = 0, leaderboard_id = 0, user_id = 0, code_id = 0;
  std::string problem_name, file_name, status, mode, runner, code;
  std::int64_t time = 0;
  std::optional<double> score;
  bool passed = false;
};

// kernelbot's status column: succeeded when the score counts, hacked, else our verdict (or the
// submission's state while it has none).
std::string status_of(const store::SubmissionRecord& r, const std::optional<double>& score) {
  if (r.submission.hacked) return "hacked";
  if (score) return "succeeded";
  if (!r.submission.verdict.empty()) return r.submission.verdict;
  return store::to_string(r.submission.status);
}

SubmissionRow submission_row(const store::SubmissionRecord& r) {
  SubmissionRow row;
  const auto& s = r.submission;
  row.submission_id = s.id;
  row.leaderboard_id = s.leaderboard_id;
  row.user_id = s.user_id;
  row.code_id = s.code_id;
  row.problem_name = s.leaderboard_name;
  row.file_name = s.file_name;
  row.mode = s.mode;
  row.runner = s.gpu_type;
  row.code = r.code;
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

// Fastest first (no score last), then the earliest.
bool better(const SubmissionRow& a, const SubmissionRow& b) {
  if (a.score.has_value() != b.score.has_value()) return a.score.has_value();
  if (a.score && *a.score != *b.score) return *a.score < *b.score;
  if (a.time != b.time) return a.time < b.time;
  return a.submission_id < b.submission_id;
}

TableBuilder submission_table() {
  TableBuilder t;
  t.add("submission_id", arrow::int64());
  t.add("leaderboard_id", arrow::int64());
  t.add("problem_name", arrow::utf8());
  t.add("user_id", arrow::utf8());
  t.add("user_name", arrow::utf8());
  t.add("code_id", arrow::int64());
  t.add("file_name", arrow::utf8());
  t.add("submission_time", utc_micros());
  t.add("status", arrow::utf8());
  t.add("score", arrow::float64());
  t.add("passed", arrow::boolean());
  t.add("mode", arrow::utf8());
  t.add("runner", arrow::utf8());
  t.add("code", arrow::utf8());
  return t;
}

void append(TableBuilder& t, const SubmissionRow& r, const UserNames& users) {
  t.integer(0, r.submission_id);
  t.integer(1, r.leaderboard_id);
  t.string(2, r.problem_name);
  t.string(3, std::to_string(users.id(r.user_id)));
  t.string(4, users.name(r.user_id));
  t.integer(5, r.code_id);
  t.string(6, r.file_name);
  t.time(7, r.time);
  t.string(8, r.status);
  t.number(9, r.score);
  t.boolean(10, r.passed);
  t.string(11, r.mode);
  t.string(12, r.runner);
  t.string(13, r.code);
}

TableBuilder run_table() {
  TableBuilder t;
  for (const char* name : {"submission_id", "leaderboard_id", "user_id"})
    t.add(name, arrow::int64());
  t.add("submission_time", utc_micros());
  t.add("file_name", arrow::utf8());
  t.add("code", arrow::utf8());
  t.add("code_id", arrow::int64());
  t.add("run_id", arrow::int64());
  t.add("run_start_time", utc_micros());
  t.add("run_end_time", utc_micros());
  t.add("run_mode", arrow::utf8());
  t.add("run_score", arrow::float64());
  t.add("run_passed", arrow::boolean());
  for (const char* name : {"run_result", "run_compilation", "run_meta", "run_system_info"}) {
    t.add(name, arrow::utf8());
  }
  return t;
}

// One public run with its submission. The AMD release has no column for the GPU: run_meta
// carries it, with the submission's mode and verdict, so that an import restores them.
void append_run(TableBuilder& t, const store::SubmissionRecord& r, const store::Run& run,
                const UserNames& users) {
  const auto& s = r.submission;
  t.integer(0, s.id);
  t.integer(1, s.leaderboard_id);
  t.integer(2, users.id(s.user_id));
  t.time(3, micros(s.created_at));
  t.string(4, s.file_name);
  t.string(5, r.code);
  t.integer(6, s.code_id);
  t.integer(7, run.id);
  t.time(8, micros(run.start_time));
  t.time(9, micros(run.end_time));
  t.string(10, run.mode);
  t.number(11, run.score);
  t.boolean(12, run.passed);
  t.string(13, run.result_json);
  t.string(14, run.compilation_json);
  t.string(15, nlohmann::json{{"runner", run.runner},
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

void write_leaderboards(const std::vector<store::Leaderboard>& leaderboards, const fs::path& out) {
  TableBuilder t;
  t.add("id", arrow::int64());
  t.add("name", arrow::utf8());
  t.add("deadline", utc_micros());
  t.add("lang", arrow::utf8());
  t.add("description", arrow::utf8());
  t.add("reference", arrow::utf8());
  t.add("gpu_types", arrow::list(arrow::utf8()));
  for (const auto& l : leaderboards) {
    t.integer(0, l.id);
    t.string(1, l.name);
    t.optional_time(2, l.deadline);
    t.string(3, task_lang(l.task_yaml));
    t.string(4, l.description);
    t.string(5, l.problem_dir.empty()
                    ? ""
                    : read_file_or_empty(fs::path(l.problem_dir) / "reference.py"));
    t.strings(6, l.gpu_types);
  }
  detail::write_parquet(*t.finish(), out);
}

// ---- import -----------------------------------------------------------------------------------

struct LeaderboardRow {
  std::int64_t id = 0;
  std::string name, lang, description;
  std::optional<store::Time> deadline;
  std::vector<std::string> gpu_types;
};

// The submissions of all files, keyed by their origin so each one is imported once.
struct Pending {
  std::vector<store::ImportedSubmission> submissions;
  std::vector<std::string> leaderboard_names;  // per submission, resolved to ids at the end
  std::vector<std::pair<std::int64_t, std::int64_t>> order;  // (time, origin id) per submission
};

std::vector<LeaderboardRow> read_leaderboards(const detail::ColumnReader& c) {
  auto id = c.integers("id");
  auto name = c.strings("name");
  auto deadline = c.timestamps("deadline");
  auto lang = c.strings("lang");
  auto description = c.strings("description");
  c.strings("reference");
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
  auto submission_id = c.integers("submission_id");
  c.integers("leaderboard_id");
  auto problem_name = c.strings("problem_name");
  auto user_id = c.strings("user_id");
  auto user_name = c.strings("user_name");
  c.integers("code_id");
  auto file_name = c.strings("file_name");
  auto time = c.timestamps("submission_time");
  auto status = c.strings("status");
  auto score = c.doubles("score");
  auto passed = c.booleans("passed");
  auto mode = c.strings("mode");
  auto runner = c.strings("runner");
  auto code = c.strings("code");
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    store::ImportedSubmission s;
    s.user_name = detail::string_at(*user_name, i);
    if (s.user_name.empty()) s.user_name = "user-" + std::string(detail::string_at(*user_id, i));
    s.file_name = detail::string_at(*file_name, i);
    s.code = detail::string_at(*code, i);
    s.gpu_type = detail::string_at(*runner, i);
    s.mode = detail::string_at(*mode, i);
    if (time->IsNull(i)) {
      throw DataError(c.file() + ": row " + std::to_string(i) + " has no submission_time");
    }
    s.created_at = from_micros(detail::micros_at(*time, i));
    const auto st = detail::string_at(*status, i);
    s.verdict = verdict_from_status(st);
    s.hacked = st == "hacked";
    if (!score->IsNull(i)) s.score = score->Value(i);
    store::NewRun run;
    run.mode = s.mode;
    run.runner = s.gpu_type;
    run.score = s.score;
    run.passed = !passed->IsNull(i) && passed->Value(i);
    run.start_time = run.end_time = s.created_at;
    s.runs.push_back(std::move(run));
    pending.order.emplace_back(micros(s.created_at), detail::integer_at(*submission_id, i));
    pending.leaderboard_names.emplace_back(detail::string_at(*problem_name, i));
    pending.submissions.push_back(std::move(s));
    bar.advance();
  }
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
  c.integers("code_id");
  c.integers("run_id");
  auto start = c.timestamps("run_start_time");
  auto end = c.timestamps("run_end_time");
  auto mode = c.strings("run_mode");
  auto score = c.doubles("run_score");
  auto passed = c.booleans("run_passed");
  auto result = c.strings("run_result");
  auto compilation = c.strings("run_compilation");
  auto meta = c.strings("run_meta");
  auto system = c.strings("run_system_info");
  std::map<std::int64_t, std::size_t> by_origin;  // submission_id -> index in pending
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
    for (auto* column : {&result, &compilation, &system}) {
      const auto text = detail::string_at(**column, i);
      if (!text.empty() && !nlohmann::json::accept(text)) {
        throw DataError(c.file() + ": row " + std::to_string(i) + ": a run_* column is not JSON");
      }
    }
    auto [it, inserted] = by_origin.emplace(origin, pending.submissions.size());
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
      pending.order.emplace_back(micros(s.created_at), origin);
      pending.leaderboard_names.push_back(lb_name->second);
      pending.submissions.push_back(std::move(s));
    }
    auto& s = pending.submissions[it->second];
    store::NewRun run;
    run.mode = detail::string_at(*mode, i);
    run.runner = meta_json.value("runner", s.gpu_type);
    if (!score->IsNull(i)) run.score = score->Value(i);
    run.passed = !passed->IsNull(i) && passed->Value(i);
    run.result_json = json_or_empty_object(detail::string_at(*result, i));
    run.compilation_json = json_or_empty_object(detail::string_at(*compilation, i));
    run.system_json = json_or_empty_object(detail::string_at(*system, i));
    run.start_time = start->IsNull(i) ? s.created_at : from_micros(detail::micros_at(*start, i));
    run.end_time = end->IsNull(i) ? run.start_time : from_micros(detail::micros_at(*end, i));
    s.runs.push_back(std::move(run));
    bar.advance();
  }
  // Files of the AMD release carry no GPU, mode or verdict: taken from the runs.
  for (const auto& [origin, index] : by_origin) {
    auto& s = pending.submissions[index];
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
}

enum class FileKind { leaderboards, submission_layout, run_layout };

FileKind kind_of(const detail::ColumnReader& c) {
  if (c.has("run_id")) return FileKind::run_layout;
  if (c.has("problem_name")) return FileKind::submission_layout;
  if (c.has("gpu_types")) return FileKind::leaderboards;
  throw DataError(c.file() +
                  ": not a kernelbot-data file: it has no column run_id (run-level submissions), "
                  "problem_name (submission-level submissions) or gpu_types (leaderboards)");
}

}  // namespace

ExportCounts export_kernelbot(store::Store& store, const KernelbotExport& options) {
  const auto leaderboards = selected_leaderboards(store, options);
  std::vector<store::Id> ids;
  for (const auto& l : leaderboards) ids.push_back(l.id);
  fs::create_directories(options.out_dir);
  ExportCounts counts;
  counts.leaderboards = static_cast<std::int64_t>(leaderboards.size());
  UserNames users(options.anonymize);
  const bool progress = detail::want_progress(options.progress);
  if (options.layout == KernelbotLayout::submission) {
    std::vector<SubmissionRow> rows;
    std::map<std::tuple<store::Id, store::Id, store::Id, std::string>, std::size_t> best;
    {
      detail::ProgressBar bar(progress, "reading submissions", 0);
      if (!ids.empty()) {
        store.for_each_submission_record(ids, [&](const store::SubmissionRecord& r) {
          users.see(r.submission.user_id, r.submission.user_name);
          SubmissionRow row = submission_row(r);
          auto key = std::make_tuple(row.leaderboard_id, row.user_id, row.code_id, row.runner);
          auto [it, inserted] = best.emplace(key, rows.size());
          if (!inserted) {
            if (!better(row, rows[it->second])) return;
            rows[it->second].submission_id = 0;  // replaced
            it->second = rows.size();
          }
          rows.push_back(std::move(row));
          bar.advance();
        });
      }
    }
    users.finish();
    TableBuilder all = submission_table(), successful = submission_table();
    detail::ProgressBar bar(progress, "writing submissions",
                            static_cast<std::int64_t>(rows.size()));
    for (const auto& row : rows) {
      bar.advance();
      if (row.submission_id == 0) continue;
      append(all, row, users);
      ++counts.submissions;
      if (!row.passed) continue;
      append(successful, row, users);
      ++counts.successful_submissions;
    }
    rows.clear();
    detail::write_parquet(*all.finish(), options.out_dir / "submissions.parquet");
    detail::write_parquet(*successful.finish(), options.out_dir / "successful_submissions.parquet");
  } else {
    std::vector<store::SubmissionRecord> records;
    {
      detail::ProgressBar bar(progress, "reading submissions", 0);
      if (!ids.empty()) {
        store.for_each_submission_record(ids, [&](const store::SubmissionRecord& r) {
          users.see(r.submission.user_id, r.submission.user_name);
          records.push_back(r);
          bar.advance();
        });
      }
    }
    users.finish();
    TableBuilder all = run_table(), successful = run_table();
    detail::ProgressBar bar(progress, "writing runs", static_cast<std::int64_t>(records.size()));
    for (const auto& r : records) {
      for (const auto& run : r.runs) {
        if (run.secret) continue;  // secret runs stay private, as in the published release
        append_run(all, r, run, users);
        ++counts.submissions;
        if (!run.passed) continue;
        append_run(successful, r, run, users);
        ++counts.successful_submissions;
      }
      bar.advance();
    }
    records.clear();
    detail::write_parquet(*all.finish(), options.out_dir / "submissions.parquet");
    detail::write_parquet(*successful.finish(), options.out_dir / "successful_submissions.parquet");
  }
  write_leaderboards(leaderboards, options.out_dir / "leaderboards.parquet");
  return counts;
}

ImportCounts import_kernelbot(store::Store& store, std::span<const fs::path> files, bool progress) {
  const bool show = detail::want_progress(progress);
  ImportCounts counts;
  // Read and check everything first: a bad file stops the import before anything is stored.
  std::vector<detail::ColumnReader> tables;
  std::vector<FileKind> kinds;
  for (const auto& file : files) {
    tables.emplace_back(detail::read_parquet(file), file.string());
    kinds.push_back(kind_of(tables.back()));
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
  {
    detail::ProgressBar bar(show, "reading rows", total_rows);
    for (std::size_t f = 0; f < tables.size(); ++f) {
      if (kinds[f] == FileKind::submission_layout) read_submission_layout(tables[f], pending, bar);
      if (kinds[f] == FileKind::run_layout) read_run_layout(tables[f], names_by_id, pending, bar);
    }
  }
  counts.rows = total_rows;
  tables.clear();
  for (std::size_t i = 0; i < pending.submissions.size(); ++i) {
    const auto& s = pending.submissions[i];
    for (const auto* field : {&s.user_name, &s.file_name, &s.gpu_type, &s.mode}) {
      if (field->empty()) {
        throw DataError("submission " + std::to_string(pending.order[i].second) + " on '" +
                        pending.leaderboard_names[i] +
                        "' lacks a user name, file name, GPU or mode");
      }
    }
  }
  // Leaderboards the store lacks: from leaderboards.parquet, else named only by the rows.
  std::map<std::string, store::Id> leaderboard_ids;
  for (const auto& l : store.list_leaderboards(true)) leaderboard_ids[l.name] = l.id;
  std::map<std::string, store::NewLeaderboard> missing;
  std::set<std::string> described;  // by a leaderboards.parquet row, GPU types included
  for (const auto& row : leaderboard_rows) {
    if (leaderboard_ids.contains(row.name)) continue;
    store::NewLeaderboard l;
    l.name = row.name;
    l.task_yaml = row.lang.empty() ? "" : "lang: " + row.lang + "\n";
    l.description = row.description;
    l.deadline = row.deadline;
    l.gpu_types = row.gpu_types;
    missing[row.name] = l;
    described.insert(row.name);
  }
  for (std::size_t i = 0; i < pending.submissions.size(); ++i) {
    const auto& name = pending.leaderboard_names[i];
    if (leaderboard_ids.contains(name) || described.contains(name)) continue;
    auto& l = missing[name];
    l.name = name;
    const auto& gpu = pending.submissions[i].gpu_type;
    if (std::find(l.gpu_types.begin(), l.gpu_types.end(), gpu) == l.gpu_types.end()) {
      l.gpu_types.push_back(gpu);
    }
  }
  for (auto& [name, l] : missing) {
    leaderboard_ids[name] = store.create_leaderboard(l).id;
    ++counts.leaderboards_added;
  }
  for (std::size_t i = 0; i < pending.submissions.size(); ++i) {
    pending.submissions[i].leaderboard_id = leaderboard_ids.at(pending.leaderboard_names[i]);
  }
  // Oldest first, so ids in the store follow submission time as in the source.
  std::vector<std::size_t> order(pending.submissions.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return pending.order[a] < pending.order[b]; });
  std::vector<store::ImportedSubmission> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(pending.submissions[i]));
  if (show) std::fprintf(stderr, "storing %zu submissions\n", sorted.size());
  counts.submissions_added = store.import_submissions(sorted);
  return counts;
}

}  // namespace kj::data
