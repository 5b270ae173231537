// The SQLite backend: one connection in WAL mode, every operation one transaction.
#include "store/detail/sqlite_store.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "store/detail/crypto.h"
#include "store/detail/queue_signal.h"
#include "store/detail/sqlite.h"
#include "store/detail/sqlite_schema.h"
#include "store/store.h"

namespace kj::store::detail {
namespace {

std::int64_t micros(Time time) { return time.time_since_epoch().count(); }
Time time_from_micros(std::int64_t value) { return Time(std::chrono::microseconds(value)); }
std::optional<Time> optional_time(const Query& row, int column) {
  auto value = row.optional_int64(column);
  if (!value) return std::nullopt;
  return time_from_micros(*value);
}

bool is_unique_violation(const SqliteError& error) {
  return error.code() == SQLITE_CONSTRAINT_UNIQUE || error.code() == SQLITE_CONSTRAINT_PRIMARYKEY;
}

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

JobState job_state_from_text(const std::string& text) {
  if (text == "queued") return JobState::queued;
  if (text == "running") return JobState::running;
  if (text == "done") return JobState::done;
  return JobState::failed;
}

SubmissionStatus submission_status_from_text(const std::string& text) {
  if (text == "queued") return SubmissionStatus::queued;
  if (text == "running") return SubmissionStatus::running;
  if (text == "done") return SubmissionStatus::done;
  return SubmissionStatus::failed;
}

constexpr const char* kLeaderboardColumns =
    "SELECT id, name, problem_dir, task_yaml, description, deadline, visibility, created_at, "
    "synced_at FROM leaderboards ";
constexpr const char* kSubmissionColumns =
    "SELECT s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id, c.sha256, "
    "s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked FROM submissions s "
    "JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id = s.leaderboard_id "
    "JOIN code_files c ON c.id = s.code_id ";
constexpr const char* kJobColumns =
    "SELECT id, submission_id, gpu_type, state, attempts, lease_owner, lease_expires_at, error, "
    "created_at, updated_at FROM jobs ";
constexpr const char* kRunColumns =
    "SELECT id, submission_id, job_id, mode, runner, secret, score, passed, compilation_json, "
    "result_json, system_json, start_time, end_time FROM runs ";
constexpr const char* kHeldJob =
    "WHERE id = ?1 AND state = 'running' AND lease_owner = ?2 AND attempts = ?3";

Submission read_submission(const Query& row) {
  Submission submission;
  submission.id = row.int64(0);
  submission.user_id = row.int64(1);
  submission.user_name = row.text(2);
  submission.leaderboard_id = row.int64(3);
  submission.leaderboard_name = row.text(4);
  submission.file_name = row.text(5);
  submission.code_id = row.int64(6);
  submission.code_sha256 = row.text(7);
  submission.gpu_type = row.text(8);
  submission.mode = row.text(9);
  submission.created_at = time_from_micros(row.int64(10));
  submission.status = submission_status_from_text(row.text(11));
  submission.verdict = row.text(12);
  submission.score = row.optional_real(13);
  submission.hacked = row.int64(14) != 0;
  return submission;
}

Job read_job(const Query& row) {
  Job job;
  job.id = row.int64(0);
  job.submission_id = row.int64(1);
  job.gpu_type = row.text(2);
  job.state = job_state_from_text(row.text(3));
  job.attempts = static_cast<int>(row.int64(4));
  job.lease_owner = row.text(5);
  job.lease_expires_at = optional_time(row, 6);
  job.error = row.text(7);
  job.created_at = time_from_micros(row.int64(8));
  job.updated_at = time_from_micros(row.int64(9));
  return job;
}

Run read_run(const Query& row) {
  Run run;
  run.id = row.int64(0);
  run.submission_id = row.int64(1);
  run.job_id = row.int64(2);
  run.mode = row.text(3);
  run.runner = row.text(4);
  run.secret = row.int64(5) != 0;
  run.score = row.optional_real(6);
  run.passed = row.int64(7) != 0;
  run.compilation_json = row.text(8);
  run.result_json = row.text(9);
  run.system_json = row.text(10);
  run.start_time = time_from_micros(row.int64(11));
  run.end_time = time_from_micros(row.int64(12));
  return run;
}

User read_user(const Query& row) {
  return User{row.int64(0), row.text(1), row.int64(2) != 0, time_from_micros(row.int64(3))};
}

// Sets a numeric PRAGMA of the connection for this object's lifetime, then restores the old value.
class ScopedPragma {
 public:
  ScopedPragma(Connection& db, std::string name, std::int64_t value)
      : db_(db), name_(std::move(name)) {
    {
      auto row = db_.query("PRAGMA " + name_);
      if (row.step()) old_ = row.int64(0);
    }
    db_.exec("PRAGMA " + name_ + " = " + std::to_string(value));
  }
  ~ScopedPragma() {
    if (!old_) return;
    try {
      db_.exec("PRAGMA " + name_ + " = " + std::to_string(*old_));
    } catch (const SqliteError&) {
      // Only a cache or map size: the connection stays correct with the larger one.
    }
  }
  ScopedPragma(const ScopedPragma&) = delete;
  ScopedPragma& operator=(const ScopedPragma&) = delete;

 private:
  Connection& db_;
  std::string name_;
  std::optional<std::int64_t> old_;
};

// The page cache of a bulk import: 256 MiB (negative cache_size counts KiB).
constexpr std::int64_t kImportCacheKiB = 256 * 1024;
struct CacheSize : ScopedPragma {
  CacheSize(Connection& db, std::int64_t kib) : ScopedPragma(db, "cache_size", -kib) {}
};
// Reads of a bulk export or import through a memory map of up to 4 GiB of the database file
// (SQLite caps it at its compile-time limit); pages are still written through the WAL.
struct MmapSize : ScopedPragma {
  explicit MmapSize(Connection& db) : ScopedPragma(db, "mmap_size", std::int64_t{1} << 32) {}
};

// A bulk import of 200,000 submissions writes 1 GB of pages: in WAL mode once into the WAL and
// again into the database file by the checkpoint after the commit. When no other connection has
// the store open, the import runs with a rollback journal instead: the pages it adds go straight
// into the database file (SQLite journals only the pages that existed before the transaction),
// still one transaction that an error or a crash rolls back. Synchronous mode is FULL meanwhile,
// as a rollback journal needs for durability. The store is switched back to WAL mode afterwards
// (and every open switches it too). When another connection has the store open, the switch fails
// at once (SQLite does not call the busy handler for it) and the import runs in WAL mode.
class RollbackJournalWhenAlone {
 public:
  explicit RollbackJournalWhenAlone(Connection& db) : db_(db) {
    try {
      auto mode = db_.query("PRAGMA journal_mode = DELETE");
      active_ = mode.step() && mode.text(0) == "delete";
    } catch (const SqliteError&) {
      // SQLITE_BUSY: another connection has the store open; it keeps its WAL.
    }
    if (!active_) return;
    try {
      db_.exec("PRAGMA synchronous = FULL");
    } catch (const SqliteError&) {
      back_to_wal();
      throw;
    }
  }
  ~RollbackJournalWhenAlone() {
    if (active_) back_to_wal();
  }
  RollbackJournalWhenAlone(const RollbackJournalWhenAlone&) = delete;
  RollbackJournalWhenAlone& operator=(const RollbackJournalWhenAlone&) = delete;

 private:
  void back_to_wal() noexcept {
    try {
      db_.exec("PRAGMA synchronous = NORMAL");
      auto mode = db_.query("PRAGMA journal_mode = WAL");
      mode.step();
    } catch (const SqliteError&) {
      // Still a rollback journal: correct, and the next open of the store switches it to WAL.
    }
  }

  Connection& db_;
  bool active_ = false;
};

// Pulls the submissions of an import from `next` on a second thread, up to kSlots ahead of the
// inserts, each with the SHA-256 of its code: reading them from the files and hashing run beside
// the SQLite work instead of between its statements. The slots' buffers are reused.
class ImportPrefetch {
 public:
  struct Slot {
    ImportedSubmission submission;
    std::string code_sha256;  // hex
  };

  explicit ImportPrefetch(const std::function<bool(ImportedSubmission&)>& next)
      : next_(next), thread_([this] { produce(); }) {}
  ~ImportPrefetch() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    producer_.notify_one();
    thread_.join();
  }
  ImportPrefetch(const ImportPrefetch&) = delete;
  ImportPrefetch& operator=(const ImportPrefetch&) = delete;

  // The next submission, nullptr after the last; rethrows what `next` threw. The slot stays
  // valid until release().
  Slot* acquire() {
    std::unique_lock lock(mutex_);
    if (consumed_ == produced_ && !done_) {
      // Woken once half the slots are filled (or at the end), not for every one.
      consumer_waiting_ = true;
      consumer_.wait(lock, [&] { return produced_ - consumed_ >= kSlots / 2 || done_; });
      consumer_waiting_ = false;
    }
    if (consumed_ < produced_) return &slots_[consumed_ % kSlots];
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  void release() {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      ++consumed_;
      // A waiting producer is woken once half the slots are free, not for every one.
      wake = producer_waiting_ && produced_ - consumed_ <= kSlots / 2;
    }
    if (wake) producer_.notify_one();
  }

 private:
  static constexpr std::size_t kSlots = 64;

  void produce() {
    while (true) {
      std::size_t at = 0;
      {
        std::unique_lock lock(mutex_);
        if (produced_ - consumed_ == kSlots && !stop_) {
          producer_waiting_ = true;
          producer_.wait(lock, [&] { return produced_ - consumed_ <= kSlots / 2 || stop_; });
          producer_waiting_ = false;
        }
        if (stop_) return;
        at = produced_ % kSlots;
      }
      // Only this thread writes the slot at produced_: the consumer reads below it.
      Slot& slot = slots_[at];
      bool more = false;
      std::exception_ptr error;
      try {
        more = next_(slot.submission);
        if (more) slot.code_sha256 = to_hex(sha256(slot.submission.code));
      } catch (...) {
        error = std::current_exception();
      }
      bool wake = false;
      {
        std::lock_guard lock(mutex_);
        if (more) {
          ++produced_;
        } else {
          done_ = true;
          error_ = error;
        }
        wake = consumer_waiting_ && (produced_ - consumed_ >= kSlots / 2 || done_);
      }
      if (wake) consumer_.notify_one();
      if (!more) return;
    }
  }

  const std::function<bool(ImportedSubmission&)>& next_;
  std::array<Slot, kSlots> slots_;
  std::mutex mutex_;
  std::condition_variable producer_, consumer_;
  std::size_t produced_ = 0, consumed_ = 0;
  bool done_ = false, stop_ = false, producer_waiting_ = false, consumer_waiting_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the members it uses exist
};

class SqliteStore final : public Store {
 public:
  SqliteStore(const std::string& path, StoreOptions options)
      : options_(std::move(options)), db_(path) {
    if (!options_.now) {
      options_.now = [] {
        return std::chrono::time_point_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now());
      };
    }
    sqlite3_busy_timeout(db_.get(), static_cast<int>(options_.busy_timeout.count()));
    db_.exec("PRAGMA foreign_keys = ON");
    switch_to_wal(path);
    // In WAL mode NORMAL loses no committed transaction on a process crash, only on power loss.
    db_.exec("PRAGMA synchronous = NORMAL");
    migrate(path);
    signal_ = queue_signal_for(path);
  }

  int schema_version() override {
    return guarded("schema_version", [&] { return current_version(); });
  }

  Leaderboard create_leaderboard(const NewLeaderboard& leaderboard) override {
    return guarded("create_leaderboard", [&] {
      Transaction transaction(db_);
      const Id id = insert_leaderboard_locked(leaderboard);
      auto created = leaderboard_where("WHERE id = ?1", id);
      transaction.commit();
      return *created;
    });
  }

  std::optional<Leaderboard> get_leaderboard(std::string_view name) override {
    return guarded("get_leaderboard", [&] { return leaderboard_where("WHERE name = ?1", name); });
  }

  std::vector<Leaderboard> list_leaderboards(bool include_hidden) override {
    return guarded("list_leaderboards", [&] {
      std::vector<Id> ids;
      {
        auto rows = db_.query(
            "SELECT id FROM leaderboards WHERE ?1 OR visibility = 'public' ORDER BY name");
        rows.bind(1, include_hidden);
        while (rows.step()) ids.push_back(rows.int64(0));
      }
      std::vector<Leaderboard> leaderboards;
      for (Id id : ids) leaderboards.push_back(*leaderboard_where("WHERE id = ?1", id));
      return leaderboards;
    });
  }

  void set_leaderboard_deadline(std::string_view name, std::optional<Time> deadline) override {
    guarded("set_leaderboard_deadline", [&] {
      db_.query("UPDATE leaderboards SET deadline = ?2 WHERE name = ?1")
          .bind(1, name)
          .bind(2, deadline ? std::optional<std::int64_t>(micros(*deadline)) : std::nullopt)
          .run();
      if (db_.changes() != 1) throw unknown_leaderboard("set_leaderboard_deadline", name);
    });
  }

  void set_leaderboard_visibility(std::string_view name, Visibility visibility) override {
    guarded("set_leaderboard_visibility", [&] {
      db_.query("UPDATE leaderboards SET visibility = ?2 WHERE name = ?1")
          .bind(1, name)
          .bind(2, to_string(visibility))
          .run();
      if (db_.changes() != 1) throw unknown_leaderboard("set_leaderboard_visibility", name);
    });
  }

  Leaderboard sync_leaderboard(std::string_view name, std::string_view task_yaml,
                               std::string_view description) override {
    return guarded("sync_leaderboard", [&] {
      Transaction transaction(db_);
      db_.query(
             "UPDATE leaderboards SET task_yaml = ?2, description = ?3, synced_at = ?4 WHERE "
             "name = ?1")
          .bind(1, name)
          .bind(2, task_yaml)
          .bind(3, description)
          .bind(4, micros(options_.now()))
          .run();
      if (db_.changes() != 1) throw unknown_leaderboard("sync_leaderboard", name);
      auto synced = leaderboard_where("WHERE name = ?1", name);
      transaction.commit();
      return *synced;
    });
  }

  std::int64_t leaderboard_secret_seed(std::string_view name) override {
    return guarded("leaderboard_secret_seed", [&] {
      auto row = db_.query("SELECT secret_seed FROM leaderboards WHERE name = ?1");
      row.bind(1, name);
      if (!row.step()) throw unknown_leaderboard("leaderboard_secret_seed", name);
      return row.int64(0);
    });
  }

  User create_user(std::string_view name, bool is_admin) override {
    return guarded("create_user", [&] {
      Time now = options_.now();
      try {
        db_.query("INSERT INTO users (name, is_admin, created_at) VALUES (?1, ?2, ?3)")
            .bind(1, name)
            .bind(2, is_admin)
            .bind(3, micros(now))
            .run();
      } catch (const SqliteError& error) {
        if (is_unique_violation(error)) {
          throw StoreError("create_user", "a user named " + quoted(name) + " already exists");
        }
        throw;
      }
      return User{db_.last_insert_id(), std::string(name), is_admin, now};
    });
  }

  std::optional<User> get_user(std::string_view name) override {
    return guarded("get_user", [&]() -> std::optional<User> {
      auto row = db_.query("SELECT id, name, is_admin, created_at FROM users WHERE name = ?1");
      row.bind(1, name);
      if (!row.step()) return std::nullopt;
      return read_user(row);
    });
  }

  IssuedToken create_token(Id user_id, std::string_view label) override {
    return guarded("create_token", [&] {
      Transaction transaction(db_);
      require_user("create_token", user_id);
      auto bytes = random_bytes(32);
      IssuedToken issued;
      issued.token = "kj_" + to_hex(bytes.data(), bytes.size());
      auto digest = sha256(issued.token);
      db_.query(
             "INSERT INTO api_tokens (user_id, token_sha256, label, created_at) VALUES (?1, ?2, "
             "?3, ?4)")
          .bind(1, user_id)
          .bind_blob(2, digest.data(), digest.size())
          .bind(3, label)
          .bind(4, micros(options_.now()))
          .run();
      issued.token_id = db_.last_insert_id();
      transaction.commit();
      return issued;
    });
  }

  std::optional<User> user_for_token(std::string_view token) override {
    return guarded("user_for_token", [&]() -> std::optional<User> {
      auto digest = sha256(token);
      auto row = db_.query(
          "SELECT u.id, u.name, u.is_admin, u.created_at, t.token_sha256 FROM api_tokens t JOIN "
          "users u ON u.id = t.user_id WHERE t.token_sha256 = ?1 AND t.revoked_at IS NULL");
      row.bind_blob(1, digest.data(), digest.size());
      if (!row.step()) return std::nullopt;
      std::string stored = row.blob(4);
      if (!equal_digests(digest, reinterpret_cast<const unsigned char*>(stored.data()),
                         stored.size())) {
        return std::nullopt;
      }
      return read_user(row);
    });
  }

  bool revoke_token(Id token_id) override {
    return guarded("revoke_token", [&] {
      db_.query("UPDATE api_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
          .bind(1, token_id)
          .bind(2, micros(options_.now()))
          .run();
      return db_.changes() == 1;
    });
  }

  std::string put_code(std::string_view code) override {
    return guarded("put_code", [&] {
      Transaction transaction(db_);
      auto [id, hash] = put_code_locked(code);
      transaction.commit();
      return hash;
    });
  }

  std::optional<std::string> get_code(std::string_view sha256_hex) override {
    return guarded("get_code", [&]() -> std::optional<std::string> {
      auto row = db_.query("SELECT code FROM code_files WHERE sha256 = ?1");
      row.bind(1, sha256_hex);
      if (!row.step()) return std::nullopt;
      return row.blob(0);
    });
  }

  Submission create_submission(const NewSubmission& submission) override {
    return guarded("create_submission", [&] {
      Transaction transaction(db_);
      require_user("create_submission", submission.user_id);
      require_leaderboard("create_submission", submission.leaderboard_id);
      auto [code_id, hash] = put_code_locked(submission.code);
      Time now = options_.now();
      db_.query(
             "INSERT INTO submissions (user_id, leaderboard_id, file_name, code_id, gpu_type, "
             "mode, "
             "created_at, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued')")
          .bind(1, submission.user_id)
          .bind(2, submission.leaderboard_id)
          .bind(3, submission.file_name)
          .bind(4, code_id)
          .bind(5, submission.gpu_type)
          .bind(6, submission.mode)
          .bind(7, micros(now))
          .run();
      Id id = db_.last_insert_id();
      insert_job(id, submission.gpu_type, now, std::max(1, submission.gpus_needed));
      auto created = submission_by_id(id);
      transaction.commit();
      signal_->notify();
      return *created;
    });
  }

  std::optional<Submission> get_submission(Id submission_id) override {
    return guarded("get_submission", [&] { return submission_by_id(submission_id); });
  }

  std::vector<Submission> user_submissions(Id user_id, Id leaderboard_id, int limit) override {
    return guarded("user_submissions", [&] {
      auto rows = db_.query(std::string(kSubmissionColumns) +
                            "WHERE s.user_id = ?1 AND (?2 = 0 OR s.leaderboard_id = ?2) "
                            "ORDER BY s.created_at DESC, s.id DESC LIMIT ?3");
      rows.bind(1, user_id).bind(2, leaderboard_id).bind(3, limit);
      std::vector<Submission> submissions;
      while (rows.step()) submissions.push_back(read_submission(rows));
      return submissions;
    });
  }

  void set_submission_hacked(Id submission_id, bool hacked) override {
    guarded("set_submission_hacked", [&] {
      db_.query("UPDATE submissions SET hacked = ?2 WHERE id = ?1")
          .bind(1, submission_id)
          .bind(2, hacked)
          .run();
      if (db_.changes() != 1) {
        throw StoreError("set_submission_hacked",
                         "no submission with id " + std::to_string(submission_id));
      }
    });
  }

  bool delete_submission(Id submission_id) override {
    return guarded("delete_submission", [&] {
      Transaction transaction(db_);
      auto code = db_.query("SELECT code_id FROM submissions WHERE id = ?1");
      code.bind(1, submission_id);
      if (!code.step()) return false;
      const Id code_id = code.int64(0);
      // Jobs, runs and progress go with it (ON DELETE CASCADE).
      db_.query("DELETE FROM submissions WHERE id = ?1").bind(1, submission_id).run();
      db_.query(
             "DELETE FROM code_files WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM submissions "
             "WHERE code_id = ?1)")
          .bind(1, code_id)
          .run();
      transaction.commit();
      return true;
    });
  }

  std::vector<Run> submission_runs(Id submission_id) override {
    return guarded("submission_runs", [&] {
      auto rows = db_.query(std::string(kRunColumns) + "WHERE submission_id = ?1 ORDER BY id");
      rows.bind(1, submission_id);
      std::vector<Run> runs;
      while (rows.step()) runs.push_back(read_run(rows));
      return runs;
    });
  }

  Job enqueue(Id submission_id, std::string_view gpu_type) override {
    return guarded("enqueue", [&] {
      Transaction transaction(db_);
      if (!submission_by_id(submission_id)) {
        throw StoreError("enqueue", "no submission with id " + std::to_string(submission_id));
      }
      Id id = insert_job(submission_id, gpu_type, options_.now(), 0);
      db_.query(
             "UPDATE submissions SET status = 'queued', verdict = NULL, score = NULL WHERE id = "
             "?1")
          .bind(1, submission_id)
          .run();
      auto job = job_by_id(id);
      transaction.commit();
      signal_->notify();
      return *job;
    });
  }

  std::optional<Job> get_job(Id job_id) override {
    return guarded("get_job", [&] { return job_by_id(job_id); });
  }

  std::vector<Job> submission_jobs(Id submission_id) override {
    return guarded("submission_jobs", [&] {
      auto rows = db_.query(std::string(kJobColumns) + "WHERE submission_id = ?1 ORDER BY id");
      rows.bind(1, submission_id);
      std::vector<Job> jobs;
      while (rows.step()) jobs.push_back(read_job(rows));
      return jobs;
    });
  }

  int count_queued_jobs(std::string_view gpu_type) override {
    return guarded("count_queued_jobs", [&] {
      auto row = db_.query("SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND gpu_type = ?1");
      row.bind(1, gpu_type);
      row.step();
      return static_cast<int>(row.int64(0));
    });
  }

  std::optional<int> queue_position(Id job_id) override {
    return guarded("queue_position", [&]() -> std::optional<int> {
      auto row = db_.query(
          "SELECT COUNT(*) FROM jobs AS ahead JOIN jobs AS mine ON mine.id = ?1 AND mine.state = "
          "'queued' WHERE ahead.state = 'queued' AND ahead.gpu_type = mine.gpu_type AND ahead.id "
          "<= mine.id");
      row.bind(1, job_id);
      row.step();
      const auto position = static_cast<int>(row.int64(0));
      return position > 0 ? std::optional(position) : std::nullopt;
    });
  }

  std::map<JobState, int> count_jobs_by_state() override {
    return guarded("count_jobs_by_state", [&] {
      std::map<JobState, int> counts;
      for (const JobState state :
           {JobState::queued, JobState::running, JobState::done, JobState::failed}) {
        counts[state] = 0;
      }
      auto rows = db_.query("SELECT state, COUNT(*) FROM jobs GROUP BY state");
      while (rows.step())
        counts[job_state_from_text(rows.text(0))] = static_cast<int>(rows.int64(1));
      return counts;
    });
  }

  std::optional<ClaimedJob> claim_next_job(std::string_view worker_id,
                                           std::span<const std::string> gpu_types,
                                           std::chrono::seconds lease_duration,
                                           int max_gpus) override {
    return guarded("claim_next_job", [&]() -> std::optional<ClaimedJob> {
      if (worker_id.empty()) throw StoreError("claim_next_job", "empty worker id");
      Transaction transaction(db_);
      {
        auto row = db_.query("SELECT drain FROM workers WHERE name = ?1");
        row.bind(1, worker_id);
        if (row.step() && row.int64(0) != 0) return std::nullopt;
      }
      std::optional<Id> oldest;
      for (const auto& gpu_type : gpu_types) {
        auto row = db_.query(
            "SELECT MIN(id) FROM jobs WHERE state = 'queued' AND gpu_type = ?1 AND "
            "gpus_needed <= ?2");
        row.bind(1, gpu_type);
        row.bind(2, static_cast<std::int64_t>(max_gpus));
        if (row.step() && !row.is_null(0)) {
          Id id = row.int64(0);
          if (!oldest || id < *oldest) oldest = id;
        }
      }
      if (!oldest) return std::nullopt;
      Time now = options_.now();
      db_.query(
             "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = ?2, "
             "lease_expires_at = ?3, updated_at = ?4 WHERE id = ?1 AND state = 'queued'")
          .bind(1, *oldest)
          .bind(2, worker_id)
          .bind(3, micros(now + lease_duration))
          .bind(4, micros(now))
          .run();
      ClaimedJob claimed;
      claimed.job = *job_by_id(*oldest);
      claimed.lease = JobLease{claimed.job.id, std::string(worker_id), claimed.job.attempts};
      db_.query("UPDATE submissions SET status = 'running' WHERE id = ?1")
          .bind(1, claimed.job.submission_id)
          .run();
      db_.query(
             "UPDATE workers SET state = 'busy', current_job_id = ?2, heartbeat_at = ?3 WHERE "
             "name = ?1")
          .bind(1, worker_id)
          .bind(2, claimed.job.id)
          .bind(3, micros(now))
          .run();
      claimed.submission = *submission_by_id(claimed.job.submission_id);
      {
        auto row = db_.query(
            "SELECT c.code, l.problem_dir, l.task_yaml, l.secret_seed FROM submissions s JOIN "
            "code_files c ON c.id = s.code_id JOIN leaderboards l ON l.id = s.leaderboard_id "
            "WHERE s.id = ?1");
        row.bind(1, claimed.job.submission_id);
        row.step();
        claimed.code = row.blob(0);
        claimed.problem_dir = row.text(1);
        claimed.task_yaml = row.text(2);
        claimed.secret_seed = row.int64(3);
      }
      transaction.commit();
      return claimed;
    });
  }

  bool heartbeat(const JobLease& lease, std::chrono::seconds lease_duration) override {
    return guarded("heartbeat", [&] {
      Time now = options_.now();
      db_.query(std::string("UPDATE jobs SET lease_expires_at = ?4, updated_at = ?5 ") + kHeldJob)
          .bind(1, lease.job_id)
          .bind(2, lease.worker_id)
          .bind(3, lease.attempt)
          .bind(4, micros(now + lease_duration))
          .bind(5, micros(now))
          .run();
      return db_.changes() == 1;
    });
  }

  bool complete(const JobLease& lease, const JobOutcome& outcome) override {
    return guarded("complete", [&] {
      Transaction transaction(db_);
      Time now = options_.now();
      db_.query(std::string("UPDATE jobs SET state = 'done', lease_expires_at = NULL, "
                            "error = '', updated_at = ?4 ") +
                kHeldJob)
          .bind(1, lease.job_id)
          .bind(2, lease.worker_id)
          .bind(3, lease.attempt)
          .bind(4, micros(now))
          .run();
      if (db_.changes() != 1) return false;
      Id submission_id = job_by_id(lease.job_id)->submission_id;
      for (const auto& run : outcome.runs) {
        db_.query(
               "INSERT INTO runs (submission_id, job_id, mode, runner, secret, score, passed, "
               "compilation_json, result_json, system_json, start_time, end_time) VALUES (?1, ?2, "
               "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")
            .bind(1, submission_id)
            .bind(2, lease.job_id)
            .bind(3, run.mode)
            .bind(4, run.runner)
            .bind(5, run.secret)
            .bind(6, run.score)
            .bind(7, run.passed)
            .bind(8, run.compilation_json)
            .bind(9, run.result_json)
            .bind(10, run.system_json)
            .bind(11, micros(run.start_time))
            .bind(12, micros(run.end_time))
            .run();
      }
      db_.query("UPDATE submissions SET status = 'done', verdict = ?2, score = ?3 WHERE id = ?1")
          .bind(1, submission_id)
          .bind(2, outcome.verdict)
          .bind(3, outcome.score)
          .run();
      worker_finished(lease.job_id, "idle", now);
      transaction.commit();
      return true;
    });
  }

  bool release(const JobLease& lease, std::string_view error) override {
    return guarded("release", [&] {
      Transaction transaction(db_);
      Id submission_id = 0;
      {
        auto row = db_.query(std::string("SELECT submission_id FROM jobs ") + kHeldJob);
        row.bind(1, lease.job_id).bind(2, lease.worker_id).bind(3, lease.attempt);
        if (!row.step()) return false;
        submission_id = row.int64(0);
      }
      release_locked(lease.job_id, submission_id, lease.attempt, error);
      worker_finished(lease.job_id, "idle", options_.now());
      transaction.commit();
      signal_->notify();
      return true;
    });
  }

  int requeue_expired(Time now) override {
    return guarded("requeue_expired", [&] {
      Transaction transaction(db_);
      int count = release_running("WHERE state = 'running' AND lease_expires_at < ?1", now,
                                  "lease expired");
      transaction.commit();
      if (count > 0) signal_->notify();
      return count;
    });
  }

  int recover_running_jobs() override {
    return guarded("recover_running_jobs", [&] {
      Transaction transaction(db_);
      int count = release_running("WHERE state = 'running' AND ?1 = ?1", options_.now(),
                                  "the server stopped while the job was running");
      transaction.commit();
      if (count > 0) signal_->notify();
      return count;
    });
  }

  bool wait_for_jobs(std::span<const std::string>, std::chrono::milliseconds timeout) override {
    if (!waited_) {
      waited_ = true;
      seen_generation_ = signal_->generation();
      return true;
    }
    return signal_->wait_past(seen_generation_, timeout);
  }

  void register_worker(const WorkerRegistration& worker) override {
    guarded("register_worker", [&] {
      if (worker.name.empty() || worker.gpu_type.empty()) {
        throw StoreError("register_worker", "a worker needs a name and a GPU type");
      }
      Transaction transaction(db_);
      Time now = options_.now();
      db_.query(
             "INSERT INTO workers (name, host, device, gpu_type, gpu_count, state, drain, "
             "started_at, heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, 'idle', 0, ?6, ?6) ON "
             "CONFLICT (name) DO UPDATE SET host = excluded.host, device = excluded.device, "
             "gpu_type = excluded.gpu_type, gpu_count = excluded.gpu_count, state = 'idle', "
             "current_job_id = NULL, drain = 0, started_at = excluded.started_at, heartbeat_at = "
             "excluded.heartbeat_at")
          .bind(1, worker.name)
          .bind(2, worker.host)
          .bind(3, worker.device)
          .bind(4, worker.gpu_type)
          .bind(5, worker.gpu_count)
          .bind(6, micros(now))
          .run();
      const int count =
          release_running("WHERE state = 'running' AND lease_owner = ?2 AND ?1 = ?1", now,
                          "the worker restarted while the job was running", worker.name);
      transaction.commit();
      if (count > 0) signal_->notify();
    });
  }

  bool worker_heartbeat(std::string_view name, std::string_view state) override {
    return guarded("worker_heartbeat", [&] {
      db_.query(
             "UPDATE workers SET state = CASE WHEN drain = 1 AND ?2 = 'busy' THEN 'draining' WHEN "
             "drain = 1 AND ?2 = 'idle' THEN 'drained' ELSE ?2 END, "
             "heartbeat_at = ?3 WHERE name = ?1")
          .bind(1, name)
          .bind(2, state)
          .bind(3, micros(options_.now()))
          .run();
      auto row = db_.query("SELECT drain FROM workers WHERE name = ?1");
      row.bind(1, name);
      return row.step() && row.int64(0) != 0;
    });
  }

  std::vector<WorkerStatus> list_workers() override {
    return guarded("list_workers", [&] {
      auto rows = db_.query(
          "SELECT name, host, device, gpu_type, gpu_count, state, current_job_id, drain, "
          "started_at, heartbeat_at FROM workers ORDER BY host, name");
      std::vector<WorkerStatus> workers;
      while (rows.step()) {
        WorkerStatus w;
        w.name = rows.text(0);
        w.host = rows.text(1);
        w.device = rows.text(2);
        w.gpu_type = rows.text(3);
        w.gpu_count = static_cast<int>(rows.int64(4));
        w.state = rows.text(5);
        w.current_job = rows.optional_int64(6);
        w.drain_requested = rows.int64(7) != 0;
        w.started_at = time_from_micros(rows.int64(8));
        w.heartbeat_at = time_from_micros(rows.int64(9));
        workers.push_back(std::move(w));
      }
      return workers;
    });
  }

  int request_drain(std::string_view name) override {
    return guarded("request_drain", [&] {
      db_.query(
             "UPDATE workers SET drain = 1, state = CASE WHEN current_job_id IS NULL THEN "
             "'drained' ELSE 'draining' END WHERE name = ?1 OR host = ?1")
          .bind(1, name)
          .run();
      return db_.changes();
    });
  }

  std::optional<std::int64_t> append_progress(const JobLease& lease,
                                              std::string_view event_json) override {
    return guarded("append_progress", [&]() -> std::optional<std::int64_t> {
      Transaction transaction(db_);
      {
        auto row = db_.query(std::string("SELECT 1 FROM jobs ") + kHeldJob);
        row.bind(1, lease.job_id).bind(2, lease.worker_id).bind(3, lease.attempt);
        if (!row.step()) return std::nullopt;
      }
      std::int64_t seq = 0;
      {
        auto row = db_.query("SELECT COALESCE(MAX(seq), 0) + 1 FROM job_events WHERE job_id = ?1");
        row.bind(1, lease.job_id);
        row.step();
        seq = row.int64(0);
      }
      db_.query("INSERT INTO job_events (job_id, seq, time, event_json) VALUES (?1, ?2, ?3, ?4)")
          .bind(1, lease.job_id)
          .bind(2, seq)
          .bind(3, micros(options_.now()))
          .bind(4, event_json)
          .run();
      transaction.commit();
      return seq;
    });
  }

  std::vector<ProgressEvent> progress_since(Id job_id, std::int64_t after_seq) override {
    return guarded("progress_since", [&] {
      auto rows = db_.query(
          "SELECT job_id, seq, time, event_json FROM job_events WHERE job_id = ?1 AND seq > ?2 "
          "ORDER BY seq");
      rows.bind(1, job_id).bind(2, after_seq);
      std::vector<ProgressEvent> events;
      while (rows.step()) {
        events.push_back(ProgressEvent{rows.int64(0), rows.int64(1),
                                       time_from_micros(rows.int64(2)), rows.text(3)});
      }
      return events;
    });
  }

  std::vector<RankedEntry> ranking(Id leaderboard_id, std::string_view gpu_type) override {
    return guarded("ranking", [&] {
      auto rows = db_.query(R"sql(
WITH eligible AS (
  SELECT s.user_id, s.id AS submission_id, s.created_at, r.score,
         ROW_NUMBER() OVER (PARTITION BY s.user_id ORDER BY r.score, s.created_at, s.id) AS nth
  FROM submissions s JOIN runs r ON r.submission_id = s.id
  WHERE s.leaderboard_id = ?1 AND s.gpu_type = ?2 AND s.hacked = 0
    AND r.mode = 'leaderboard' AND r.passed = 1 AND r.secret = 0 AND r.score IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM runs f WHERE f.submission_id = s.id AND f.secret = 1
                    AND f.passed = 0)
)
SELECT e.user_id, u.name, e.submission_id, s.file_name, e.score, e.created_at
FROM eligible e JOIN users u ON u.id = e.user_id JOIN submissions s ON s.id = e.submission_id
WHERE e.nth = 1
ORDER BY e.score, e.created_at, e.submission_id)sql");
      rows.bind(1, leaderboard_id).bind(2, gpu_type);
      std::vector<RankedEntry> entries;
      while (rows.step()) {
        RankedEntry entry;
        entry.user_id = rows.int64(0);
        entry.user_name = rows.text(1);
        entry.submission_id = rows.int64(2);
        entry.file_name = rows.text(3);
        entry.score = rows.real(4);
        entry.submitted_at = time_from_micros(rows.int64(5));
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
      Time now = options_.now();
      Time start = now - window;
      constexpr const char* kInWindow =
          "FROM submissions WHERE user_id = ?1 AND leaderboard_id = ?2 AND created_at > ?3 AND "
          "created_at <= ?4 AND (?5 = '' OR mode = ?5)";
      RateWindow result;
      {
        auto row = db_.query(std::string("SELECT COUNT(*) ") + kInWindow);
        row.bind(1, user_id).bind(2, leaderboard_id).bind(3, micros(start)).bind(4, micros(now));
        row.bind(5, mode);
        row.step();
        result.submissions = static_cast<int>(row.int64(0));
      }
      if (result.submissions < max_submissions) return result;
      if (max_submissions <= 0) {
        result.retry_after = window;
        return result;
      }
      // The limit frees up when the submission that puts the count at max leaves the window.
      auto row = db_.query(std::string("SELECT created_at ") + kInWindow +
                           " ORDER BY created_at LIMIT 1 "
                           "OFFSET ?6");
      row.bind(1, user_id).bind(2, leaderboard_id).bind(3, micros(start)).bind(4, micros(now));
      row.bind(5, mode).bind(6, result.submissions - max_submissions);
      row.step();
      auto frees_at = time_from_micros(row.int64(0)) + window;
      auto wait = std::chrono::ceil<std::chrono::seconds>(frees_at - now);
      result.retry_after = std::max(wait, std::chrono::seconds(1));
      return result;
    });
  }

  void for_each_submission_record(
      std::span<const Id> leaderboard_ids, RecordCode code,
      const std::function<void(const SubmissionRecord&)>& visit) override {
    guarded("for_each_submission_record", [&] {
      std::string filter;
      for (Id id : leaderboard_ids) {
        filter += (filter.empty() ? "" : ", ") + std::to_string(id);
      }
      // `+s.leaderboard_id`: no index for the filter, so that SQLite scans the submissions in id
      // order. With submissions_by_leaderboard it read them by leaderboard and sorted the rows
      // by id in a temporary B-tree, code included: a whole export's code (hundreds of MB)
      // written to temporary files and read back. The scan reads every submission's row
      // (without its code) when only some leaderboards are selected: small rows, one pass.
      const std::string where =
          filter.empty() ? "" : "WHERE +s.leaderboard_id IN (" + filter + ") ";
      // Reads the database file through a memory map: a whole export is hundreds of MB of code,
      // and one pread per 4 KiB page costs more than the copy.
      MmapSize mmap(db_);
      // The same snapshot for both reads.
      Transaction transaction(db_);
      auto runs = db_.query(std::string(kRunColumns) +
                            "WHERE submission_id IN (SELECT s.id FROM submissions s " + where +
                            ") ORDER BY submission_id, id");
      bool run_ready = runs.step();
      const bool with_code = code == RecordCode::with;
      auto rows = db_.query(
          "SELECT s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id, "
          "c.sha256, s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked" +
          std::string(with_code ? ", c.code" : "") +
          " FROM submissions s JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id "
          "= s.leaderboard_id JOIN code_files c ON c.id = s.code_id " +
          where + "ORDER BY s.id");
      SubmissionRecord record;
      while (rows.step()) {
        record.submission = read_submission(rows);
        if (with_code) rows.blob_into(15, record.code);
        record.runs.clear();
        while (run_ready && runs.int64(1) < record.submission.id) run_ready = runs.step();
        while (run_ready && runs.int64(1) == record.submission.id) {
          record.runs.push_back(read_run(runs));
          run_ready = runs.step();
        }
        visit(record);
      }
      transaction.commit();
    });
  }

  int import_submissions(std::span<const NewLeaderboard> leaderboards, std::vector<Id>& created,
                         const std::function<bool(ImportedSubmission&)>& next) override {
    return guarded("import_submissions", [&] {
      // A page cache large enough for the indexes this transaction keeps touching (the default
      // 2 MiB spills them to the WAL and reads them back on every row); safe: only memory. No
      // memory map: in WAL mode SQLite looks each page read through the map up in the WAL index
      // first, a lookup that grows with the WAL this transaction writes.
      CacheSize cache(db_, kImportCacheKiB);
      RollbackJournalWhenAlone journal(db_);
      Transaction transaction(db_);
      created.clear();
      for (const auto& leaderboard : leaderboards) {
        created.push_back(insert_leaderboard_locked(leaderboard));
      }
      const Time now = options_.now();
      int added = 0;
      std::unordered_map<std::string, Id> users;
      Id checked_leaderboard = 0;
      ImportPrefetch prefetch(next);
      while (auto* slot = prefetch.acquire()) {
        struct Release {
          ImportPrefetch& prefetch;
          ~Release() { prefetch.release(); }
        } release{prefetch};
        const ImportedSubmission& s = slot->submission;
        if (s.leaderboard_id != checked_leaderboard) {
          require_leaderboard("import_submissions", s.leaderboard_id);
          checked_leaderboard = s.leaderboard_id;
        }
        Id user_id = 0;
        if (auto known = users.find(s.user_name); known != users.end()) {
          user_id = known->second;
        } else {
          auto row = db_.query("SELECT id FROM users WHERE name = ?1");
          row.bind(1, s.user_name);
          if (row.step()) user_id = row.int64(0);
        }
        if (user_id == 0) {
          db_.query("INSERT INTO users (name, is_admin, created_at) VALUES (?1, 0, ?2)")
              .bind(1, s.user_name)
              .bind(2, micros(now))
              .run();
          user_id = db_.last_insert_id();
        }
        users.emplace(s.user_name, user_id);
        const Id code_id = put_code_locked(s.code, slot->code_sha256);
        {
          auto row = db_.query(
              "SELECT 1 FROM submissions WHERE user_id = ?1 AND leaderboard_id = ?2 AND "
              "created_at = ?3 AND code_id = ?4 AND gpu_type = ?5 AND mode = ?6 AND file_name = ?7 "
              "LIMIT 1");
          row.bind(1, user_id).bind(2, s.leaderboard_id).bind(3, micros(s.created_at));
          row.bind(4, code_id).bind(5, s.gpu_type).bind(6, s.mode).bind(7, s.file_name);
          if (row.step()) continue;
        }
        db_.query(
               "INSERT INTO submissions (user_id, leaderboard_id, file_name, code_id, gpu_type, "
               "mode, created_at, status, verdict, score, hacked) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
               "?7, 'done', ?8, ?9, ?10)")
            .bind(1, user_id)
            .bind(2, s.leaderboard_id)
            .bind(3, s.file_name)
            .bind(4, code_id)
            .bind(5, s.gpu_type)
            .bind(6, s.mode)
            .bind(7, micros(s.created_at))
            .bind(8, s.verdict)
            .bind(9, s.score)
            .bind(10, s.hacked)
            .run();
        const Id submission_id = db_.last_insert_id();
        db_.query(
               "INSERT INTO jobs (submission_id, gpu_type, state, created_at, updated_at) VALUES "
               "(?1, ?2, 'done', ?3, ?4)")
            .bind(1, submission_id)
            .bind(2, s.gpu_type)
            .bind(3, micros(s.created_at))
            .bind(4, micros(now))
            .run();
        const Id job_id = db_.last_insert_id();
        for (const auto& run : s.runs) {
          db_.query(
                 "INSERT INTO runs (submission_id, job_id, mode, runner, secret, score, passed, "
                 "compilation_json, result_json, system_json, start_time, end_time) VALUES (?1, "
                 "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")
              .bind(1, submission_id)
              .bind(2, job_id)
              .bind(3, run.mode)
              .bind(4, run.runner)
              .bind(5, run.secret)
              .bind(6, run.score)
              .bind(7, run.passed)
              .bind(8, run.compilation_json)
              .bind(9, run.result_json)
              .bind(10, run.system_json)
              .bind(11, micros(run.start_time))
              .bind(12, micros(run.end_time))
              .run();
        }
        ++added;
      }
      transaction.commit();
      return added;
    });
  }

 private:
  template <typename Body>
  auto guarded(const char* operation, Body&& body) -> decltype(body()) {
    std::lock_guard lock(mutex_);
    try {
      return body();
    } catch (const StoreError&) {
      throw;
    } catch (const std::exception& error) {
      throw StoreError(operation, error.what());
    }
  }

  static StoreError unknown_leaderboard(const char* operation, std::string_view name) {
    return StoreError(operation, "no leaderboard named " + quoted(name));
  }

  int current_version() {
    auto row = db_.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    row.step();
    return static_cast<int>(row.int64(0));
  }

  // While an import holds the store with a rollback journal (RollbackJournalWhenAlone), SQLite
  // refuses the switch back to WAL at once (SQLITE_BUSY, without calling the busy handler): wait
  // for the import here as for any other writer, up to the busy timeout.
  void switch_to_wal(const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + options_.busy_timeout;
    while (true) {
      try {
        auto mode = db_.query("PRAGMA journal_mode = WAL");
        if (mode.step() && mode.text(0) != "wal" && path != ":memory:") {
          throw StoreError("open",
                           "cannot switch " + path + " to WAL mode (got " + mode.text(0) + ")");
        }
        return;
      } catch (const SqliteError& error) {
        if ((error.code() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
          throw;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void migrate(const std::string& path) {
    try {
      db_.exec(
          "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT "
          "NOT NULL, applied_at INTEGER NOT NULL)");
      Transaction transaction(db_);
      int current = current_version();
      if (current > latest_schema_version()) {
        throw StoreError("open", path + " has schema version " + std::to_string(current) +
                                     ", newer than this kj knows (" +
                                     std::to_string(latest_schema_version()) + "); use a newer kj");
      }
      for (const auto& migration : sqlite_migrations()) {
        if (migration.version <= current) continue;
        db_.exec(migration.sql);
        db_.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)")
            .bind(1, migration.version)
            .bind(2, migration.name)
            .bind(3, micros(options_.now()))
            .run();
      }
      transaction.commit();
    } catch (const StoreError&) {
      throw;
    } catch (const std::exception& error) {
      throw StoreError("open", "migrating " + path + ": " + error.what());
    }
  }

  template <typename Key>
  std::optional<Leaderboard> leaderboard_where(const char* where, const Key& key) {
    std::optional<Leaderboard> leaderboard;
    {
      auto row = db_.query(std::string(kLeaderboardColumns) + where);
      row.bind(1, key);
      if (!row.step()) return std::nullopt;
      leaderboard.emplace();
      leaderboard->id = row.int64(0);
      leaderboard->name = row.text(1);
      leaderboard->problem_dir = row.text(2);
      leaderboard->task_yaml = row.text(3);
      leaderboard->description = row.text(4);
      leaderboard->deadline = optional_time(row, 5);
      leaderboard->visibility = visibility_from_string(row.text(6)).value_or(Visibility::hidden);
      leaderboard->created_at = time_from_micros(row.int64(7));
      leaderboard->synced_at = time_from_micros(row.int64(8));
    }
    auto gpus = db_.query(
        "SELECT gpu_type FROM leaderboard_gpu_types WHERE leaderboard_id = ?1 ORDER BY gpu_type");
    gpus.bind(1, leaderboard->id);
    while (gpus.step()) leaderboard->gpu_types.push_back(gpus.text(0));
    return leaderboard;
  }

  std::optional<Submission> submission_by_id(Id id) {
    auto row = db_.query(std::string(kSubmissionColumns) + "WHERE s.id = ?1");
    row.bind(1, id);
    if (!row.step()) return std::nullopt;
    return read_submission(row);
  }

  std::optional<Job> job_by_id(Id id) {
    auto row = db_.query(std::string(kJobColumns) + "WHERE id = ?1");
    row.bind(1, id);
    if (!row.step()) return std::nullopt;
    return read_job(row);
  }

  void require_user(const char* operation, Id user_id) {
    auto row = db_.query("SELECT 1 FROM users WHERE id = ?1");
    row.bind(1, user_id);
    if (!row.step()) throw StoreError(operation, "no user with id " + std::to_string(user_id));
  }

  void require_leaderboard(const char* operation, Id leaderboard_id) {
    auto row = db_.query("SELECT 1 FROM leaderboards WHERE id = ?1");
    row.bind(1, leaderboard_id);
    if (!row.step()) {
      throw StoreError(operation, "no leaderboard with id " + std::to_string(leaderboard_id));
    }
  }

  std::pair<Id, std::string> put_code_locked(std::string_view code) {
    std::string hash = to_hex(sha256(code));
    return {put_code_locked(code, hash), hash};
  }

  // The leaderboard's rows, inside the caller's transaction; its id.
  Id insert_leaderboard_locked(const NewLeaderboard& leaderboard) {
    auto seed_bytes = random_bytes(8);
    std::uint64_t seed = 0;
    std::memcpy(&seed, seed_bytes.data(), sizeof seed);
    // 53 bits: exact in every JSON reader, far beyond guessing.
    seed &= (std::uint64_t{1} << 53) - 1;
    Time now = options_.now();
    try {
      db_.query(
             "INSERT INTO leaderboards (name, problem_dir, task_yaml, description, deadline, "
             "secret_seed, visibility, created_at, synced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
             "?7, ?8, ?8)")
          .bind(1, leaderboard.name)
          .bind(2, leaderboard.problem_dir)
          .bind(3, leaderboard.task_yaml)
          .bind(4, leaderboard.description)
          .bind(5, leaderboard.deadline ? std::optional<std::int64_t>(micros(*leaderboard.deadline))
                                        : std::nullopt)
          .bind(6, static_cast<std::int64_t>(seed))
          .bind(7, to_string(leaderboard.visibility))
          .bind(8, micros(now))
          .run();
    } catch (const SqliteError& error) {
      if (is_unique_violation(error)) {
        throw StoreError("create_leaderboard",
                         "a leaderboard named " + quoted(leaderboard.name) + " already exists");
      }
      throw;
    }
    Id id = db_.last_insert_id();
    for (const auto& gpu_type : leaderboard.gpu_types) {
      db_.query(
             "INSERT OR IGNORE INTO leaderboard_gpu_types (leaderboard_id, gpu_type) VALUES (?1, "
             "?2)")
          .bind(1, id)
          .bind(2, gpu_type)
          .run();
    }
    return id;
  }

  Id put_code_locked(std::string_view code, const std::string& hash) {
    db_.query(
           "INSERT INTO code_files (sha256, code, created_at) VALUES (?1, ?2, ?3) ON CONFLICT "
           "(sha256) DO NOTHING")
        .bind(1, hash)
        .bind_blob(2, code.data(), code.size())
        .bind(3, micros(options_.now()))
        .run();
    if (db_.changes() == 1) return db_.last_insert_id();
    auto row = db_.query("SELECT id FROM code_files WHERE sha256 = ?1");
    row.bind(1, hash);
    row.step();
    return row.int64(0);
  }

  // gpus_needed 0: as many as the submission's earlier jobs needed (a re-queue).
  Id insert_job(Id submission_id, std::string_view gpu_type, Time now, int gpus_needed) {
    db_.query(
           "INSERT INTO jobs (submission_id, gpu_type, state, created_at, updated_at, "
           "gpus_needed) VALUES (?1, ?2, 'queued', ?3, ?3, COALESCE(NULLIF(?4, 0), (SELECT "
           "MAX(gpus_needed) FROM jobs WHERE submission_id = ?1), 1))")
        .bind(1, submission_id)
        .bind(2, gpu_type)
        .bind(3, micros(now))
        .bind(4, static_cast<std::int64_t>(gpus_needed))
        .run();
    return db_.last_insert_id();
  }

  // Back to the queue, or failed once it was claimed max_attempts times.
  void release_locked(Id job_id, Id submission_id, int attempts, std::string_view error) {
    Time now = options_.now();
    if (attempts >= options_.max_attempts) {
      std::string reason = "internal_error: " + std::string(error) + " (after " +
                           std::to_string(attempts) + " attempts)";
      db_.query(
             "UPDATE jobs SET state = 'failed', lease_expires_at = NULL, error = ?2, updated_at "
             "= ?3 WHERE id = ?1")
          .bind(1, job_id)
          .bind(2, reason)
          .bind(3, micros(now))
          .run();
      db_.query(
             "UPDATE submissions SET status = 'failed', verdict = 'internal_error', score = NULL "
             "WHERE id = ?1")
          .bind(1, submission_id)
          .run();
      return;
    }
    db_.query(
           "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, error "
           "= ?2, updated_at = ?3 WHERE id = ?1")
        .bind(1, job_id)
        .bind(2, error)
        .bind(3, micros(now))
        .run();
    db_.query("UPDATE submissions SET status = 'queued' WHERE id = ?1")
        .bind(1, submission_id)
        .run();
  }

  // A worker's job ended: idle again (drained when a drain was requested), or `lost` when the
  // sweeper took the job from a worker presumed dead.
  void worker_finished(Id job_id, const char* state, Time now) {
    db_.query(
           "UPDATE workers SET state = CASE WHEN drain = 1 THEN 'drained' ELSE ?2 END, "
           "current_job_id = NULL, heartbeat_at = CASE WHEN ?2 = 'lost' THEN heartbeat_at ELSE "
           "?3 END WHERE current_job_id = ?1")
        .bind(1, job_id)
        .bind(2, state)
        .bind(3, micros(now))
        .run();
  }

  int release_running(const char* where, Time now, std::string_view error,
                      std::string_view owner = {}) {
    struct Abandoned {
      Id job_id;
      Id submission_id;
      int attempts;
    };
    std::vector<Abandoned> abandoned;
    {
      auto rows = db_.query(std::string("SELECT id, submission_id, attempts FROM jobs ") + where);
      rows.bind(1, micros(now));
      if (!owner.empty()) rows.bind(2, owner);
      while (rows.step()) {
        abandoned.push_back({rows.int64(0), rows.int64(1), static_cast<int>(rows.int64(2))});
      }
    }
    for (const auto& job : abandoned) {
      release_locked(job.job_id, job.submission_id, job.attempts, error);
      worker_finished(job.job_id, "lost", now);
    }
    return static_cast<int>(abandoned.size());
  }

  std::mutex mutex_;
  StoreOptions options_;
  Connection db_;
  std::shared_ptr<QueueSignal> signal_;
  bool waited_ = false;
  std::uint64_t seen_generation_ = 0;
};

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path, StoreOptions options) {
  try {
    return std::make_unique<SqliteStore>(path, std::move(options));
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& error) {
    throw StoreError("open", error.what());
  }
}

}  // namespace kj::store::detail
