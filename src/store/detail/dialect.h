// What differs between the databases behind the one SQL store (store.cpp): connecting, the
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

  // The oldest queued job the request may take, leased, its submission running and the worker
  // busy; none when there is none or the worker was asked to drain. One transaction.
  virtual std::optional<ClaimedJob> claim(SqlConnection& db, const ClaimRequest& request) = 0;
  // Store::complete in one statement (one round trip) where the database can: false (nothing
  // recorded) unless the lease is held; nullopt: the store records it in a transaction.
  virtual std::optional<bool> complete(SqlConnection&, const JobLease&, Time, const JobOutcome&) {
    return std::nullopt;
  }

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

std::unique_ptr<Dialect> sqlite_dialect(const std::string& path, const StoreOptions& options);
std::unique_ptr<Dialect> postgres_dialect(const std::string& url, const StoreOptions& options);
// A connection to the PostgreSQL database at url (what the dialect connects with).
std::unique_ptr<SqlConnection> postgres_connection(const std::string& url);

// The columns of a submission (with its user's, leaderboard's and code's), a job and a run, in
// the order their readers below read them.
inline constexpr std::string_view kSubmissionFields =
    "s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id, c.sha256, "
    "s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked";
inline constexpr std::string_view kSubmissionJoins =
    " FROM submissions s JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id = "
    "s.leaderboard_id JOIN code_files c ON c.id = s.code_id ";
inline constexpr std::string_view kJobFields =
    "id, submission_id, gpu_type, state, attempts, lease_owner, lease_expires_at, error, "
    "created_at, updated_at";
inline constexpr std::string_view kRunFields =
    "id, submission_id, job_id, mode, runner, secret, score, passed, compilation_json, "
    "result_json, system_json, start_time, end_time, meta_json";
// The lease check of a held job ($1 job, $2 worker, $3 attempt).
inline constexpr std::string_view kHeldJob =
    " WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3";

inline RowReader& operator>>(RowReader& r, Submission& s) {
  return r >> s.id >> s.user_id >> s.user_name >> s.leaderboard_id >> s.leaderboard_name >>
         s.file_name >> s.code_id >> s.code_sha256 >> s.gpu_type >> s.mode >> s.created_at >>
         s.status >> s.verdict >> s.score >> s.hacked;
}
inline RowReader& operator>>(RowReader& r, Job& j) {
  return r >> j.id >> j.submission_id >> j.gpu_type >> j.state >> j.attempts >> j.lease_owner >>
         j.lease_expires_at >> j.error >> j.created_at >> j.updated_at;
}
inline RowReader& operator>>(RowReader& r, Run& run) {
  return r >> run.id >> run.submission_id >> run.job_id >> run.mode >> run.runner >> run.secret >>
         run.score >> run.passed >> run.compilation_json >> run.result_json >> run.system_json >>
         run.start_time >> run.end_time >> run.meta_json;
}

// The SELECT of a claimed job's row (read_claimed) from `job`, one job's kJobFields: those,
// kSubmissionFields, then the code, problem directory, task snapshot and secret seed.
inline std::string select_claimed(std::string_view job) {
  return "SELECT j.*, " + std::string(kSubmissionFields) +
         ", c.code, l.problem_dir, l.task_yaml, l.secret_seed" + std::string(kSubmissionJoins) +
         "JOIN " + std::string(job) + " j ON j.submission_id = s.id";
}
inline ClaimedJob read_claimed(const SqlRows& row, std::string_view worker_id) {
  ClaimedJob claimed;
  RowReader reader(row);
  reader >> claimed.job >> claimed.submission;
  reader.bytes_into(claimed.code) >> claimed.problem_dir >> claimed.task_yaml >>
      claimed.secret_seed;
  claimed.lease = JobLease{claimed.job.id, std::string(worker_id), claimed.job.attempts};
  claimed.submission.status = SubmissionStatus::running;
  return claimed;
}

}  // namespace kj::store::detail
