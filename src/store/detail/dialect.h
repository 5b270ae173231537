// What differs between the databases behind the one SQL store (sql_store.cpp): connecting, the
// schema's spelling, the migration lock, claiming and completing a job (one statement with FOR
// UPDATE SKIP LOCKED on PostgreSQL, statements under SQLite's write lock), row locks, wake-ups
// (LISTEN/NOTIFY or an in-process signal) and the settings of bulk reads and writes. Also the
// column lists and row readers the store and the dialects share.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/detail/schema.h"
#include "store/detail/sql.h"
#include "store/store.h"

namespace kj::store::detail {

struct ClaimRequest {
  std::string_view worker_id;
  std::span<const std::string> gpu_types;
  int max_gpus = 1;
  Time now;
  Time lease_expires_at;
};

class Dialect {
 public:
  virtual ~Dialect() = default;
  // The database for messages (a path, or a URL without its password).
  virtual const std::string& name() const = 0;
  // The connection for the next operation, connected again when it broke.
  virtual SqlConnection& connection() = 0;
  virtual const SchemaSpelling& spelling() const = 0;
  // Inside the migration's transaction: openers racing on a new database migrate it once (none
  // needed where the transaction holds the database's write lock).
  virtual void lock_for_migration(SqlConnection&) {}

  // claim_next_job and complete as one statement each (one round trip), where the database can
  // (PostgreSQL); false: the store runs its statements in a transaction instead.
  virtual bool one_statement_queue() const { return false; }
  // The oldest queued job the request may take, leased; none when there is none or the worker
  // was asked to drain.
  virtual std::optional<ClaimedJob> claim(SqlConnection& db, const ClaimRequest& request);
  // Store::complete: false (nothing recorded) unless the lease is held.
  virtual bool complete(SqlConnection& db, const JobLease& lease, Time now,
                        const JobOutcome& outcome);

  // An expression: the number under a top-level `key` of the JSON text in `column`; NULL when
  // the key is missing or holds anything but a number. `key` is a constant of the store's.
  virtual std::string json_number(std::string_view column, std::string_view key) const = 0;

  // Appended to a SELECT of rows the transaction goes on to change: " FOR UPDATE", or nothing
  // where the transaction holds the database's write lock.
  virtual std::string_view lock_rows() const { return ""; }
  // The same, skipping rows another transaction holds.
  virtual std::string_view lock_rows_skip_locked() const { return ""; }
  // Several servers and worker hosts share the database: a starting server releases only the
  // running jobs whose leases expired.
  virtual bool shared_by_servers() const { return false; }

  // Wake-ups: a job for gpu_type was queued in the current transaction; the operation that
  // queued it committed; Store::wait_for_jobs.
  virtual void job_queued(SqlConnection& db, std::string_view gpu_type) = 0;
  virtual void committed() {}
  virtual bool wait_for_jobs(std::span<const std::string> gpu_types,
                             std::chrono::milliseconds timeout) = 0;

  // The SQL expression of a new id for `table`'s key in an INSERT that names the id (imports
  // insert rows under their source ids where free): NULL makes SQLite pick the rowid; the
  // identity's sequence on PostgreSQL.
  virtual std::string next_id(std::string_view table) const = 0;
  // After rows of `table` were inserted under ids of the caller's choosing: the key's sequence
  // goes past them (PostgreSQL; SQLite picks a new rowid after the largest).
  virtual void ids_inserted(SqlConnection&, std::string_view /*table*/) {}
  // The id next_id() gave the row just inserted.
  virtual Id last_id(SqlConnection& db) = 0;

  // Settings held while an export reads or an import writes many rows (nullptr: none).
  virtual std::shared_ptr<void> bulk_read(SqlConnection&) { return nullptr; }
  virtual std::shared_ptr<void> bulk_write(SqlConnection&) { return nullptr; }
};

inline std::optional<ClaimedJob> Dialect::claim(SqlConnection&, const ClaimRequest&) {
  throw std::logic_error("this database claims in a transaction");
}
inline bool Dialect::complete(SqlConnection&, const JobLease&, Time, const JobOutcome&) {
  throw std::logic_error("this database completes in a transaction");
}

std::unique_ptr<Dialect> sqlite_dialect(const std::string& path, const StoreOptions& options);
std::unique_ptr<Dialect> postgres_dialect(const std::string& url, const StoreOptions& options);
// A connection to the PostgreSQL database at url (what the dialect connects with).
std::unique_ptr<SqlConnection> postgres_connection(const std::string& url);

// Columns read by read_submission, read_job and read_run, in their order.
inline constexpr std::string_view kSubmissionFields =
    "s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id, c.sha256, "
    "s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked";
inline constexpr std::string_view kSubmissionJoins =
    " FROM submissions s JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id = "
    "s.leaderboard_id JOIN code_files c ON c.id = s.code_id ";
inline constexpr std::string_view kJobFields =
    "id, submission_id, gpu_type, state, attempts, lease_owner, lease_expires_at, error, "
    "created_at, updated_at";
inline constexpr int kJobFieldCount = 10;
inline constexpr int kSubmissionFieldCount = 15;
inline constexpr std::string_view kRunFields =
    "id, submission_id, job_id, mode, runner, secret, score, passed, compilation_json, "
    "result_json, system_json, start_time, end_time, meta_json";
// The lease check of a held job ($1 job, $2 worker, $3 attempt).
inline constexpr std::string_view kHeldJob =
    " WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3";

// A JobState or SubmissionStatus from its name.
template <typename State>
State state_from_text(const std::string& text) {
  for (const State state : {State::queued, State::running, State::done}) {
    if (to_string(state) == text) return state;
  }
  return State::failed;
}

// kSubmissionFields from column `first` on.
inline Submission read_submission(const SqlRows& row, int first = 0) {
  const int f = first;
  return Submission{row.int64(f),          row.int64(f + 1),
                    row.text(f + 2),       row.int64(f + 3),
                    row.text(f + 4),       row.text(f + 5),
                    row.int64(f + 6),      row.text(f + 7),
                    row.text(f + 8),       row.text(f + 9),
                    row.time(f + 10),      state_from_text<SubmissionStatus>(row.text(f + 11)),
                    row.text(f + 12),      row.optional_real(f + 13),
                    row.int64(f + 14) != 0};
}

inline Job read_job(const SqlRows& row) {
  const auto state = state_from_text<JobState>(row.text(3));
  const auto attempts = static_cast<int>(row.int64(4));
  return Job{row.int64(0), row.int64(1),         row.text(2), state,       attempts,
             row.text(5),  row.optional_time(6), row.text(7), row.time(8), row.time(9)};
}

inline Run read_run(const SqlRows& row) {
  return Run{{row.text(3),
              row.text(4),
              row.optional_real(6),
              row.int64(7) != 0,
              row.int64(5) != 0,
              row.text(8),
              row.text(9),
              row.text(10),
              row.time(11),
              row.time(12),
              row.text(13),
              {}},
             row.int64(0),
             row.int64(1),
             row.int64(2)};
}

// A claimed job's row: kJobFields, kSubmissionFields, then the code, problem directory, task
// snapshot and secret seed.
inline constexpr std::string_view kClaimedExtraFields =
    "c.code, l.problem_dir, l.task_yaml, l.secret_seed";
inline ClaimedJob read_claimed(const SqlRows& row, std::string_view worker_id) {
  ClaimedJob claimed;
  claimed.job = read_job(row);
  claimed.lease = JobLease{claimed.job.id, std::string(worker_id), claimed.job.attempts};
  constexpr int first = kJobFieldCount;
  claimed.submission = read_submission(row, first);
  claimed.submission.status = SubmissionStatus::running;
  constexpr int extra = first + kSubmissionFieldCount;
  row.bytes_into(extra, claimed.code);
  claimed.problem_dir = row.text(extra + 1);
  claimed.task_yaml = row.text(extra + 2);
  claimed.secret_seed = row.int64(extra + 3);
  return claimed;
}

}  // namespace kj::store::detail
