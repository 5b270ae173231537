// Datasets out of and into the store: the kernelbot-data parquet layouts (export, import), the
// boostrap_triton rows (PyTorch reference, Triton submission, verdict, timings), and the analysis
// commands (top contestants, one author's progression, a summary) with text, JSON and SVG output.
//
// Parquet goes through Apache Arrow's C++ library as PyPI's pyarrow wheel ships it. So that `kj`
// itself stays free of it (it must start on a GPU host with glibc only), the parquet work runs in
// a second executable, kj-parquet, built beside kj and linked against the harness venv's pyarrow:
// the functions marked [kj-parquet] are defined only in that executable; `kj` reaches them by
// running it (run_parquet_tool, write_boostrap_parquet).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/store.h"

namespace kj::data {

// Bad input (a foreign or corrupt parquet, an unknown leaderboard or user, a refused export).
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- boostrap_triton rows -------------------------------------------------------------------

// The columns of a boostrap row, in file order: the 14 of tcapelle/boostrap_triton, then ours.
// Types: every column is a string except pt_code_runs (bool), messages and prompt
// (list<struct<content: string, role: string>>), max_error and speedup (float64, null when not
// measured) and timings (list<struct<spec: string, median_ns: float64,
// reference_median_ns: float64>>, one per benchmark case; a median is null when not timed).
inline constexpr const char* kBoostrapColumns[] = {
    "pt_code",    "triton_code", "pt_entrypoint", "triton_entrypoint",
    "reasoning",  "messages",    "tests_code",    "pt_code_runs",
    "stdout",     "stderr",      "stop_reason",   "prompt",
    "entrypoint", "tests",       "verdict",       "max_error",
    "speedup",    "timings"};

// Writes rows (each an object with exactly kBoostrapColumns as keys) as one parquet file.
// Throws DataError naming the row and column of a missing, extra or mistyped value; nothing is
// written then. Runs kj-parquet (beside the running executable, or $KJ_PARQUET).
void write_boostrap_parquet(const std::vector<nlohmann::json>& rows,
                            const std::filesystem::path& out);

// The boostrap row of a row a bootstrap run recorded (rows.jsonl): its kBoostrapColumns, a
// missing or null string column as "", a missing list as [], pt_code_runs false when absent.
nlohmann::json boostrap_columns(const nlohmann::json& recorded);

// ---- running kj-parquet ---------------------------------------------------------------------

// kj-parquet beside the running executable, or $KJ_PARQUET; DataError when missing.
std::filesystem::path parquet_tool_path();
// Runs kj-parquet with `args` (stdin, stdout and stderr inherited) and returns its exit status.
int run_parquet_tool(const std::vector<std::string>& args);

// ---- kernelbot-data export and import [kj-parquet] ---------------------------------------------

// submission: one row per submission (the newer per-competition files: submission_id,
// leaderboard_id, problem_name, user_id, user_name, code_id, file_name, submission_time, status,
// score, passed, mode, runner, code), deduplicated to the fastest per (leaderboard, user, code,
// GPU). run: one row per public run (the AMD release: submission_id, leaderboard_id, user_id,
// submission_time, file_name, code, code_id, run_id, run_start_time, run_end_time, run_mode,
// run_score, run_passed, run_result, run_compilation, run_meta, run_system_info).
enum class KernelbotLayout { submission, run };

// Exports are laid out as Hugging Face hub datasets: README.md (the dataset card) and
// data/<config>/train-00000-of-0000N.parquet, a shard holding at most about this much.
inline constexpr std::int64_t kMaxShardBytes = 500LL * 1024 * 1024;

struct KernelbotExport {
  std::filesystem::path out_dir;
  std::vector<std::string> leaderboards;  // empty: every leaderboard
  KernelbotLayout layout = KernelbotLayout::submission;
  bool anonymize = false;  // users become user-1..user-N (a random permutation) with ids 1..N
  bool force = false;      // export leaderboards whose deadline has not passed
  bool progress = false;
  std::string license = "other";                  // the card's license (a hub license id)
  std::int64_t max_shard_bytes = kMaxShardBytes;  // a new data file once one holds this much
};

struct ExportCounts {
  std::int64_t submissions = 0;             // rows of submissions.parquet
  std::int64_t successful_submissions = 0;  // rows of successful_submissions.parquet
  std::int64_t leaderboards = 0;
};

// [kj-parquet] Writes the configs submissions, successful_submissions and leaderboards under
// out_dir/data/ and the dataset card out_dir/README.md.
ExportCounts export_kernelbot(store::Store& store, const KernelbotExport& options);

struct ImportCounts {
  std::int64_t rows = 0;                // rows read
  std::int64_t submissions_added = 0;   // new submissions (0 when imported before)
  std::int64_t leaderboards_added = 0;  // leaderboards created from leaderboards.parquet
};

// [kj-parquet] Loads kernelbot-data files (either layout; a leaderboards.parquet among them
// creates the leaderboards the store lacks). All files are read and checked before anything is
// stored, and everything is stored in one transaction: a bad file imports nothing.
ImportCounts import_kernelbot(store::Store& store, std::span<const std::filesystem::path> files,
                              bool progress);

struct BoostrapExport {
  std::filesystem::path out_dir;
  std::string license = "other";
  std::int64_t max_shard_bytes = kMaxShardBytes;
  bool progress = false;
};

// [kj-parquet] Judged submissions to Triton leaderboards as boostrap rows (pt_code: the
// problem's reference.py; triton_code: the submission; tests_code: the leaderboard's task.yml;
// verdict, max_error, speedup, timings from its latest run; no model wrote them, so reasoning,
// messages and prompt are empty), written as data/train-* with a dataset card. Returns the
// number of rows.
std::int64_t export_boostrap(store::Store& store, const BoostrapExport& options);

// [kj-parquet] The rows a bootstrap run recorded in `run_dir`/rows.jsonl (prompt, messages,
// reasoning, stop_reason and the tests each row was judged with, as the run kept them) as
// above. DataError when the file is missing or a line is not a row.
std::int64_t export_boostrap_run(const std::filesystem::path& run_dir,
                                 const BoostrapExport& options);

// ---- analysis -------------------------------------------------------------------------------

// A score counts when it is a public leaderboard-mode run that passed, of a submission not
// marked hacked and with no failed secret run (the store's ranking rule). Scores are seconds.
struct TopEntry {
  int rank = 0;  // equal scores share a rank
  std::string user_name;
  double best_score = 0;
  store::Id best_submission_id = 0;
  std::string gpu_type;
  int submissions = 0;  // the user's submissions on the leaderboard (and GPU type, when given)
};
std::vector<TopEntry> top_contestants(store::Store& store, const std::string& leaderboard,
                                      const std::string& gpu_type, int limit);

struct ProgressionPoint {
  store::Id submission_id = 0;
  store::Time time;
  std::string gpu_type;
  std::string mode;
  std::string verdict;
  std::optional<double> score;        // the submission's counted score
  std::optional<double> best_so_far;  // best counted score up to and including this one
};
std::vector<ProgressionPoint> author_progression(store::Store& store, const std::string& user,
                                                 const std::string& leaderboard);

struct LeaderboardSummary {
  std::string name;
  std::int64_t submissions = 0;
  std::int64_t users = 0;
  std::int64_t scored = 0;  // submissions with a counted score
  std::optional<double> best_score;
  std::optional<store::Time> first, last;  // submission times
};
std::vector<LeaderboardSummary> summary(store::Store& store);

nlohmann::json to_json(const std::vector<TopEntry>& entries);
nlohmann::json to_json(const std::vector<ProgressionPoint>& points);
nlohmann::json to_json(const std::vector<LeaderboardSummary>& rows);
std::string render_text(const std::vector<TopEntry>& entries);
std::string render_text(const std::vector<ProgressionPoint>& points);
std::string render_text(const std::vector<LeaderboardSummary>& rows);
// Score over time (dots) and the best-so-far line, as a standalone SVG document.
std::string progression_svg(const std::vector<ProgressionPoint>& points, const std::string& title);

// ---- rejudging ------------------------------------------------------------------------------

// Queues the best submission of each of the top `n` users of a leaderboard again, for
// `gpu_type` (this machine's device type). Returns the submission ids queued.
std::vector<store::Id> queue_rejudge(store::Store& store, const std::string& leaderboard, int n,
                                     const std::string& gpu_type);

}  // namespace kj::data
