// The store over either database: every operation one transaction, each query written once
// against the SQL driver (detail/sql.h); what differs between SQLite and PostgreSQL is the
// dialect's (detail/dialect.h).
#include "store/store.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "store/detail/dialect.h"

namespace kj::store {

StoreError::StoreError(std::string operation, const std::string& message)
    : std::runtime_error(operation + ": " + message), operation_(std::move(operation)) {}

std::string to_string(Visibility visibility) {
  return visibility == Visibility::listed ? "public" : "hidden";
}

std::optional<Visibility> visibility_from_string(std::string_view name) {
  if (name == "public") return Visibility::listed;
  if (name == "hidden") return Visibility::hidden;
  return std::nullopt;
}

// Both enums' names, in their order.
constexpr const char* kStateNames[] = {"queued", "running", "done", "failed"};
std::string to_string(SubmissionStatus status) { return kStateNames[static_cast<int>(status)]; }
std::string to_string(JobState state) { return kStateNames[static_cast<int>(state)]; }

int latest_schema_version() { return detail::migrations().back().version; }

std::string to_string(SourceKind kind) {
  constexpr const char* kNames[] = {"leaderboard", "user", "code", "submission", "run"};
  return kNames[static_cast<int>(kind)];
}

namespace detail {

// The rows of the users, leaderboards (without their GPU types) and workers tables.
RowReader& operator>>(RowReader& r, User& u) {
  return r >> u.id >> u.name >> u.is_admin >> u.created_at;
}
RowReader& operator>>(RowReader& r, Leaderboard& l) {
  return r >> l.id >> l.name >> l.problem_dir >> l.task_yaml >> l.description >> l.deadline >>
         l.visibility >> l.created_at >> l.synced_at >> l.reference;
}
RowReader& operator>>(RowReader& r, WorkerStatus& w) {
  return r >> w.name >> w.host >> w.device >> w.gpu_type >> w.gpu_count >> w.state >>
         w.current_job >> w.drain_requested >> w.started_at >> w.heartbeat_at;
}

namespace {

using Clock = std::chrono::system_clock;

// SHA-256 and random bytes from OpenSSL's libcrypto (EVP and RAND_bytes: a CSPRNG).
using Sha256 = std::array<unsigned char, 32>;

Sha256 sha256(std::string_view data) {
  Sha256 digest{};
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) {
    throw std::runtime_error("SHA-256 failed");
  }
  return digest;
}

std::string to_hex(std::span<const unsigned char> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char byte : bytes) (hex += kDigits[byte >> 4]) += kDigits[byte & 0xf];
  return hex;
}

std::vector<unsigned char> random_bytes(std::size_t count) {
  std::vector<unsigned char> bytes(count);
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      RAND_bytes(bytes.data(), static_cast<int>(count)) != 1) {
    throw std::runtime_error("the random number generator failed");
  }
  return bytes;
}

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

std::string sql(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto part : parts) out += part;
  return out;
}

// The submissions of an import, read from `next` (and their code hashed) on a second thread a
// batch ahead of the inserts, so that reading them from the files runs beside the database work.
class ImportPrefetch {
 public:
  using Slot = std::pair<ImportedSubmission, std::string>;  // with the code's SHA-256 (hex)

  explicit ImportPrefetch(const std::function<bool(ImportedSubmission&)>& next) : next_(next) {
    fill_next();
  }
  // The next batch (empty after the last); rethrows what `next` threw.
  std::span<const Slot> acquire() {
    if (!filling_.valid()) return {};
    const std::size_t count = filling_.get();
    std::swap(batches_[0], batches_[1]);
    if (count == kBatch) fill_next();
    return std::span(batches_[0]).first(count);
  }

 private:
  static constexpr std::size_t kBatch = 32;
  void fill_next() {
    filling_ = std::async(std::launch::async, [this] {
      auto& batch = batches_[1];
      batch.resize(kBatch);
      std::size_t count = 0;
      for (; count < kBatch && next_(batch[count].first); ++count) {
        batch[count].second = to_hex(sha256(batch[count].first.code));
      }
      return count;
    });
  }

  const std::function<bool(ImportedSubmission&)>& next_;
  std::array<std::vector<Slot>, 2> batches_;  // the one read from, the one filled
  std::future<std::size_t> filling_;          // last: waited for before the batches go
};

class SqlStore final : public Store {
 public:
  SqlStore(std::unique_ptr<Dialect> dialect, StoreOptions options)
      : options_(std::move(options)), dialect_(std::move(dialect)) {
    if (!options_.now)
      options_.now = [] { return std::chrono::floor<Time::duration>(Clock::now()); };
    migrate();
  }

  int schema_version() override {
    return guarded("schema_version", [&] { return current_version(); });
  }

  Leaderboard create_leaderboard(const NewLeaderboard& leaderboard) override {
    return in_transaction("create_leaderboard", [&] {
      const Id id = insert_leaderboard(leaderboard);
      return *leaderboard_where("id = $1", id);
    });
  }

  std::optional<Leaderboard> get_leaderboard(std::string_view name) override {
    return guarded("get_leaderboard", [&] { return leaderboard_where("name = $1", name); });
  }

  std::vector<Leaderboard> list_leaderboards(bool include_hidden) override {
    return guarded("list_leaderboards", [&] {
      return leaderboards_where("CAST($1 AS INTEGER) = 1 OR visibility = 'public'", include_hidden);
    });
  }

  void set_leaderboard_deadline(std::string_view name, std::optional<Time> deadline) override {
    guarded("set_leaderboard_deadline", [&] {
      update_leaderboard("deadline = $2", {name, deadline});
    });
  }

  void set_leaderboard_visibility(std::string_view name, Visibility visibility) override {
    guarded("set_leaderboard_visibility", [&] {
      update_leaderboard("visibility = $2", {name, to_string(visibility)});
    });
  }

  Leaderboard sync_leaderboard(std::string_view name, std::string_view task_yaml,
                               std::string_view description) override {
    return in_transaction("sync_leaderboard", [&] {
      update_leaderboard("task_yaml = $2, description = $3, synced_at = $4",
                         {name, task_yaml, description, options_.now()});
      return *leaderboard_where("name = $1", name);
    });
  }

  std::int64_t leaderboard_secret_seed(std::string_view name) override {
    return guarded("leaderboard_secret_seed", [&] {
      auto seed = db().scalar("SELECT secret_seed FROM leaderboards WHERE name = $1", {name});
      if (!seed) throw no_leaderboard(name);
      return *seed;
    });
  }

  User create_user(std::string_view name, bool is_admin) override {
    return guarded("create_user", [&] {
      const Time now = options_.now();
      const Id id = unique_name("user", name, [&] {
        return db().insert("INSERT INTO users (name, is_admin, created_at) VALUES ($1, $2, $3)",
                           {name, is_admin, now});
      });
      return User{id, std::string(name), is_admin, now};
    });
  }

  std::optional<User> get_user(std::string_view name) override {
    return guarded("get_user", [&]() -> std::optional<User> {
      return db().first("SELECT id, name, is_admin, created_at FROM users WHERE name = $1", {name},
                        read<User>);
    });
  }

  IssuedToken create_token(Id user_id, std::string_view label) override {
    return in_transaction("create_token", [&] {
      require_row("users", "user", user_id);
      auto bytes = random_bytes(32);
      IssuedToken issued;
      issued.token = "kj_" + to_hex(bytes);
      issued.token_id = db().insert(
          "INSERT INTO api_tokens (user_id, token_sha256, label, created_at) VALUES ($1, $2, $3, "
          "$4)",
          {user_id, digest_bytes(sha256(issued.token)), label, options_.now()});
      return issued;
    });
  }

  std::optional<User> user_for_token(std::string_view token) override {
    // Found by the token's SHA-256: the clear token is never stored or compared.
    return guarded("user_for_token", [&] {
      return db().first(
          "SELECT u.id, u.name, u.is_admin, u.created_at FROM api_tokens t JOIN users u ON u.id = "
          "t.user_id WHERE t.token_sha256 = $1 AND t.revoked_at IS NULL",
          {digest_bytes(sha256(token))}, read<User>);
    });
  }

  bool revoke_token(Id token_id) override {
    return guarded("revoke_token", [&] {
      return db().exec("UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                       {token_id, options_.now()}) == 1;
    });
  }

  std::string put_code(std::string_view code) override {
    return in_transaction("put_code", [&] {
      std::string hash = to_hex(sha256(code));
      put_code(code, hash);
      return hash;
    });
  }

  std::optional<std::string> get_code(std::string_view sha256_hex) override {
    return guarded("get_code", [&]() -> std::optional<std::string> {
      return db().first("SELECT code FROM code_files WHERE sha256 = $1", {sha256_hex},
                        [](const SqlRows& row) { return row.bytes(0); });
    });
  }

  Submission create_submission(const NewSubmission& submission) override {
    return in_transaction("create_submission", [&] {
      require_row("users", "user", submission.user_id);
      require_row("leaderboards", "leaderboard", submission.leaderboard_id);
      const Id code_id = put_code(submission.code, to_hex(sha256(submission.code)));
      const Time now = options_.now();
      const Id id = db().insert(
          "INSERT INTO submissions (user_id, leaderboard_id, file_name, code_id, gpu_type, mode, "
          "created_at, status) VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued')",
          {submission.user_id, submission.leaderboard_id, submission.file_name, code_id,
           submission.gpu_type, submission.mode, now});
      insert_job(id, submission.gpu_type, now, std::max(1, submission.gpus_needed));
      return *submission_by_id(id);
    });
  }

  std::optional<Submission> get_submission(Id submission_id) override {
    return guarded("get_submission", [&] { return submission_by_id(submission_id); });
  }

  std::vector<Submission> user_submissions(Id user_id, Id leaderboard_id, int limit) override {
    return guarded("user_submissions", [&] {
      return db().all(sql({"SELECT ", kSubmissionFields, kSubmissionJoins,
                           "WHERE s.user_id = $1 AND (CAST($2 AS BIGINT) = 0 OR s.leaderboard_id "
                           "= CAST($2 AS BIGINT)) ORDER BY s.created_at DESC, s.id DESC LIMIT $3"}),
                      {user_id, leaderboard_id, limit}, read<Submission>);
    });
  }

  void set_submission_hacked(Id submission_id, bool hacked) override {
    guarded("set_submission_hacked", [&] {
      if (db().exec("UPDATE submissions SET hacked = $2 WHERE id = $1", {submission_id, hacked}) !=
          1)
        throw no_row("submission", submission_id);
    });
  }

  bool delete_submission(Id submission_id) override {
    return in_transaction("delete_submission", [&] {
      const auto code_id =
          db().scalar("SELECT code_id FROM submissions WHERE id = $1", {submission_id});
      if (!code_id) return false;
      // Jobs, runs and progress go with it (ON DELETE CASCADE); its code unless shared; the
      // source ids of what goes, so that no later row under a reused id inherits them.
      db().exec(
          "DELETE FROM source_ids WHERE (kind = 'submission' AND local_id = $1) OR (kind = 'run' "
          "AND local_id IN (SELECT id FROM runs WHERE submission_id = $1)) OR (kind = 'code' AND "
          "local_id = $2 AND NOT EXISTS (SELECT 1 FROM submissions WHERE code_id = $2 AND id <> "
          "$1))",
          {submission_id, *code_id});
      db().exec("DELETE FROM submissions WHERE id = $1", {submission_id});
      db().exec(
          "DELETE FROM code_files WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM submissions "
          "WHERE code_id = $1)",
          {*code_id});
      return true;
    });
  }

  std::vector<Run> submission_runs(Id submission_id) override {
    return guarded("submission_runs", [&] {
      return db().all(
          sql({"SELECT ", kRunFields, " FROM runs WHERE submission_id = $1 ORDER BY id"}),
          {submission_id}, read<Run>);
    });
  }

  std::vector<RunFileInfo> run_files(Id submission_id) override {
    return guarded("run_files", [&] {
      return db().all(
          // length() of a BLOB and of a bytea counts bytes in both databases.
          "SELECT f.run_id, f.name, length(f.content) FROM run_files f JOIN runs r ON r.id = "
          "f.run_id WHERE r.submission_id = $1 ORDER BY f.run_id, f.name",
          {submission_id}, [](const SqlRows& row) {
            RunFileInfo file;
            RowReader(row) >> file.run_id >> file.name >> file.bytes;
            return file;
          });
    });
  }

  std::optional<std::string> run_file(Id run_id, std::string_view name) override {
    return guarded("run_file", [&] {
      return db().first("SELECT content FROM run_files WHERE run_id = $1 AND name = $2",
                        {run_id, name}, [](const SqlRows& row) { return row.bytes(0); });
    });
  }

  Job enqueue(Id submission_id, std::string_view gpu_type) override {
    return in_transaction("enqueue", [&] {
      require_row("submissions", "submission", submission_id);
      const Id id = insert_job(submission_id, gpu_type, options_.now(), 0);
      db().exec(
          "UPDATE submissions SET status = 'queued', verdict = NULL, score = NULL WHERE id = $1",
          {submission_id});
      return *job_by_id(id);
    });
  }

  std::optional<Job> get_job(Id job_id) override {
    return guarded("get_job", [&] { return job_by_id(job_id); });
  }

  std::vector<Job> submission_jobs(Id submission_id) override {
    return guarded("submission_jobs", [&] {
      return db().all(
          sql({"SELECT ", kJobFields, " FROM jobs WHERE submission_id = $1 ORDER BY id"}),
          {submission_id}, read<Job>);
    });
  }

  int count_queued_jobs(std::string_view gpu_type) override {
    return guarded("count_queued_jobs", [&] {
      return static_cast<int>(*db().scalar(
          "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND gpu_type = $1", {gpu_type}));
    });
  }

  std::optional<int> queue_position(Id job_id) override {
    return guarded("queue_position", [&]() -> std::optional<int> {
      const auto ahead = db().scalar(
          "SELECT COUNT(*) FROM jobs AS ahead JOIN jobs AS mine ON mine.id = $1 AND mine.state = "
          "'queued' WHERE ahead.state = 'queued' AND ahead.gpu_type = mine.gpu_type AND ahead.id "
          "<= mine.id",
          {job_id});
      return ahead && *ahead > 0 ? std::optional(static_cast<int>(*ahead)) : std::nullopt;
    });
  }

  std::map<JobState, int> count_jobs_by_state() override {
    return guarded("count_jobs_by_state", [&] {
      std::map<JobState, int> counts;
      for (const auto state :
           {JobState::queued, JobState::running, JobState::done, JobState::failed})
        counts[state] = 0;
      for (auto rows = db().query("SELECT state, COUNT(*) FROM jobs GROUP BY state");
           rows->next();) {
        counts[from_text<JobState>(rows->text(0))] = static_cast<int>(rows->int64(1));
      }
      return counts;
    });
  }

  std::optional<ClaimedJob> claim_next_job(std::string_view worker_id,
                                           std::span<const std::string> gpu_types,
                                           std::chrono::seconds lease_duration,
                                           int max_gpus) override {
    return guarded("claim_next_job", [&]() -> std::optional<ClaimedJob> {
      if (worker_id.empty()) throw std::runtime_error("empty worker id");
      const Time now = options_.now();
      const ClaimRequest request{worker_id, gpu_types, max_gpus, now, now + lease_duration};
      return dialect_->claim(db(), request);
    });
  }

  bool heartbeat(const JobLease& lease, std::chrono::seconds lease_duration) override {
    return guarded("heartbeat", [&] {
      const Time now = options_.now();
      return db().exec(sql({"UPDATE jobs SET lease_expires_at = $4, updated_at = $5", kHeldJob}),
                       {lease.job_id, lease.worker_id, lease.attempt, now + lease_duration, now}) ==
             1;
    });
  }

  bool complete(const JobLease& lease, const JobOutcome& outcome) override {
    const Time now = options_.now();
    int tries = 0;
    return guarded("complete", [&] {
      const bool retried = tries++ > 0;
      const auto done = dialect_->complete(db(), lease, now, outcome);
      if (!done) return complete_in_transaction(lease, now, outcome);
      // A retry after the connection dropped mid-statement: the first try may have committed,
      // and then the job is done under this very lease (no other completion can match it).
      return *done ||
             (retried && db().scalar("SELECT 1 FROM jobs WHERE id = $1 AND state = 'done' AND "
                                     "lease_owner = $2 AND attempts = $3",
                                     {lease.job_id, lease.worker_id, lease.attempt})
                             .has_value());
    });
  }

  bool release(const JobLease& lease, std::string_view error) override {
    return in_transaction("release", [&] {
      const auto submission_id = held_submission(lease);
      if (!submission_id) return false;
      release_job(lease.job_id, *submission_id, lease.attempt, error);
      worker_finished(lease.job_id, "idle", options_.now());
      return true;
    });
  }

  int requeue_expired(Time now) override {
    return in_transaction("requeue_expired", [&] {
      return release_running("lease_expires_at < $1", now, "lease expired");
    });
  }

  int recover_running_jobs() override {
    // Where other servers and worker hosts share the database, their running jobs are theirs:
    // jobs of workers that died with a server come back when their leases expire.
    return in_transaction("recover_running_jobs", [&] {
      return release_running("lease_expires_at < $1",
                             dialect_->shared_by_servers() ? options_.now() : Time::max(),
                             "the server stopped while the job was running");
    });
  }

  bool wait_for_jobs(std::span<const std::string> gpu_types,
                     std::chrono::milliseconds timeout) override {
    return dialect_->wait_for_jobs(gpu_types, timeout);
  }

  void register_worker(const WorkerRegistration& worker) override {
    if (worker.name.empty() || worker.gpu_type.empty()) {
      throw StoreError("register_worker", "a worker needs a name and a GPU type");
    }
    in_transaction("register_worker", [&] {
      db().exec(
          "INSERT INTO workers (name, host, device, gpu_type, gpu_count, state, drain, "
          "started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, 'idle', 0, $6, $6) ON CONFLICT "
          "(name) DO UPDATE SET host = excluded.host, device = excluded.device, gpu_type = "
          "excluded.gpu_type, gpu_count = excluded.gpu_count, state = 'idle', current_job_id = "
          "NULL, drain = 0, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at",
          {worker.name, worker.host, worker.device, worker.gpu_type, worker.gpu_count,
           options_.now()});
      return release_running("lease_owner = $1", worker.name,
                             "the worker restarted while the job was running");
    });
  }

  bool worker_heartbeat(std::string_view name, std::string_view state) override {
    return guarded("worker_heartbeat", [&] {
      auto drain = db().scalar(
          "UPDATE workers SET state = CASE WHEN drain = 1 AND CAST($2 AS TEXT) = 'busy' THEN "
          "'draining' WHEN drain = 1 AND CAST($2 AS TEXT) = 'idle' THEN 'drained' ELSE CAST($2 AS "
          "TEXT) END, heartbeat_at = $3 WHERE name = $1 RETURNING drain",
          {name, state, options_.now()});
      return drain.value_or(0) != 0;
    });
  }

  std::vector<WorkerStatus> list_workers() override {
    return guarded("list_workers", [&] {
      return db().all(
          "SELECT name, host, device, gpu_type, gpu_count, state, current_job_id, drain, "
          "started_at, heartbeat_at FROM workers ORDER BY host, name",
          {}, read<WorkerStatus>);
    });
  }

  int request_drain(std::string_view name) override {
    return guarded("request_drain", [&] {
      return db().exec(
          "UPDATE workers SET drain = 1, state = CASE WHEN current_job_id IS NULL THEN 'drained' "
          "ELSE 'draining' END WHERE name = $1 OR host = $1",
          {name});
    });
  }

  std::optional<std::int64_t> append_progress(const JobLease& lease,
                                              std::string_view event_json) override {
    return in_transaction("append_progress", [&]() -> std::optional<std::int64_t> {
      // Locks the job row: appends of one job are serialized.
      if (!db().scalar(sql({"SELECT 1 FROM jobs", kHeldJob, dialect_->lock_rows()}),
                       {lease.job_id, lease.worker_id, lease.attempt})) {
        return std::nullopt;
      }
      auto seq = db().scalar(
          "INSERT INTO job_events (job_id, seq, time, event_json) SELECT $1, COALESCE(MAX(seq), "
          "0) + 1, $2, $3 FROM job_events WHERE job_id = $1 RETURNING seq",
          {lease.job_id, options_.now(), event_json});
      return seq;
    });
  }

  std::vector<ProgressEvent> progress_since(Id job_id, std::int64_t after_seq) override {
    return guarded("progress_since", [&] {
      return db().all(
          "SELECT job_id, seq, time, event_json FROM job_events WHERE job_id = $1 AND seq > $2 "
          "ORDER BY seq",
          {job_id, after_seq}, [](const SqlRows& row) {
            ProgressEvent event;
            RowReader(row) >> event.job_id >> event.seq >> event.time >> event.event_json;
            return event;
          });
    });
  }

  std::vector<RankedEntry> ranking(Id leaderboard_id, std::string_view gpu_type) override {
    return guarded("ranking", [&] {
      // The speedup is read from the ranked run's result only for the rows shown (one per user).
      auto rows = db().query(sql({R"sql(
WITH eligible AS (
  SELECT s.user_id, s.id AS submission_id, s.created_at, r.score, r.id AS run_id,
         ROW_NUMBER() OVER (PARTITION BY s.user_id ORDER BY r.score, s.created_at, s.id) AS nth
  FROM submissions s JOIN runs r ON r.submission_id = s.id
  WHERE s.leaderboard_id = $1 AND s.gpu_type = $2 AND s.hacked = 0
    AND r.mode = 'leaderboard' AND r.passed = 1 AND r.secret = 0 AND r.score IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM runs f WHERE f.submission_id = s.id AND f.secret = 1
                    AND f.passed = 0)
)
SELECT e.user_id, u.name, e.submission_id, s.file_name, e.score, e.created_at, )sql",
                                  dialect_->json_number("ranked.result_json", "speedup"), R"sql(
FROM eligible e JOIN users u ON u.id = e.user_id JOIN submissions s ON s.id = e.submission_id
  JOIN runs ranked ON ranked.id = e.run_id
WHERE e.nth = 1
ORDER BY e.score, e.created_at, e.submission_id)sql"}),
                             {leaderboard_id, gpu_type});
      std::vector<RankedEntry> entries;
      while (rows->next()) {
        RankedEntry entry;
        RowReader(*rows) >> entry.user_id >> entry.user_name >> entry.submission_id >>
            entry.file_name >> entry.score >> entry.submitted_at >> entry.speedup;
        entry.rank = entries.empty() || entries.back().score != entry.score
                         ? static_cast<int>(entries.size()) + 1
                         : entries.back().rank;
        entries.push_back(std::move(entry));
      }
      return entries;
    });
  }

  RateWindow rate_window(Id user_id, Id leaderboard_id, std::string_view mode, int max_submissions,
                         std::chrono::seconds window) override {
    return guarded("rate_window", [&] {
      const Time now = options_.now();
      const Time start = now - window;
      constexpr std::string_view kInWindow =
          " FROM submissions WHERE user_id = $1 AND leaderboard_id = $2 AND created_at > $3 AND "
          "created_at <= $4 AND (CAST($5 AS TEXT) = '' OR mode = CAST($5 AS TEXT))";
      RateWindow result;
      result.submissions = static_cast<int>(*db().scalar(
          sql({"SELECT COUNT(*)", kInWindow}), {user_id, leaderboard_id, start, now, mode}));
      if (result.submissions < max_submissions) return result;
      if (max_submissions <= 0) {
        result.retry_after = window;
        return result;
      }
      // The limit frees up when the submission that puts the count at max leaves the window.
      const auto frees_at =
          *db().first(
              sql({"SELECT created_at", kInWindow, " ORDER BY created_at LIMIT 1 OFFSET $6"}),
              {user_id, leaderboard_id, start, now, mode, result.submissions - max_submissions},
              read<Time>) +
          window;
      const auto wait = std::chrono::ceil<std::chrono::seconds>(frees_at - now);
      result.retry_after = std::max(wait, std::chrono::seconds(1));
      return result;
    });
  }

  void for_each_submission_record(
      std::span<const Id> leaderboard_ids, RecordCode code,
      const std::function<void(const SubmissionRecord&)>& visit) override {
    guarded("for_each_submission_record", [&] {
      std::string filter;
      for (Id id : leaderboard_ids) filter += (filter.empty() ? "" : ", ") + std::to_string(id);
      // `+s.leaderboard_id`: no index for the filter, so that SQLite scans the submissions in id
      // order. With submissions_by_leaderboard it read them by leaderboard and sorted the rows
      // by id in a temporary B-tree, code included: a whole export's code (hundreds of MB)
      // written to temporary files and read back.
      const std::string where =
          filter.empty() ? "" : "WHERE +s.leaderboard_id IN (" + filter + ") ";
      auto settings = dialect_->bulk_read(db());
      // The same snapshot for both reads.
      SqlTransaction transaction(db(), Access::snapshot);
      auto runs = db().query(sql({"SELECT ", kRunFields,
                                  " FROM runs WHERE submission_id IN (SELECT s.id FROM "
                                  "submissions s ",
                                  where, ") ORDER BY submission_id, id"}));
      bool run_ready = runs->next();
      const bool with_code = code == RecordCode::with;
      auto rows = db().query(sql({"SELECT ", kSubmissionFields, with_code ? ", c.code" : "",
                                  kSubmissionJoins, where, "ORDER BY s.id"}));
      SubmissionRecord record;
      while (rows->next()) {
        RowReader reader(*rows);
        reader >> record.submission;
        if (with_code) reader.bytes_into(record.code);
        record.runs.clear();
        while (run_ready && runs->int64(1) < record.submission.id) run_ready = runs->next();
        while (run_ready && runs->int64(1) == record.submission.id) {
          record.runs.push_back(read<Run>(*runs));
          run_ready = runs->next();
        }
        visit(record);
      }
      rows.reset();
      runs.reset();
      transaction.commit();
    });
  }

  ImportOutcome import_submissions(std::span<const ImportedLeaderboard> leaderboards,
                                   std::vector<Id>& leaderboard_ids,
                                   const std::function<bool(ImportedSubmission&)>& next) override {
    // `next` cannot be rewound: a connection lost mid-import is not retried like other operations.
    bool started = false;
    return guarded("import_submissions", [&] {
      if (started) {
        throw StoreError("import_submissions",
                         "the connection to the database was lost during the import, whose "
                         "transaction was not committed; run the import again");
      }
      started = true;
      auto settings = dialect_->bulk_write(db());
      SqlTransaction transaction(db());
      ImportOutcome outcome;
      kept_ids_.clear();
      leaderboard_ids.clear();
      for (const auto& leaderboard : leaderboards) {
        const auto existing =
            db().scalar("SELECT id FROM leaderboards WHERE name = $1", {leaderboard.name});
        const Id id = existing ? *existing : insert_leaderboard(leaderboard, leaderboard.source_id);
        if (leaderboard.source_id)
          keep_source_id(SourceKind::leaderboard, id, *leaderboard.source_id);
        leaderboard_ids.push_back(id);
        outcome.leaderboards_added += existing ? 0 : 1;
      }
      ImportState state;
      state.now = options_.now();
      ImportPrefetch prefetch(next);
      for (auto batch = prefetch.acquire(); !batch.empty(); batch = prefetch.acquire()) {
        for (const auto& slot : batch) {
          outcome.submissions_added += import_one(slot.first, slot.second, state);
        }
      }
      for (const auto& table : kept_ids_) dialect_->ids_inserted(db(), table);
      transaction.commit();
      return outcome;
    });
  }

  std::unordered_map<Id, std::string> source_ids(SourceKind kind) override {
    return guarded("source_ids", [&] {
      std::unordered_map<Id, std::string> ids;
      for (auto rows = db().query("SELECT local_id, source_id FROM source_ids WHERE kind = $1",
                                  {to_string(kind)});
           rows->next();) {
        ids.emplace(rows->int64(0), rows->text(1));
      }
      return ids;
    });
  }

 private:
  // What an import looks up once: the users by name, the leaderboard last checked; the code
  // rows it stored or found (their source ids are settled).
  struct ImportState {
    Time now;
    std::unordered_map<std::string, Id> users;
    Id checked_leaderboard = 0;
    std::unordered_set<Id> codes;
  };

  // One imported submission inside the import's transaction: 1 when added, 0 when present.
  int import_one(const ImportedSubmission& s, const std::string& code_sha256, ImportState& state) {
    if (s.leaderboard_id != state.checked_leaderboard) {
      require_row("leaderboards", "leaderboard", s.leaderboard_id);
      state.checked_leaderboard = s.leaderboard_id;
    }
    auto known = state.users.find(s.user_name);
    if (known == state.users.end()) {
      const Id id = *db().scalar(
          "INSERT INTO users (name, is_admin, created_at) VALUES ($1, 0, $2) ON CONFLICT (name) "
          "DO UPDATE SET name = excluded.name RETURNING id",
          {s.user_name, state.now});
      if (!s.source_user_id.empty()) keep_source_id(SourceKind::user, id, s.source_user_id);
      known = state.users.emplace(s.user_name, id).first;
    }
    const Id user_id = known->second;
    const Id code_id = import_code(s.code, code_sha256, s.source_code_id, state);
    if (db().scalar(
            "SELECT 1 FROM submissions WHERE user_id = $1 AND leaderboard_id = $2 AND "
            "created_at = $3 AND code_id = $4 AND gpu_type = $5 AND mode = $6 AND "
            "file_name = $7 LIMIT 1",
            {user_id, s.leaderboard_id, s.created_at, code_id, s.gpu_type, s.mode, s.file_name})) {
      return 0;
    }
    const Id submission_id =
        insert_keeping_id(SourceKind::submission, "submissions", s.source_id, [&](auto id) {
          return db().exec(keeping_id_.submission,
                           {user_id, s.leaderboard_id, s.file_name, code_id, s.gpu_type, s.mode,
                            s.created_at, s.verdict, s.score, s.hacked, id});
        });
    const Id job_id = db().insert(
        "INSERT INTO jobs (submission_id, gpu_type, state, created_at, updated_at) VALUES ($1, $2, "
        "'done', $3, $4)",
        {submission_id, s.gpu_type, s.created_at, state.now});
    for (std::size_t i = 0; i < s.runs.size(); ++i) {
      insert_run(submission_id, job_id, s.runs[i],
                 i < s.source_run_ids.size() ? s.source_run_ids[i] : std::nullopt);
    }
    return 1;
  }

  // An imported code's id: the stored one of the same content (its source id recorded when it
  // differs and this import did not store it), else a new row under its source id where free.
  Id import_code(std::string_view code, const std::string& hash, std::optional<Id> source,
                 ImportState& state) {
    const auto insert = [&](std::optional<Id> id) {
      // No conflict target: the content (sha256) or the id may be taken.
      return db().exec(keeping_id_.code, {hash, Bytes{code}, state.now, id});
    };
    if (const auto id = db().scalar("SELECT id FROM code_files WHERE sha256 = $1", {hash})) {
      // Content stored twice under two published ids (one code_files row): the first id stays.
      if (source && state.codes.insert(*id).second) keep_source_id(SourceKind::code, *id, *source);
      return *id;
    }
    const Id id = insert_keeping_id(SourceKind::code, "code_files", source, insert);
    state.codes.insert(id);
    return id;
  }

  // A new row of `table` under its published id `source` where no row has it, else under a new
  // id with `source` recorded as its source id. `insert(id)` runs the table's INSERT ... ON
  // CONFLICT DO NOTHING with the row under `id` (nullopt: a new one) and returns the rows it
  // inserted. Returns the row's id; 0 for a new row nobody needs the id of (need_id false).
  template <typename Insert>
  Id insert_keeping_id(SourceKind kind, std::string_view table, std::optional<Id> source,
                       Insert&& insert, bool need_id = true) {
    // A store's ids are positive: a published id of 0 (null) or below is neither kept nor recorded.
    const Id wanted = source.value_or(0);
    if (wanted > 0 && insert(std::optional<Id>(wanted)) == 1) {
      kept_ids_.insert(std::string(table));
      return wanted;
    }
    if (insert(std::optional<Id>()) != 1) {  // PostgreSQL: the sequence behind ids kept
      dialect_->ids_inserted(db(), table);
      if (insert(std::optional<Id>()) != 1) {
        throw std::runtime_error("no free id for a new row of " + std::string(table));
      }
    }
    if (wanted <= 0 && !need_id) return 0;
    const Id id = dialect_->last_id(db());
    if (wanted > 0) keep_source_id(kind, id, wanted);
    return id;
  }

  // Records the id a local row had in its dataset; the first one recorded stays.
  void keep_source_id(SourceKind kind, Id local_id, const std::string& source_id) {
    if (source_id.empty() || source_id == std::to_string(local_id)) return;
    db().exec(
        "INSERT INTO source_ids (kind, local_id, source_id) VALUES ($1, $2, $3) ON CONFLICT "
        "(kind, local_id) DO NOTHING",
        {to_string(kind), local_id, source_id});
  }
  void keep_source_id(SourceKind kind, Id local_id, Id source_id) {
    if (source_id > 0) keep_source_id(kind, local_id, std::to_string(source_id));
  }

  // Runs one operation on the dialect's connection. A connection lost before the operation
  // committed anything is established again and the operation retried once; every other
  // failure is a StoreError.
  template <typename Body>
  auto guarded(const char* operation, Body&& body) -> decltype(body()) {
    if constexpr (std::is_void_v<decltype(body())>) {
      guarded(operation, [&] {
        body();
        return true;
      });
    } else {
      std::lock_guard lock(mutex_);
      for (int attempt = 0;; ++attempt) {
        try {
          db_ = &dialect_->connection();
          auto result = body();
          dialect_->committed();
          return result;
        } catch (const StoreError&) {
          throw;
        } catch (const SqlError& error) {
          if (error.kind() == SqlError::Kind::connection_lost && attempt == 0) continue;
          throw StoreError(operation, error.what());
        } catch (const std::exception& error) {
          throw StoreError(operation, error.what());
        }
      }
    }
  }

  // guarded(), the body in one read-write transaction that commits when the body returns.
  template <typename Body>
  auto in_transaction(const char* operation, Body&& body) -> decltype(body()) {
    return guarded(operation, [&] {
      SqlTransaction transaction(db());
      auto result = body();
      transaction.commit();
      return result;
    });
  }

  SqlConnection& db() { return *db_; }

  // The failures of operations on rows that are not there, or whose name is taken; guarded()
  // makes them StoreErrors of the operation.
  static std::runtime_error no_leaderboard(std::string_view name) {
    return std::runtime_error("no leaderboard named " + quoted(name));
  }
  static std::runtime_error no_row(std::string_view what, Id id) {
    return std::runtime_error("no " + std::string(what) + " with id " + std::to_string(id));
  }
  template <typename Insert>
  static Id unique_name(std::string_view what, std::string_view name, Insert&& insert) {
    try {
      return insert();
    } catch (const SqlError& error) {
      if (error.kind() != SqlError::Kind::unique_violation) throw;
      throw std::runtime_error("a " + std::string(what) + " named " + quoted(name) +
                               " already exists");
    }
  }

  // UPDATE leaderboards SET `assignments` of the leaderboard named by the first parameter.
  void update_leaderboard(std::string_view assignments, SqlParams params) {
    if (db().exec(sql({"UPDATE leaderboards SET ", assignments, " WHERE name = $1"}), params) != 1)
      throw no_leaderboard(std::get<std::string_view>(params.begin()->value()));
  }

  static Bytes digest_bytes(const std::array<unsigned char, 32>& digest) {
    return Bytes{std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())};
  }

  int current_version() {
    return static_cast<int>(
        *db().scalar("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  }

  // Applies the migrations this database lacks, in one transaction.
  void migrate() {
    try {
      std::lock_guard lock(mutex_);
      db_ = &dialect_->connection();
      SqlTransaction transaction(db());
      dialect_->lock_for_migration(db());
      db().script(render_migration(
          "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT "
          "NOT NULL, applied_at {INT64} NOT NULL)",
          dialect_->spelling()));
      const int current = current_version();
      if (current > latest_schema_version()) {
        throw StoreError("open", dialect_->name() + " has schema version " +
                                     std::to_string(current) + ", newer than this kj knows (" +
                                     std::to_string(latest_schema_version()) + "); use a newer kj");
      }
      for (const auto& migration : migrations()) {
        if (migration.version <= current) continue;
        db().script(render_migration(migration.sql, dialect_->spelling()));
        db().exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                  {migration.version, migration.name, options_.now()});
      }
      transaction.commit();
    } catch (const StoreError&) {
      throw;
    } catch (const std::exception& error) {
      throw StoreError("open", "migrating " + dialect_->name() + ": " + error.what());
    }
  }

  // The leaderboards `where` selects ($1: `key`), by name.
  std::vector<Leaderboard> leaderboards_where(std::string_view where, const SqlParam& key) {
    auto leaderboards =
        db().all(sql({"SELECT id, name, problem_dir, task_yaml, description, deadline, visibility, "
                      "created_at, synced_at, reference FROM leaderboards WHERE ",
                      where, " ORDER BY name"}),
                 {key}, read<Leaderboard>);
    for (auto& leaderboard : leaderboards) {
      leaderboard.gpu_types =
          db().all("SELECT gpu_type FROM leaderboard_gpu_types WHERE leaderboard_id = $1",
                   {leaderboard.id}, read<std::string>);
      std::sort(leaderboard.gpu_types.begin(), leaderboard.gpu_types.end());
    }
    return leaderboards;
  }

  std::optional<Leaderboard> leaderboard_where(std::string_view where, const SqlParam& key) {
    auto leaderboards = leaderboards_where(where, key);
    if (leaderboards.empty()) return std::nullopt;
    return std::move(leaderboards.front());
  }

  std::optional<Submission> submission_by_id(Id id) {
    return db().first(sql({"SELECT ", kSubmissionFields, kSubmissionJoins, "WHERE s.id = $1"}),
                      {id}, read<Submission>);
  }

  std::optional<Job> job_by_id(Id id) {
    return db().first(sql({"SELECT ", kJobFields, " FROM jobs WHERE id = $1"}), {id}, read<Job>);
  }

  // Fails with "no `what` with id N" unless `table` has the row.
  void require_row(std::string_view table, std::string_view what, Id id) {
    if (!db().scalar(sql({"SELECT 1 FROM ", table, " WHERE id = $1"}), {id}))
      throw no_row(what, id);
  }

  // The leaderboard's rows, inside the caller's transaction; its id (`wanted` where free, else
  // a new one with `wanted` as its source id).
  Id insert_leaderboard(const NewLeaderboard& leaderboard,
                        std::optional<Id> wanted = std::nullopt) {
    auto seed_bytes = random_bytes(8);
    std::uint64_t seed = 0;
    std::memcpy(&seed, seed_bytes.data(), sizeof seed);
    seed &= (std::uint64_t{1} << 53) - 1;  // 53 bits: exact in every JSON reader
    const Id id = unique_name("leaderboard", leaderboard.name, [&] {
      return insert_keeping_id(SourceKind::leaderboard, "leaderboards", wanted, [&](auto at) {
        return db().exec(
            keeping_id_.leaderboard,
            {leaderboard.name, leaderboard.problem_dir, leaderboard.task_yaml,
             leaderboard.description, leaderboard.deadline, static_cast<std::int64_t>(seed),
             to_string(leaderboard.visibility), options_.now(), leaderboard.reference, at});
      });
    });
    for (const auto& gpu_type : leaderboard.gpu_types) {
      db().exec(
          "INSERT INTO leaderboard_gpu_types (leaderboard_id, gpu_type) VALUES ($1, $2) ON "
          "CONFLICT DO NOTHING",
          {id, gpu_type});
    }
    return id;
  }

  Id put_code(std::string_view code, const std::string& hash) {
    db().exec(
        "INSERT INTO code_files (sha256, code, created_at) VALUES ($1, $2, $3) ON CONFLICT "
        "(sha256) DO NOTHING",
        {hash, Bytes{code}, options_.now()});
    return *db().scalar("SELECT id FROM code_files WHERE sha256 = $1", {hash});
  }

  // A run and the files it produced; an imported one under its source id where free.
  void insert_run(Id submission_id, Id job_id, const NewRun& run,
                  std::optional<Id> source_id = std::nullopt) {
    const Id run_id = insert_keeping_id(
        SourceKind::run, "runs", source_id,
        [&](auto id) {
          return db().exec(keeping_id_.run,
                           {submission_id, job_id, run.mode, run.runner, run.secret, run.score,
                            run.passed, run.compilation_json, run.result_json, run.system_json,
                            run.start_time, run.end_time, run.meta_json, id});
        },
        !run.files.empty());
    for (const auto& file : run.files) {
      db().exec("INSERT INTO run_files (run_id, name, content) VALUES ($1, $2, $3)",
                {run_id, file.name, Bytes{file.content}});
    }
  }

  // A queued job, its waiting workers woken once the transaction commits. gpus_needed 0: as
  // many as the submission's earlier jobs needed (a re-queue).
  Id insert_job(Id submission_id, std::string_view gpu_type, Time now, int gpus_needed) {
    const Id id = db().insert(
        "INSERT INTO jobs (submission_id, gpu_type, state, created_at, updated_at, gpus_needed) "
        "VALUES ($1, $2, 'queued', $3, $3, COALESCE(NULLIF(CAST($4 AS INTEGER), 0), (SELECT "
        "MAX(gpus_needed) FROM jobs WHERE submission_id = $1), 1))",
        {submission_id, gpu_type, now, gpus_needed});
    dialect_->job_queued(db(), gpu_type);
    return id;
  }

  bool complete_in_transaction(const JobLease& lease, Time now, const JobOutcome& outcome) {
    SqlTransaction transaction(db());
    const auto submission_id = held_submission(lease);
    if (!submission_id) return false;
    db().exec(
        "UPDATE jobs SET state = 'done', lease_expires_at = NULL, error = '', updated_at = $2 "
        "WHERE id = $1",
        {lease.job_id, now});
    for (const auto& run : outcome.runs) insert_run(*submission_id, lease.job_id, run);
    db().exec("UPDATE submissions SET status = 'done', verdict = $2, score = $3 WHERE id = $1",
              {*submission_id, outcome.verdict, outcome.score});
    worker_finished(lease.job_id, "idle", now);
    transaction.commit();
    return true;
  }

  // The submission of the job the lease holds, its row locked; none when the lease was lost.
  std::optional<Id> held_submission(const JobLease& lease) {
    return db().scalar(sql({"SELECT submission_id FROM jobs", kHeldJob, dialect_->lock_rows()}),
                       {lease.job_id, lease.worker_id, lease.attempt});
  }

  // Back to the queue, or failed once it was claimed max_attempts times.
  void release_job(Id job_id, Id submission_id, int attempts, std::string_view error) {
    const Time now = options_.now();
    if (attempts >= options_.max_attempts) {
      const std::string reason = "internal_error: " + std::string(error) + " (after " +
                                 std::to_string(attempts) + " attempts)";
      db().exec(
          "UPDATE jobs SET state = 'failed', lease_expires_at = NULL, error = $2, updated_at = $3 "
          "WHERE id = $1",
          {job_id, reason, now});
      db().exec(
          "UPDATE submissions SET status = 'failed', verdict = 'internal_error', score = NULL "
          "WHERE id = $1",
          {submission_id});
      return;
    }
    const auto gpu_type = db().first(
        "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, error = "
        "$2, updated_at = $3 WHERE id = $1 RETURNING gpu_type",
        {job_id, error, now}, read<std::string>);
    db().exec("UPDATE submissions SET status = 'queued' WHERE id = $1", {submission_id});
    dialect_->job_queued(db(), gpu_type.value_or(""));
  }

  // A worker's job ended: idle again (drained when a drain was requested), or `lost` when the
  // sweeper took the job from a worker presumed dead.
  void worker_finished(Id job_id, const char* state, Time now) {
    db().exec(
        "UPDATE workers SET state = CASE WHEN drain = 1 THEN 'drained' ELSE CAST($2 AS TEXT) END, "
        "current_job_id = NULL, heartbeat_at = CASE WHEN CAST($2 AS TEXT) = 'lost' THEN "
        "heartbeat_at ELSE $3 END WHERE current_job_id = $1",
        {job_id, state, now});
  }

  // Releases the running jobs `where` selects ($1: `key`); rows another transaction holds (a
  // completion in flight) are skipped, not waited for.
  int release_running(std::string_view where, const SqlParam& key, std::string_view error) {
    const auto abandoned =
        db().all(sql({"SELECT ", kJobFields, " FROM jobs WHERE state = 'running' AND ", where,
                      dialect_->lock_rows_skip_locked()}),
                 {key}, read<Job>);
    for (const auto& job : abandoned) {
      release_job(job.id, job.submission_id, job.attempts, error);
      worker_finished(job.id, "lost", options_.now());
    }
    return static_cast<int>(abandoned.size());
  }

  // The INSERTs of rows an import may put under their source ids: the id is the last parameter
  // (NULL: a new one), a row whose id is taken is not inserted.
  struct KeepingIdInserts {
    explicit KeepingIdInserts(const Dialect& dialect)
        : leaderboard(sql({"INSERT INTO leaderboards (id, name, problem_dir, task_yaml, "
                           "description, deadline, secret_seed, visibility, created_at, "
                           "synced_at, reference) VALUES (COALESCE(CAST($10 AS BIGINT), ",
                           dialect.next_id("leaderboards"),
                           "), $1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT (id) DO "
                           "NOTHING"})),
          // No conflict target: the content (sha256) or the id may be taken.
          code(sql({"INSERT INTO code_files (id, sha256, code, created_at) VALUES "
                    "(COALESCE(CAST($4 AS BIGINT), ",
                    dialect.next_id("code_files"), "), $1, $2, $3) ON CONFLICT DO NOTHING"})),
          submission(sql({"INSERT INTO submissions (id, user_id, leaderboard_id, file_name, "
                          "code_id, gpu_type, mode, created_at, status, verdict, score, hacked) "
                          "VALUES (COALESCE(CAST($11 AS BIGINT), ",
                          dialect.next_id("submissions"),
                          "), $1, $2, $3, $4, $5, $6, $7, 'done', $8, $9, $10) ON CONFLICT (id) "
                          "DO NOTHING"})),
          run(sql({"INSERT INTO runs (id, submission_id, job_id, mode, runner, secret, score, "
                   "passed, compilation_json, result_json, system_json, start_time, end_time, "
                   "meta_json) VALUES (COALESCE(CAST($14 AS BIGINT), ",
                   dialect.next_id("runs"),
                   "), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) "
                   "DO NOTHING"})) {}
    std::string leaderboard, code, submission, run;
  };

  std::mutex mutex_;
  std::set<std::string> kept_ids_;  // tables an import inserted rows into under source ids
  StoreOptions options_;
  std::unique_ptr<Dialect> dialect_;
  KeepingIdInserts keeping_id_{*dialect_};
  SqlConnection* db_ = nullptr;  // the dialect's connection for the operation running
};

}  // namespace
}  // namespace detail

std::unique_ptr<Store> open_store(const std::string& url, StoreOptions options) {
  try {
    const bool postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
    const std::string path = url.starts_with("sqlite:") ? url.substr(7) : url;
    if (path.empty()) throw StoreError("open", "no database path in " + url);
    auto dialect =
        postgres ? detail::postgres_dialect(url, options) : detail::sqlite_dialect(path, options);
    return std::make_unique<detail::SqlStore>(std::move(dialect), std::move(options));
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& error) {
    throw StoreError("open", error.what());
  }
}

}  // namespace kj::store
