// The PostgreSQL backend: one connection (reconnected with backoff when the server goes away),
// every operation one transaction; the queue claims with FOR UPDATE SKIP LOCKED and wakes
// waiting workers with LISTEN/NOTIFY on a second connection.
#include "store/detail/postgres_store.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "store/detail/crypto.h"
#include "store/detail/libpq.h"
#include "store/detail/postgres_schema.h"
#include "store/store.h"

namespace kj::store::detail {
namespace {

constexpr const char* kJobsChannel = "kj_jobs";
// Held while migrating, so servers starting together migrate once.
constexpr std::int64_t kMigrationLockKey = 0x6b6a5f6d696772;  // "kj_migr"

std::int64_t micros(Time time) { return time.time_since_epoch().count(); }
Time time_from_micros(std::int64_t value) { return Time(std::chrono::microseconds(value)); }
std::optional<Time> optional_time(const PgResult& result, int row, int column) {
  auto value = result.optional_int64(row, column);
  if (!value) return std::nullopt;
  return time_from_micros(*value);
}
PgParam pg_time(Time time) { return pg(micros(time)); }
PgParam pg_time(std::optional<Time> time) {
  return time ? pg(micros(*time)) : PgParam{std::nullopt, false};
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
constexpr const char* kJobFields =
    "id, submission_id, gpu_type, state, attempts, lease_owner, lease_expires_at, error, "
    "created_at, updated_at";
constexpr const char* kRunColumns =
    "SELECT id, submission_id, job_id, mode, runner, secret, score, passed, compilation_json, "
    "result_json, system_json, start_time, end_time FROM runs ";
constexpr const char* kHeldJob =
    "WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3";

// The queue's hot statements, prepared once per connection. Parameters of each in its comment.

// $1 GPU types (text[]), $2 worker, $3 lease expiry, $4 now, $5 most GPUs. One statement, one round
// trip: the oldest queued job that no other transaction holds and that this worker may take is
// leased, its submission marked running and the worker busy; returns the job (kJobFields), then
// from kClaimedSubmissionColumn on the submission (kSubmissionColumns' order), its code, problem
// directory, task snapshot and secret seed. Who may take a job is the `next` CTE's WHERE.
constexpr PgStatement kClaimNextJob{"kj_claim_next_job", R"sql(
WITH next AS (
  SELECT id FROM jobs
  WHERE state = 'queued'
    AND gpu_type = ANY($1::text[])
    AND gpus_needed <= $5
    AND NOT EXISTS (SELECT 1 FROM workers WHERE name = $2 AND drain = 1)
  ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED),
claimed AS (
  UPDATE jobs j SET state = 'running', attempts = j.attempts + 1, lease_owner = $2,
                    lease_expires_at = $3, updated_at = $4
  FROM next WHERE j.id = next.id
  RETURNING j.id, j.submission_id, j.gpu_type, j.state, j.attempts, j.lease_owner,
            j.lease_expires_at, j.error, j.created_at, j.updated_at),
running AS (
  UPDATE submissions s SET status = 'running' FROM claimed WHERE s.id = claimed.submission_id),
busy AS (
  UPDATE workers w SET state = 'busy', current_job_id = claimed.id, heartbeat_at = $4
  FROM claimed WHERE w.name = $2)
SELECT claimed.*, s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id,
       c.sha256, s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked,
       c.code, l.problem_dir, l.task_yaml, l.secret_seed
FROM claimed JOIN submissions s ON s.id = claimed.submission_id
JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id = s.leaderboard_id
JOIN code_files c ON c.id = s.code_id)sql"};
constexpr int kClaimedSubmissionColumn = 10;

// $1 job, $2 worker, $3 attempt, $4 lease expiry, $5 now.
constexpr PgStatement kHeartbeat{
    "kj_heartbeat",
    "UPDATE jobs SET lease_expires_at = $4, updated_at = $5 WHERE id = $1 AND state = 'running' "
    "AND lease_owner = $2 AND attempts = $3"};

// $1 job, $2 worker, $3 attempt, $4 now, $5 verdict, $6 score, $7-$16 the runs, one array per
// column (run_columns). The fencing check is `held`: the job row is locked and re-checked when
// another transaction (a sweeper) changed it first, and every other part acts only on the row
// `held` returns, so a worker that lost its lease records nothing. Returns a row when recorded.
constexpr PgStatement kComplete{"kj_complete", R"sql(
WITH held AS (
  UPDATE jobs SET state = 'done', lease_expires_at = NULL, error = '', updated_at = $4
  WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3
  RETURNING id, submission_id),
recorded AS (
  INSERT INTO runs (submission_id, job_id, mode, runner, compilation_json, result_json,
                    system_json, secret, score, passed, start_time, end_time)
  SELECT held.submission_id, held.id, r.mode, r.runner, r.compilation_json, r.result_json,
         r.system_json, r.secret, r.score, r.passed, r.start_time, r.end_time
  FROM held, unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                    $12::integer[], $13::float8[], $14::integer[], $15::bigint[], $16::bigint[])
       WITH ORDINALITY AS r(mode, runner, compilation_json, result_json, system_json, secret,
                            score, passed, start_time, end_time, n)
  ORDER BY r.n),
finished AS (
  UPDATE submissions s SET status = 'done', verdict = $5, score = $6
  FROM held WHERE s.id = held.submission_id),
idle AS (
  UPDATE workers w SET state = CASE WHEN w.drain = 1 THEN 'drained' ELSE 'idle' END,
                       current_job_id = NULL, heartbeat_at = $4
  FROM held WHERE w.current_job_id = held.id)
SELECT submission_id FROM held)sql"};

// $1 job, $2 worker, $3 attempt: a row when that lease's completion was recorded.
constexpr PgStatement kCompletedUnderLease{
    "kj_completed_under_lease",
    "SELECT 1 FROM jobs WHERE id = $1 AND state = 'done' AND lease_owner = $2 AND attempts = $3"};

// kComplete's $7-$16: the runs' columns as arrays, in run order.
std::vector<std::vector<PgParam>> run_columns(const std::vector<NewRun>& runs) {
  std::vector<std::vector<PgParam>> columns(10);
  for (const auto& run : runs) {
    columns[0].push_back(pg(run.mode));
    columns[1].push_back(pg(run.runner));
    columns[2].push_back(pg(run.compilation_json));
    columns[3].push_back(pg(run.result_json));
    columns[4].push_back(pg(run.system_json));
    columns[5].push_back(pg(run.secret));
    columns[6].push_back(pg(run.score));
    columns[7].push_back(pg(run.passed));
    columns[8].push_back(pg_time(run.start_time));
    columns[9].push_back(pg_time(run.end_time));
  }
  return columns;
}

// Row i; the columns of kSubmissionColumns start at column `first`.
Submission read_submission(const PgResult& r, int i, int first = 0) {
  Submission submission;
  submission.id = r.int64(i, first + 0);
  submission.user_id = r.int64(i, first + 1);
  submission.user_name = r.text(i, first + 2);
  submission.leaderboard_id = r.int64(i, first + 3);
  submission.leaderboard_name = r.text(i, first + 4);
  submission.file_name = r.text(i, first + 5);
  submission.code_id = r.int64(i, first + 6);
  submission.code_sha256 = r.text(i, first + 7);
  submission.gpu_type = r.text(i, first + 8);
  submission.mode = r.text(i, first + 9);
  submission.created_at = time_from_micros(r.int64(i, first + 10));
  submission.status = submission_status_from_text(r.text(i, first + 11));
  submission.verdict = r.is_null(i, first + 12) ? "" : r.text(i, first + 12);
  submission.score = r.optional_real(i, first + 13);
  submission.hacked = r.int64(i, first + 14) != 0;
  return submission;
}

Job read_job(const PgResult& r, int i) {
  Job job;
  job.id = r.int64(i, 0);
  job.submission_id = r.int64(i, 1);
  job.gpu_type = r.text(i, 2);
  job.state = job_state_from_text(r.text(i, 3));
  job.attempts = static_cast<int>(r.int64(i, 4));
  job.lease_owner = r.is_null(i, 5) ? "" : r.text(i, 5);
  job.lease_expires_at = optional_time(r, i, 6);
  job.error = r.text(i, 7);
  job.created_at = time_from_micros(r.int64(i, 8));
  job.updated_at = time_from_micros(r.int64(i, 9));
  return job;
}

Run read_run(const PgResult& r, int i) {
  Run run;
  run.id = r.int64(i, 0);
  run.submission_id = r.int64(i, 1);
  run.job_id = r.int64(i, 2);
  run.mode = r.text(i, 3);
  run.runner = r.text(i, 4);
  run.secret = r.int64(i, 5) != 0;
  run.score = r.optional_real(i, 6);
  run.passed = r.int64(i, 7) != 0;
  run.compilation_json = r.text(i, 8);
  run.result_json = r.text(i, 9);
  run.system_json = r.text(i, 10);
  run.start_time = time_from_micros(r.int64(i, 11));
  run.end_time = time_from_micros(r.int64(i, 12));
  return run;
}

User read_user(const PgResult& r, int i) {
  return User{r.int64(i, 0), r.text(i, 1), r.int64(i, 2) != 0, time_from_micros(r.int64(i, 3))};
}

// Connects, retrying with exponential backoff until `patience` ran out.
PgConnection connect_with_backoff(const std::string& url, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  std::chrono::milliseconds pause{50};
  while (true) {
    try {
      return PgConnection(url);
    } catch (const PgError& error) {
      if (std::chrono::steady_clock::now() + pause > deadline) throw;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(2));
  }
}

// The URL without its password, for messages.
std::string redacted(const std::string& url) {
  const auto scheme = url.find("://");
  const auto at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return url;
  const auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

class PostgresStore final : public Store {
 public:
  PostgresStore(const std::string& url, StoreOptions options)
      : url_(url), options_(std::move(options)) {
    if (!options_.now) {
      options_.now = [] {
        return std::chrono::time_point_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now());
      };
    }
    try {
      db_.emplace(connect_with_backoff(url_, options_.busy_timeout));
      migrate();
    } catch (const StoreError&) {
      throw;
    } catch (const std::exception& error) {
      throw StoreError("open", redacted(url_) + ": " + error.what());
    }
  }

  int schema_version() override {
    return guarded("schema_version", [&] { return current_version(); });
  }

  Leaderboard create_leaderboard(const NewLeaderboard& leaderboard) override {
    return guarded("create_leaderboard", [&] {
      PgTransaction transaction(db());
      const Id id = insert_leaderboard_locked(leaderboard);
      auto created = leaderboard_where("WHERE id = $1", pg(id));
      transaction.commit();
      return *created;
    });
  }

  std::optional<Leaderboard> get_leaderboard(std::string_view name) override {
    return guarded("get_leaderboard",
                   [&] { return leaderboard_where("WHERE name = $1", pg(name)); });
  }

  std::vector<Leaderboard> list_leaderboards(bool include_hidden) override {
    return guarded("list_leaderboards", [&] {
      auto rows = db().exec(
          "SELECT id FROM leaderboards WHERE $1::int = 1 OR visibility = 'public' ORDER BY name",
          {pg(include_hidden)});
      std::vector<Leaderboard> leaderboards;
      for (int i = 0; i < rows.rows(); ++i) {
        leaderboards.push_back(*leaderboard_where("WHERE id = $1", pg(rows.int64(i, 0))));
      }
      return leaderboards;
    });
  }

  void set_leaderboard_deadline(std::string_view name, std::optional<Time> deadline) override {
    guarded("set_leaderboard_deadline", [&] {
      auto result = db().exec("UPDATE leaderboards SET deadline = $2 WHERE name = $1",
                              {pg(name), pg_time(deadline)});
      if (result.affected() != 1) throw unknown_leaderboard("set_leaderboard_deadline", name);
    });
  }

  void set_leaderboard_visibility(std::string_view name, Visibility visibility) override {
    guarded("set_leaderboard_visibility", [&] {
      auto result = db().exec("UPDATE leaderboards SET visibility = $2 WHERE name = $1",
                              {pg(name), pg(to_string(visibility))});
      if (result.affected() != 1) throw unknown_leaderboard("set_leaderboard_visibility", name);
    });
  }

  Leaderboard sync_leaderboard(std::string_view name, std::string_view task_yaml,
                               std::string_view description) override {
    return guarded("sync_leaderboard", [&] {
      PgTransaction transaction(db());
      auto result = db().exec(
          "UPDATE leaderboards SET task_yaml = $2, description = $3, synced_at = $4 WHERE name "
          "= $1",
          {pg(name), pg(task_yaml), pg(description), pg_time(options_.now())});
      if (result.affected() != 1) throw unknown_leaderboard("sync_leaderboard", name);
      auto synced = leaderboard_where("WHERE name = $1", pg(name));
      transaction.commit();
      return *synced;
    });
  }

  std::int64_t leaderboard_secret_seed(std::string_view name) override {
    return guarded("leaderboard_secret_seed", [&] {
      auto row = db().exec("SELECT secret_seed FROM leaderboards WHERE name = $1", {pg(name)});
      if (row.empty()) throw unknown_leaderboard("leaderboard_secret_seed", name);
      return row.int64(0, 0);
    });
  }

  User create_user(std::string_view name, bool is_admin) override {
    return guarded("create_user", [&] {
      PgTransaction transaction(db());
      Time now = options_.now();
      Id id = 0;
      try {
        id = db().exec(
                     "INSERT INTO users (name, is_admin, created_at) VALUES ($1, $2, $3) "
                     "RETURNING id",
                     {pg(name), pg(is_admin), pg_time(now)})
                 .int64(0, 0);
      } catch (const PgError& error) {
        if (error.unique_violation()) {
          throw StoreError("create_user", "a user named " + quoted(name) + " already exists");
        }
        throw;
      }
      transaction.commit();
      return User{id, std::string(name), is_admin, now};
    });
  }

  std::optional<User> get_user(std::string_view name) override {
    return guarded("get_user", [&]() -> std::optional<User> {
      auto row =
          db().exec("SELECT id, name, is_admin, created_at FROM users WHERE name = $1", {pg(name)});
      if (row.empty()) return std::nullopt;
      return read_user(row, 0);
    });
  }

  IssuedToken create_token(Id user_id, std::string_view label) override {
    return guarded("create_token", [&] {
      PgTransaction transaction(db());
      require_user("create_token", user_id);
      auto bytes = random_bytes(32);
      IssuedToken issued;
      issued.token = "kj_" + to_hex(bytes.data(), bytes.size());
      auto digest = sha256(issued.token);
      issued.token_id = db().exec(
                                "INSERT INTO api_tokens (user_id, token_sha256, label, "
                                "created_at) VALUES ($1, $2, $3, $4) RETURNING id",
                                {pg(user_id), pg_bytes(digest.data(), digest.size()), pg(label),
                                 pg_time(options_.now())})
                            .int64(0, 0);
      transaction.commit();
      return issued;
    });
  }

  std::optional<User> user_for_token(std::string_view token) override {
    return guarded("user_for_token", [&]() -> std::optional<User> {
      auto digest = sha256(token);
      auto row = db().exec(
          "SELECT u.id, u.name, u.is_admin, u.created_at, t.token_sha256 FROM api_tokens t JOIN "
          "users u ON u.id = t.user_id WHERE t.token_sha256 = $1 AND t.revoked_at IS NULL",
          {pg_bytes(digest.data(), digest.size())});
      if (row.empty()) return std::nullopt;
      std::string stored = row.bytes(0, 4);
      if (!equal_digests(digest, reinterpret_cast<const unsigned char*>(stored.data()),
                         stored.size())) {
        return std::nullopt;
      }
      return read_user(row, 0);
    });
  }

  bool revoke_token(Id token_id) override {
    return guarded("revoke_token", [&] {
      return db().exec("UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                       {pg(token_id), pg_time(options_.now())})
                 .affected() == 1;
    });
  }

  std::string put_code(std::string_view code) override {
    return guarded("put_code", [&] {
      PgTransaction transaction(db());
      auto [id, hash] = put_code_locked(code);
      transaction.commit();
      return hash;
    });
  }

  std::optional<std::string> get_code(std::string_view sha256_hex) override {
    return guarded("get_code", [&]() -> std::optional<std::string> {
      auto row = db().exec("SELECT code FROM code_files WHERE sha256 = $1", {pg(sha256_hex)});
      if (row.empty()) return std::nullopt;
      return row.bytes(0, 0);
    });
  }

  Submission create_submission(const NewSubmission& submission) override {
    return guarded("create_submission", [&] {
      PgTransaction transaction(db());
      require_user("create_submission", submission.user_id);
      require_leaderboard("create_submission", submission.leaderboard_id);
      auto [code_id, hash] = put_code_locked(submission.code);
      Time now = options_.now();
      Id id =
          db().exec(
                  "INSERT INTO submissions (user_id, leaderboard_id, file_name, code_id, "
                  "gpu_type, mode, created_at, status) VALUES ($1, $2, $3, $4, $5, $6, $7, "
                  "'queued') RETURNING id",
                  {pg(submission.user_id), pg(submission.leaderboard_id), pg(submission.file_name),
                   pg(code_id), pg(submission.gpu_type), pg(submission.mode), pg_time(now)})
              .int64(0, 0);
      insert_job(id, submission.gpu_type, now, std::max(1, submission.gpus_needed));
      auto created = submission_by_id(id);
      transaction.commit();
      return *created;
    });
  }

  std::optional<Submission> get_submission(Id submission_id) override {
    return guarded("get_submission", [&] { return submission_by_id(submission_id); });
  }

  std::vector<Submission> user_submissions(Id user_id, Id leaderboard_id, int limit) override {
    return guarded("user_submissions", [&] {
      auto rows = db().exec(std::string(kSubmissionColumns) +
                                "WHERE s.user_id = $1 AND ($2::bigint = 0 OR s.leaderboard_id = "
                                "$2::bigint) ORDER BY s.created_at DESC, s.id DESC LIMIT $3",
                            {pg(user_id), pg(leaderboard_id), pg(limit)});
      std::vector<Submission> submissions;
      for (int i = 0; i < rows.rows(); ++i) submissions.push_back(read_submission(rows, i));
      return submissions;
    });
  }

  void set_submission_hacked(Id submission_id, bool hacked) override {
    guarded("set_submission_hacked", [&] {
      auto result = db().exec("UPDATE submissions SET hacked = $2 WHERE id = $1",
                              {pg(submission_id), pg(hacked)});
      if (result.affected() != 1) {
        throw StoreError("set_submission_hacked",
                         "no submission with id " + std::to_string(submission_id));
      }
    });
  }

  bool delete_submission(Id submission_id) override {
    return guarded("delete_submission", [&] {
      PgTransaction transaction(db());
      // Jobs, runs and progress go with it (ON DELETE CASCADE).
      auto deleted =
          db().exec("DELETE FROM submissions WHERE id = $1 RETURNING code_id", {pg(submission_id)});
      if (deleted.rows() == 0) return false;
      db().exec(
          "DELETE FROM code_files WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM submissions WHERE "
          "code_id = $1)",
          {pg(deleted.int64(0, 0))});
      transaction.commit();
      return true;
    });
  }

  std::vector<Run> submission_runs(Id submission_id) override {
    return guarded("submission_runs", [&] {
      auto rows = db().exec(std::string(kRunColumns) + "WHERE submission_id = $1 ORDER BY id",
                            {pg(submission_id)});
      std::vector<Run> runs;
      for (int i = 0; i < rows.rows(); ++i) runs.push_back(read_run(rows, i));
      return runs;
    });
  }

  Job enqueue(Id submission_id, std::string_view gpu_type) override {
    return guarded("enqueue", [&] {
      PgTransaction transaction(db());
      if (!submission_by_id(submission_id)) {
        throw StoreError("enqueue", "no submission with id " + std::to_string(submission_id));
      }
      Id id = insert_job(submission_id, gpu_type, options_.now(), 0);
      db().exec(
          "UPDATE submissions SET status = 'queued', verdict = NULL, score = NULL WHERE id = $1",
          {pg(submission_id)});
      auto job = job_by_id(id);
      transaction.commit();
      return *job;
    });
  }

  std::optional<Job> get_job(Id job_id) override {
    return guarded("get_job", [&] { return job_by_id(job_id); });
  }

  std::vector<Job> submission_jobs(Id submission_id) override {
    return guarded("submission_jobs", [&] {
      auto rows = db().exec(
          std::string("SELECT ") + kJobFields + " FROM jobs WHERE submission_id = $1 ORDER BY id",
          {pg(submission_id)});
      std::vector<Job> jobs;
      for (int i = 0; i < rows.rows(); ++i) jobs.push_back(read_job(rows, i));
      return jobs;
    });
  }

  int count_queued_jobs(std::string_view gpu_type) override {
    return guarded("count_queued_jobs", [&] {
      return static_cast<int>(
          db().exec("SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND gpu_type = $1",
                    {pg(gpu_type)})
              .int64(0, 0));
    });
  }

  std::optional<int> queue_position(Id job_id) override {
    return guarded("queue_position", [&]() -> std::optional<int> {
      const auto position = static_cast<int>(
          db().exec("SELECT COUNT(*) FROM jobs AS ahead JOIN jobs AS mine ON mine.id = $1 AND "
                    "mine.state = 'queued' WHERE ahead.state = 'queued' AND ahead.gpu_type = "
                    "mine.gpu_type AND ahead.id <= mine.id",
                    {pg(job_id)})
              .int64(0, 0));
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
      auto rows = db().exec("SELECT state, COUNT(*) FROM jobs GROUP BY state");
      for (int i = 0; i < rows.rows(); ++i) {
        counts[job_state_from_text(rows.text(i, 0))] = static_cast<int>(rows.int64(i, 1));
      }
      return counts;
    });
  }

  std::optional<ClaimedJob> claim_next_job(std::string_view worker_id,
                                           std::span<const std::string> gpu_types,
                                           std::chrono::seconds lease_duration,
                                           int max_gpus) override {
    return guarded("claim_next_job", [&]() -> std::optional<ClaimedJob> {
      if (worker_id.empty()) throw StoreError("claim_next_job", "empty worker id");
      Time now = options_.now();
      auto row = db().exec_prepared(
          kClaimNextJob,
          {pg_text_array(std::vector<std::string>(gpu_types.begin(), gpu_types.end())),
           pg(worker_id), pg_time(now + lease_duration), pg_time(now), pg(max_gpus)});
      if (row.empty()) return std::nullopt;
      ClaimedJob claimed;
      claimed.job = read_job(row, 0);
      claimed.lease = JobLease{claimed.job.id, std::string(worker_id), claimed.job.attempts};
      claimed.submission = read_submission(row, 0, kClaimedSubmissionColumn);
      // The statement's own update is not visible to its final SELECT.
      claimed.submission.status = SubmissionStatus::running;
      claimed.code = row.bytes(0, kClaimedSubmissionColumn + 15);
      claimed.problem_dir = row.text(0, kClaimedSubmissionColumn + 16);
      claimed.task_yaml = row.text(0, kClaimedSubmissionColumn + 17);
      claimed.secret_seed = row.int64(0, kClaimedSubmissionColumn + 18);
      return claimed;
    });
  }

  bool heartbeat(const JobLease& lease, std::chrono::seconds lease_duration) override {
    return guarded("heartbeat", [&] {
      Time now = options_.now();
      return db().exec_prepared(kHeartbeat,
                                {pg(lease.job_id), pg(lease.worker_id), pg(lease.attempt),
                                 pg_time(now + lease_duration), pg_time(now)})
                 .affected() == 1;
    });
  }

  bool complete(const JobLease& lease, const JobOutcome& outcome) override {
    std::vector<PgParam> params = {pg(lease.job_id),        pg(lease.worker_id), pg(lease.attempt),
                                   pg_time(options_.now()), pg(outcome.verdict), pg(outcome.score)};
    for (auto& column : run_columns(outcome.runs)) params.push_back(pg_array(column));
    int tries = 0;
    return guarded("complete", [&] {
      const bool retried = tries++ > 0;
      // One statement, so one transaction: recorded whole or not at all.
      if (!db().exec_prepared(kComplete, params).empty()) return true;
      // A retry after the connection dropped mid-statement: the first try may have committed,
      // and then the job is done under this very lease (no other completion can match it).
      return retried &&
             !db().exec_prepared(kCompletedUnderLease, {params[0], params[1], params[2]}).empty();
    });
  }

  bool release(const JobLease& lease, std::string_view error) override {
    return guarded("release", [&] {
      PgTransaction transaction(db());
      auto row =
          db().exec(std::string("SELECT submission_id FROM jobs ") + kHeldJob + " FOR UPDATE",
                    {pg(lease.job_id), pg(lease.worker_id), pg(lease.attempt)});
      if (row.empty()) return false;
      release_locked(lease.job_id, row.int64(0, 0), lease.attempt, error);
      worker_finished(lease.job_id, "idle", options_.now());
      transaction.commit();
      return true;
    });
  }

  int requeue_expired(Time now) override {
    return guarded("requeue_expired", [&] {
      PgTransaction transaction(db());
      int count = release_running("WHERE state = 'running' AND lease_expires_at < $1",
                                  {pg_time(now)}, "lease expired");
      transaction.commit();
      return count;
    });
  }

  int recover_running_jobs() override {
    // Other servers and worker hosts share this database: their running jobs are theirs. Jobs
    // of workers that died with a server come back when their leases expire.
    return guarded("recover_running_jobs", [&] {
      PgTransaction transaction(db());
      int count = release_running("WHERE state = 'running' AND lease_expires_at < $1",
                                  {pg_time(options_.now())},
                                  "the server stopped while the job was running");
      transaction.commit();
      return count;
    });
  }

  bool wait_for_jobs(std::span<const std::string> gpu_types,
                     std::chrono::milliseconds timeout) override {
    std::lock_guard lock(listen_mutex_);
    const auto& lib = libpq();
    if (!listener_ || !listener_->ok()) {
      // (Re)subscribe, then report that jobs may be waiting: any NOTIFY sent while no
      // connection listened is lost.
      listener_.reset();
      try {
        listener_.emplace(connect_with_backoff(url_, timeout));
        listener_->exec(std::string("LISTEN ") + kJobsChannel);
      } catch (const std::exception&) {
        listener_.reset();
        std::this_thread::sleep_for(
            std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(1)));
      }
      return true;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      bool relevant = false;
      while (PGnotify* notify = lib.notifies(listener_->get())) {
        const std::string payload = notify->extra != nullptr ? notify->extra : "";
        lib.freemem(notify);
        if (payload.empty() ||
            std::find(gpu_types.begin(), gpu_types.end(), payload) != gpu_types.end()) {
          relevant = true;
        }
      }
      if (relevant) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{listener_->socket(), POLLIN, 0};
      const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) {
        listener_.reset();
        return true;
      }
      if (ready > 0 && lib.consume_input(listener_->get()) == 0) {
        listener_.reset();  // the server went away: reconnect on the next call
        return true;
      }
    }
  }

  void register_worker(const WorkerRegistration& worker) override {
    guarded("register_worker", [&] {
      if (worker.name.empty() || worker.gpu_type.empty()) {
        throw StoreError("register_worker", "a worker needs a name and a GPU type");
      }
      PgTransaction transaction(db());
      Time now = options_.now();
      db().exec(
          "INSERT INTO workers (name, host, device, gpu_type, gpu_count, state, drain, "
          "started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, 'idle', 0, $6, $6) ON "
          "CONFLICT (name) DO UPDATE SET host = excluded.host, device = excluded.device, "
          "gpu_type = excluded.gpu_type, gpu_count = excluded.gpu_count, state = 'idle', "
          "current_job_id = NULL, drain = 0, started_at = excluded.started_at, heartbeat_at = "
          "excluded.heartbeat_at",
          {pg(worker.name), pg(worker.host), pg(worker.device), pg(worker.gpu_type),
           pg(worker.gpu_count), pg_time(now)});
      release_running("WHERE state = 'running' AND lease_owner = $1", {pg(worker.name)},
                      "the worker restarted while the job was running");
      transaction.commit();
    });
  }

  bool worker_heartbeat(std::string_view name, std::string_view state) override {
    return guarded("worker_heartbeat", [&] {
      auto row = db().exec(
          "UPDATE workers SET state = CASE WHEN drain = 1 AND $2::text = 'busy' THEN 'draining' "
          "WHEN drain = 1 AND $2::text = 'idle' THEN 'drained' ELSE $2::text END, "
          "heartbeat_at = $3 WHERE name = $1 RETURNING drain",
          {pg(name), pg(state), pg_time(options_.now())});
      return !row.empty() && row.int64(0, 0) != 0;
    });
  }

  std::vector<WorkerStatus> list_workers() override {
    return guarded("list_workers", [&] {
      auto rows = db().exec(
          "SELECT name, host, device, gpu_type, gpu_count, state, current_job_id, drain, "
          "started_at, heartbeat_at FROM workers ORDER BY host, name");
      std::vector<WorkerStatus> workers;
      for (int i = 0; i < rows.rows(); ++i) {
        WorkerStatus w;
        w.name = rows.text(i, 0);
        w.host = rows.text(i, 1);
        w.device = rows.text(i, 2);
        w.gpu_type = rows.text(i, 3);
        w.gpu_count = static_cast<int>(rows.int64(i, 4));
        w.state = rows.text(i, 5);
        w.current_job = rows.optional_int64(i, 6);
        w.drain_requested = rows.int64(i, 7) != 0;
        w.started_at = time_from_micros(rows.int64(i, 8));
        w.heartbeat_at = time_from_micros(rows.int64(i, 9));
        workers.push_back(std::move(w));
      }
      return workers;
    });
  }

  int request_drain(std::string_view name) override {
    return guarded("request_drain", [&] {
      return db()
          .exec(
              "UPDATE workers SET drain = 1, state = CASE WHEN current_job_id IS NULL THEN "
              "'drained' ELSE 'draining' END WHERE name = $1 OR host = $1",
              {pg(name)})
          .affected();
    });
  }

  std::optional<std::int64_t> append_progress(const JobLease& lease,
                                              std::string_view event_json) override {
    return guarded("append_progress", [&]() -> std::optional<std::int64_t> {
      PgTransaction transaction(db());
      // Locks the job row: appends of one job are serialized.
      auto held = db().exec(std::string("SELECT 1 FROM jobs ") + kHeldJob + " FOR UPDATE",
                            {pg(lease.job_id), pg(lease.worker_id), pg(lease.attempt)});
      if (held.empty()) return std::nullopt;
      auto row = db().exec(
          "INSERT INTO job_events (job_id, seq, time, event_json) SELECT $1, COALESCE(MAX(seq), "
          "0) + 1, $2, $3 FROM job_events WHERE job_id = $1 RETURNING seq",
          {pg(lease.job_id), pg_time(options_.now()), pg(event_json)});
      transaction.commit();
      return row.int64(0, 0);
    });
  }

  std::vector<ProgressEvent> progress_since(Id job_id, std::int64_t after_seq) override {
    return guarded("progress_since", [&] {
      auto rows = db().exec(
          "SELECT job_id, seq, time, event_json FROM job_events WHERE job_id = $1 AND seq > $2 "
          "ORDER BY seq",
          {pg(job_id), pg(after_seq)});
      std::vector<ProgressEvent> events;
      for (int i = 0; i < rows.rows(); ++i) {
        events.push_back(ProgressEvent{rows.int64(i, 0), rows.int64(i, 1),
                                       time_from_micros(rows.int64(i, 2)), rows.text(i, 3)});
      }
      return events;
    });
  }

  std::vector<RankedEntry> ranking(Id leaderboard_id, std::string_view gpu_type) override {
    return guarded("ranking", [&] {
      auto rows = db().exec(R"sql(
WITH eligible AS (
  SELECT s.user_id, s.id AS submission_id, s.created_at, r.score,
         ROW_NUMBER() OVER (PARTITION BY s.user_id ORDER BY r.score, s.created_at, s.id) AS nth
  FROM submissions s JOIN runs r ON r.submission_id = s.id
  WHERE s.leaderboard_id = $1 AND s.gpu_type = $2 AND s.hacked = 0
    AND r.mode = 'leaderboard' AND r.passed = 1 AND r.secret = 0 AND r.score IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM runs f WHERE f.submission_id = s.id AND f.secret = 1
                    AND f.passed = 0)
)
SELECT e.user_id, u.name, e.submission_id, s.file_name, e.score, e.created_at
FROM eligible e JOIN users u ON u.id = e.user_id JOIN submissions s ON s.id = e.submission_id
WHERE e.nth = 1
ORDER BY e.score, e.created_at, e.submission_id)sql",
                            {pg(leaderboard_id), pg(gpu_type)});
      std::vector<RankedEntry> entries;
      for (int i = 0; i < rows.rows(); ++i) {
        RankedEntry entry;
        entry.user_id = rows.int64(i, 0);
        entry.user_name = rows.text(i, 1);
        entry.submission_id = rows.int64(i, 2);
        entry.file_name = rows.text(i, 3);
        entry.score = rows.real(i, 4);
        entry.submitted_at = time_from_micros(rows.int64(i, 5));
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
          "FROM submissions WHERE user_id = $1 AND leaderboard_id = $2 AND created_at > $3 AND "
          "created_at <= $4 AND ($5::text = '' OR mode = $5::text)";
      RateWindow result;
      result.submissions = static_cast<int>(
          db().exec(std::string("SELECT COUNT(*) ") + kInWindow,
                    {pg(user_id), pg(leaderboard_id), pg_time(start), pg_time(now), pg(mode)})
              .int64(0, 0));
      if (result.submissions < max_submissions) return result;
      if (max_submissions <= 0) {
        result.retry_after = window;
        return result;
      }
      auto row = db().exec(
          std::string("SELECT created_at ") + kInWindow + " ORDER BY created_at LIMIT 1 OFFSET $6",
          {pg(user_id), pg(leaderboard_id), pg_time(start), pg_time(now), pg(mode),
           pg(result.submissions - max_submissions)});
      auto frees_at = time_from_micros(row.int64(0, 0)) + window;
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
      for (Id id : leaderboard_ids) filter += (filter.empty() ? "" : ", ") + std::to_string(id);
      const std::string where = filter.empty() ? "" : "WHERE s.leaderboard_id IN (" + filter + ") ";
      // One snapshot for both reads.
      PgTransaction transaction(db());
      db().exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
      auto runs = db().exec(std::string(kRunColumns) +
                            "WHERE submission_id IN (SELECT s.id FROM submissions s " + where +
                            ") ORDER BY submission_id, id");
      auto rows = db().exec(
          "SELECT s.id, s.user_id, u.name, s.leaderboard_id, l.name, s.file_name, s.code_id, "
          "c.sha256, s.gpu_type, s.mode, s.created_at, s.status, s.verdict, s.score, s.hacked" +
          std::string(code == RecordCode::with ? ", c.code" : "") +
          " FROM submissions s JOIN users u ON u.id = s.user_id JOIN leaderboards l ON l.id "
          "= s.leaderboard_id JOIN code_files c ON c.id = s.code_id " +
          where + "ORDER BY s.id");
      transaction.commit();
      SubmissionRecord record;
      int run = 0;
      for (int i = 0; i < rows.rows(); ++i) {
        record.submission = read_submission(rows, i);
        if (code == RecordCode::with) record.code = rows.bytes(i, 15);
        record.runs.clear();
        while (run < runs.rows() && runs.int64(run, 1) < record.submission.id) ++run;
        while (run < runs.rows() && runs.int64(run, 1) == record.submission.id) {
          record.runs.push_back(read_run(runs, run++));
        }
        visit(record);
      }
    });
  }

  int import_submissions(std::span<const NewLeaderboard> leaderboards, std::vector<Id>& created,
                         const std::function<bool(ImportedSubmission&)>& next) override {
    // `next` cannot be rewound: a connection lost mid-import is not retried like other operations.
    bool started = false;
    return guarded("import_submissions", [&] {
      if (started) {
        throw StoreError("import_submissions",
                         "the connection to PostgreSQL was lost during the import, whose "
                         "transaction was not committed; run the import again");
      }
      started = true;
      PgTransaction transaction(db());
      created.clear();
      for (const auto& leaderboard : leaderboards) {
        created.push_back(insert_leaderboard_locked(leaderboard));
      }
      const Time now = options_.now();
      int added = 0;
      // A user is looked up (or created) once per import, not once per submission.
      std::unordered_map<std::string, Id> users;
      Id checked_leaderboard = 0;
      ImportedSubmission s;
      while (next(s)) {
        if (s.leaderboard_id != checked_leaderboard) {
          require_leaderboard("import_submissions", s.leaderboard_id);
          checked_leaderboard = s.leaderboard_id;
        }
        auto known = users.find(s.user_name);
        if (known == users.end()) {
          auto user = db().exec(
              "INSERT INTO users (name, is_admin, created_at) VALUES ($1, 0, $2) ON CONFLICT "
              "(name) DO UPDATE SET name = excluded.name RETURNING id",
              {pg(s.user_name), pg_time(now)});
          known = users.emplace(s.user_name, user.int64(0, 0)).first;
        }
        const Id user_id = known->second;
        auto [code_id, hash] = put_code_locked(s.code);
        if (!db().exec("SELECT 1 FROM submissions WHERE user_id = $1 AND leaderboard_id = $2 AND "
                       "created_at = $3 AND code_id = $4 AND gpu_type = $5 AND mode = $6 AND "
                       "file_name = $7 LIMIT 1",
                       {pg(user_id), pg(s.leaderboard_id), pg_time(s.created_at), pg(code_id),
                        pg(s.gpu_type), pg(s.mode), pg(s.file_name)})
                 .empty()) {
          continue;
        }
        const Id submission_id =
            db().exec(
                    "INSERT INTO submissions (user_id, leaderboard_id, file_name, code_id, "
                    "gpu_type, mode, created_at, status, verdict, score, hacked) VALUES ($1, $2, "
                    "$3, $4, $5, $6, $7, 'done', $8, $9, $10) RETURNING id",
                    {pg(user_id), pg(s.leaderboard_id), pg(s.file_name), pg(code_id),
                     pg(s.gpu_type), pg(s.mode), pg_time(s.created_at), pg(s.verdict), pg(s.score),
                     pg(s.hacked)})
                .int64(0, 0);
        const Id job_id =
            db().exec(
                    "INSERT INTO jobs (submission_id, gpu_type, state, created_at, "
                    "updated_at) VALUES ($1, $2, 'done', $3, $4) RETURNING id",
                    {pg(submission_id), pg(s.gpu_type), pg_time(s.created_at), pg_time(now)})
                .int64(0, 0);
        for (const auto& run : s.runs) insert_run(submission_id, job_id, run);
        ++added;
      }
      transaction.commit();
      return added;
    });
  }

 private:
  // The leaderboard's rows, inside the caller's transaction; its id.
  Id insert_leaderboard_locked(const NewLeaderboard& leaderboard) {
    auto seed_bytes = random_bytes(8);
    std::uint64_t seed = 0;
    std::memcpy(&seed, seed_bytes.data(), sizeof seed);
    seed &= (std::uint64_t{1} << 53) - 1;  // exact in every JSON reader
    Time now = options_.now();
    Id id = 0;
    try {
      id = db().exec(
                   "INSERT INTO leaderboards (name, problem_dir, task_yaml, description, "
                   "deadline, secret_seed, visibility, created_at, synced_at) VALUES ($1, $2, "
                   "$3, $4, $5, $6, $7, $8, $8) RETURNING id",
                   {pg(leaderboard.name), pg(leaderboard.problem_dir), pg(leaderboard.task_yaml),
                    pg(leaderboard.description), pg_time(leaderboard.deadline),
                    pg(static_cast<std::int64_t>(seed)), pg(to_string(leaderboard.visibility)),
                    pg_time(now)})
               .int64(0, 0);
    } catch (const PgError& error) {
      if (error.unique_violation()) {
        throw StoreError("create_leaderboard",
                         "a leaderboard named " + quoted(leaderboard.name) + " already exists");
      }
      throw;
    }
    for (const auto& gpu_type : leaderboard.gpu_types) {
      db().exec(
          "INSERT INTO leaderboard_gpu_types (leaderboard_id, gpu_type) VALUES ($1, $2) ON "
          "CONFLICT DO NOTHING",
          {pg(id), pg(gpu_type)});
    }
    return id;
  }

  void insert_run(Id submission_id, Id job_id, const NewRun& run) {
    db().exec(
        "INSERT INTO runs (submission_id, job_id, mode, runner, secret, score, passed, "
        "compilation_json, result_json, system_json, start_time, end_time) VALUES ($1, $2, $3, "
        "$4, $5, $6, $7, $8, $9, $10, $11, $12)",
        {pg(submission_id), pg(job_id), pg(run.mode), pg(run.runner), pg(run.secret), pg(run.score),
         pg(run.passed), pg(run.compilation_json), pg(run.result_json), pg(run.system_json),
         pg_time(run.start_time), pg_time(run.end_time)});
  }

  // Runs one operation. A connection lost before the operation committed anything is
  // re-established (with backoff) and the operation retried once; every other failure is a
  // StoreError, and a broken connection is replaced on the next call.
  template <typename Body>
  auto guarded(const char* operation, Body&& body) -> decltype(body()) {
    std::lock_guard lock(mutex_);
    for (int attempt = 0;; ++attempt) {
      try {
        if (!db_ || !db_->ok()) {
          db_.reset();
          db_.emplace(connect_with_backoff(url_, options_.busy_timeout));
        }
        return body();
      } catch (const StoreError&) {
        throw;
      } catch (const PgError& error) {
        const bool broken = !db_ || !db_->ok();
        if (broken) db_.reset();
        if (error.connection_lost() && attempt == 0) continue;
        throw StoreError(operation, error.what());
      } catch (const std::exception& error) {
        throw StoreError(operation, error.what());
      }
    }
  }

  PgConnection& db() { return *db_; }

  static StoreError unknown_leaderboard(const char* operation, std::string_view name) {
    return StoreError(operation, "no leaderboard named " + quoted(name));
  }

  int current_version() {
    return static_cast<int>(
        db().exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").int64(0, 0));
  }

  void migrate() {
    try {
      PgTransaction transaction(db());
      db().exec("SELECT pg_advisory_xact_lock($1)", {pg(kMigrationLockKey)});
      db().exec(
          "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT "
          "NOT NULL, applied_at BIGINT NOT NULL)");
      int current = current_version();
      if (current > latest_schema_version()) {
        throw StoreError("open", redacted(url_) + " has schema version " + std::to_string(current) +
                                     ", newer than this kj knows (" +
                                     std::to_string(latest_schema_version()) + "); use a newer kj");
      }
      for (const auto& migration : postgres_migrations()) {
        if (migration.version <= current) continue;
        db().exec_script(migration.sql);
        db().exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                  {pg(migration.version), pg(migration.name), pg_time(options_.now())});
      }
      transaction.commit();
    } catch (const StoreError&) {
      throw;
    } catch (const std::exception& error) {
      throw StoreError("open", "migrating " + redacted(url_) + ": " + error.what());
    }
  }

  std::optional<Leaderboard> leaderboard_where(const char* where, PgParam key) {
    auto row = db().exec(std::string(kLeaderboardColumns) + where, {std::move(key)});
    if (row.empty()) return std::nullopt;
    Leaderboard leaderboard;
    leaderboard.id = row.int64(0, 0);
    leaderboard.name = row.text(0, 1);
    leaderboard.problem_dir = row.text(0, 2);
    leaderboard.task_yaml = row.text(0, 3);
    leaderboard.description = row.text(0, 4);
    leaderboard.deadline = optional_time(row, 0, 5);
    leaderboard.visibility = visibility_from_string(row.text(0, 6)).value_or(Visibility::hidden);
    leaderboard.created_at = time_from_micros(row.int64(0, 7));
    leaderboard.synced_at = time_from_micros(row.int64(0, 8));
    auto gpus = db().exec(
        "SELECT gpu_type FROM leaderboard_gpu_types WHERE leaderboard_id = $1 ORDER BY gpu_type "
        "COLLATE \"C\"",
        {pg(leaderboard.id)});
    for (int i = 0; i < gpus.rows(); ++i) leaderboard.gpu_types.push_back(gpus.text(i, 0));
    return leaderboard;
  }

  std::optional<Submission> submission_by_id(Id id) {
    auto row = db().exec(std::string(kSubmissionColumns) + "WHERE s.id = $1", {pg(id)});
    if (row.empty()) return std::nullopt;
    return read_submission(row, 0);
  }

  std::optional<Job> job_by_id(Id id) {
    auto row =
        db().exec(std::string("SELECT ") + kJobFields + " FROM jobs WHERE id = $1", {pg(id)});
    if (row.empty()) return std::nullopt;
    return read_job(row, 0);
  }

  void require_user(const char* operation, Id user_id) {
    if (db().exec("SELECT 1 FROM users WHERE id = $1", {pg(user_id)}).empty()) {
      throw StoreError(operation, "no user with id " + std::to_string(user_id));
    }
  }

  void require_leaderboard(const char* operation, Id leaderboard_id) {
    if (db().exec("SELECT 1 FROM leaderboards WHERE id = $1", {pg(leaderboard_id)}).empty()) {
      throw StoreError(operation, "no leaderboard with id " + std::to_string(leaderboard_id));
    }
  }

  std::pair<Id, std::string> put_code_locked(std::string_view code) {
    std::string hash = to_hex(sha256(code));
    db().exec(
        "INSERT INTO code_files (sha256, code, created_at) VALUES ($1, $2, $3) ON CONFLICT "
        "(sha256) DO NOTHING",
        {pg(hash), pg_bytes(code.data(), code.size()), pg_time(options_.now())});
    auto row = db().exec("SELECT id FROM code_files WHERE sha256 = $1", {pg(hash)});
    return {row.int64(0, 0), hash};
  }

  // Inserts a queued job and notifies listening workers (delivered when the transaction commits).
  // gpus_needed 0: as many as the submission's earlier jobs needed (a re-queue).
  Id insert_job(Id submission_id, std::string_view gpu_type, Time now, int gpus_needed) {
    Id id = db().exec(
                    "INSERT INTO jobs (submission_id, gpu_type, state, created_at, updated_at, "
                    "gpus_needed) VALUES ($1, $2, 'queued', $3, $3, COALESCE(NULLIF($4::integer, "
                    "0), (SELECT MAX(gpus_needed) FROM jobs WHERE submission_id = $1), 1)) "
                    "RETURNING id",
                    {pg(submission_id), pg(gpu_type), pg_time(now), pg(gpus_needed)})
                .int64(0, 0);
    notify_queued(gpu_type);
    return id;
  }

  void notify_queued(std::string_view gpu_type) {
    db().exec("SELECT pg_notify($1, $2)", {pg(kJobsChannel), pg(gpu_type)});
  }

  // Back to the queue, or failed once it was claimed max_attempts times.
  void release_locked(Id job_id, Id submission_id, int attempts, std::string_view error) {
    Time now = options_.now();
    if (attempts >= options_.max_attempts) {
      std::string reason = "internal_error: " + std::string(error) + " (after " +
                           std::to_string(attempts) + " attempts)";
      db().exec(
          "UPDATE jobs SET state = 'failed', lease_expires_at = NULL, error = $2, updated_at = "
          "$3 WHERE id = $1",
          {pg(job_id), pg(reason), pg_time(now)});
      db().exec(
          "UPDATE submissions SET status = 'failed', verdict = 'internal_error', score = NULL "
          "WHERE id = $1",
          {pg(submission_id)});
      return;
    }
    auto gpu = db().exec(
        "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, error = "
        "$2, updated_at = $3 WHERE id = $1 RETURNING gpu_type",
        {pg(job_id), pg(error), pg_time(now)});
    db().exec("UPDATE submissions SET status = 'queued' WHERE id = $1", {pg(submission_id)});
    notify_queued(gpu.text(0, 0));
  }

  // A worker's job ended: idle again (drained when a drain was requested), or `lost` when the
  // sweeper took the job from a worker presumed dead.
  void worker_finished(Id job_id, const char* state, Time now) {
    db().exec(
        "UPDATE workers SET state = CASE WHEN drain = 1 THEN 'drained' ELSE $2::text END, "
        "current_job_id = NULL, heartbeat_at = CASE WHEN $2::text = 'lost' THEN heartbeat_at "
        "ELSE $3 END WHERE current_job_id = $1",
        {pg(job_id), pg(state), pg_time(now)});
  }

  // Releases the running jobs `where` selects (its parameters in `params`); rows another
  // transaction holds (a completion in flight) are skipped, not waited for.
  int release_running(const char* where, std::vector<PgParam> params, std::string_view error) {
    auto rows = db().exec(std::string("SELECT id, submission_id, attempts FROM jobs ") + where +
                              " FOR UPDATE SKIP LOCKED",
                          params);
    for (int i = 0; i < rows.rows(); ++i) {
      const Id job_id = rows.int64(i, 0);
      release_locked(job_id, rows.int64(i, 1), static_cast<int>(rows.int64(i, 2)), error);
      worker_finished(job_id, "lost", options_.now());
    }
    return rows.rows();
  }

  std::string url_;
  std::mutex mutex_;
  StoreOptions options_;
  std::optional<PgConnection> db_;
  std::mutex listen_mutex_;
  std::optional<PgConnection> listener_;
};

}  // namespace

std::unique_ptr<Store> open_postgres_store(const std::string& url, StoreOptions options) {
  try {
    return std::make_unique<PostgresStore>(url, std::move(options));
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& error) {
    throw StoreError("open", error.what());
  }
}

}  // namespace kj::store::detail
