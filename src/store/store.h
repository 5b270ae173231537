// The judge's persistent state behind one interface: leaderboards, users and API tokens, code
// (deduplicated by SHA-256), submissions, the job queue (claim, lease, heartbeat, complete), runs,
// progress events, rankings and rate-limit windows, in SQLite (built in) or PostgreSQL: one SQL
// implementation over both (docs/store.md). No business rules: the server decides who may
// submit what, the worker decides verdicts; the store keeps the data consistent.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kj::store {

// Every failure of a store operation; the message starts with the operation's name. The
// operation changed nothing when it throws (each one is a single transaction).
class StoreError : public std::runtime_error {
 public:
  StoreError(std::string operation, const std::string& message);
  const std::string& operation() const { return operation_; }

 private:
  std::string operation_;
};

using Id = std::int64_t;
// Wall-clock instants are kept to the microsecond (the kernelbot-data export's timestamp[us]).
using Time = std::chrono::sys_time<std::chrono::microseconds>;

// "public" (listed to everyone) or "hidden" (only admins see it) in the database and the API.
enum class Visibility { listed, hidden };
std::string to_string(Visibility visibility);
std::optional<Visibility> visibility_from_string(std::string_view name);

struct NewLeaderboard {
  std::string name;         // unique
  std::string problem_dir;  // the problem directory the worker loads
  std::string task_yaml;    // task.yml as it was when created or last synced
  std::string description;
  std::optional<Time> deadline;  // none: open forever
  std::vector<std::string> gpu_types;
  Visibility visibility = Visibility::listed;
  std::string reference;  // reference.py as published, for one without a problem directory
};

// A leaderboard as users may see it (its GPU types sorted): the secret seed is not part of it.
struct Leaderboard : NewLeaderboard {
  Id id = 0;
  Time created_at, synced_at;
};

struct User {
  Id id = 0;
  std::string name;  // unique
  bool is_admin = false;
  Time created_at;
};

// The clear token exists only here, once, at creation; the store keeps its SHA-256.
struct IssuedToken {
  Id token_id = 0;
  std::string token;  // "kj_" + 64 hex digits (32 random bytes)
};

enum class SubmissionStatus { queued, running, done, failed };
std::string to_string(SubmissionStatus status);

struct NewSubmission {
  Id user_id = 0;
  Id leaderboard_id = 0;
  std::string file_name;
  std::string code;
  std::string gpu_type;
  std::string mode;     // test, benchmark or leaderboard (ranked)
  int gpus_needed = 1;  // GPUs one evaluation takes: a multi_gpu problem's world_size
};

struct Submission {
  Id id = 0;
  Id user_id = 0;
  std::string user_name;
  Id leaderboard_id = 0;
  std::string leaderboard_name;
  std::string file_name;
  Id code_id = 0;
  std::string code_sha256;  // hex
  std::string gpu_type;
  std::string mode;
  Time created_at;
  SubmissionStatus status = SubmissionStatus::queued;
  std::string verdict;  // empty until the job finished
  std::optional<double> score;
  bool hacked = false;
};

enum class JobState { queued, running, done, failed };
std::string to_string(JobState state);

struct Job {
  Id id = 0, submission_id = 0;
  std::string gpu_type;
  JobState state = JobState::queued;
  int attempts = 0;  // times the job was claimed
  std::string lease_owner;
  std::optional<Time> lease_expires_at;
  std::string error;  // why the last attempt was given up, or why the job failed
  Time created_at, updated_at;
};

// Who holds a job, and which attempt: a worker that lost the job cannot act on a later attempt,
// even under the same worker id.
struct JobLease {
  Id job_id = 0;
  std::string worker_id;
  int attempt = 0;
};

// Everything a worker needs to judge a claimed job. The secret seed is for the worker only.
struct ClaimedJob {
  JobLease lease;
  Job job;
  Submission submission;
  std::string code, problem_dir, task_yaml;
  std::int64_t secret_seed = 0;
};

// A file a run produced beside its result JSON (profile mode: the Nsight Compute report).
struct RunFile {
  std::string name;  // unique per run, e.g. "profile.ncu-rep"
  std::string content;
};

// A run's file as listed, without its content.
struct RunFileInfo {
  Id run_id = 0;
  std::string name;
  std::int64_t bytes = 0;
};

struct NewRun {
  std::string mode;    // test, benchmark, leaderboard, ...
  std::string runner;  // the GPU (or cpu) the run used
  std::optional<double> score;
  bool passed = false;
  bool secret = false;  // ran on secret-seeded inputs
  std::string compilation_json = "{}", result_json = "{}", system_json = "{}";
  Time start_time, end_time;
  std::string meta_json;       // run_meta as a published run-level file gave it (empty: none)
  std::vector<RunFile> files;  // recorded with the run; a read Run leaves them out (run_files)
};

struct Run : NewRun {
  Id id = 0, submission_id = 0, job_id = 0;
};

// The final result of a job: recorded with its runs in the same transaction as the state change.
struct JobOutcome {
  std::string verdict;
  std::optional<double> score;
  std::vector<NewRun> runs;
};

struct ProgressEvent {
  Id job_id = 0;
  std::int64_t seq = 0;  // 1, 2, ... per job
  Time time;
  std::string event_json;
};

// One row of a leaderboard's ranking: a user's best eligible score.
struct RankedEntry {
  int rank = 0;  // 1-based; equal scores share a rank
  Id user_id = 0;
  std::string user_name;
  Id submission_id = 0;
  std::string file_name;
  double score = 0;
  Time submitted_at;
  std::optional<double> speedup;  // the ranked run's speedup over the reference, when timed
};

// A submission with its code and every run, as the dataset export reads it.
struct SubmissionRecord {
  Submission submission;
  std::string code;
  std::vector<Run> runs;  // by id
};

// A submission judged elsewhere (a published dataset), recorded as done with its runs. The same
// user, leaderboard, code, GPU type, mode, file name and time is the same submission: importing
// it again adds nothing. Its ids in the dataset (none: not given) are kept: as the local ids where
// this store has no row with them, else in the source ids (Store::source_ids).
struct ImportedSubmission {
  std::string user_name;  // created (not an admin) when missing
  Id leaderboard_id = 0;
  std::string file_name;
  std::string code;
  std::string gpu_type;
  std::string mode;
  Time created_at;
  std::string verdict;
  std::optional<double> score;
  bool hacked = false;
  std::vector<NewRun> runs;
  std::optional<Id> source_id, source_code_id;
  std::string source_user_id;  // users: always a source id when it differs (text)
  std::vector<std::optional<Id>> source_run_ids;  // per run (may be shorter than runs)
};

// A leaderboard an import names: created when the store has none of that name (under its
// source id where free), else the store's is used. Either way its source id is kept.
struct ImportedLeaderboard : NewLeaderboard {
  std::optional<Id> source_id;
};

struct ImportOutcome {
  int submissions_added = 0, leaderboards_added = 0;
};

// The tables whose imported rows keep their source ids.
enum class SourceKind { leaderboard, user, code, submission, run };
std::string to_string(SourceKind kind);

struct RateWindow {
  int submissions = 0;  // in the window ending now
  // When the limit is reached: seconds until the oldest submission in the window leaves it.
  std::optional<std::chrono::seconds> retry_after;
};

// A worker process's judging loop (one per GPU), as registered in the store for `kj workers`.
struct WorkerRegistration {
  std::string name;      // unique: the lease owner of its jobs, e.g. "host-a:cuda:0"
  std::string host;      // the worker process's --name (several workers share it)
  std::string device;    // "cpu" or "cuda:N"
  std::string gpu_type;  // the only job GPU type it claims
  int gpu_count = 0;     // GPUs this worker judges on (0 for a CPU worker)
};

// States a worker reports: idle, busy (judging current_job), draining (finishing its last job),
// drained (took no more jobs after a drain request), out_of_service (its GPU failed a health
// check), stopped (the process exited cleanly).
struct WorkerStatus : WorkerRegistration {
  std::string state;
  std::optional<Id> current_job;
  bool drain_requested = false;
  Time started_at, heartbeat_at;
};

struct StoreOptions {
  std::function<Time()> now;  // default: the system clock
  int max_attempts = 3;       // claims before an abandoned job fails with internal_error
  std::chrono::milliseconds busy_timeout{10000};
};

// One connection. A Store may be shared between threads (calls are serialized); for parallel
// access open one Store per thread or process on the same database.
class Store {
 public:
  virtual ~Store() = default;
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The schema version this database is at (the newest applied migration).
  virtual int schema_version() = 0;

  // Leaderboards. The secret seed is drawn from a CSPRNG at creation.
  virtual Leaderboard create_leaderboard(const NewLeaderboard& leaderboard) = 0;
  virtual std::optional<Leaderboard> get_leaderboard(std::string_view name) = 0;
  virtual std::vector<Leaderboard> list_leaderboards(bool include_hidden) = 0;
  virtual void set_leaderboard_deadline(std::string_view name, std::optional<Time> deadline) = 0;
  virtual void set_leaderboard_visibility(std::string_view name, Visibility visibility) = 0;
  // Replaces the task snapshot after the problem directory changed.
  virtual Leaderboard sync_leaderboard(std::string_view name, std::string_view task_yaml,
                                       std::string_view description) = 0;
  // For admins and workers only.
  virtual std::int64_t leaderboard_secret_seed(std::string_view name) = 0;

  // Users and API tokens.
  virtual User create_user(std::string_view name, bool is_admin) = 0;
  virtual std::optional<User> get_user(std::string_view name) = 0;
  virtual IssuedToken create_token(Id user_id, std::string_view label) = 0;
  // The user a presented clear token belongs to; none when unknown or revoked.
  virtual std::optional<User> user_for_token(std::string_view token) = 0;
  // False when the token does not exist or was already revoked.
  virtual bool revoke_token(Id token_id) = 0;

  // Code, stored once per distinct content. Returns the SHA-256 (hex).
  virtual std::string put_code(std::string_view code) = 0;
  virtual std::optional<std::string> get_code(std::string_view sha256_hex) = 0;

  // Creates the submission and queues its job in one transaction.
  virtual Submission create_submission(const NewSubmission& submission) = 0;
  virtual std::optional<Submission> get_submission(Id submission_id) = 0;
  // Newest first; leaderboard_id 0: every leaderboard.
  virtual std::vector<Submission> user_submissions(Id user_id, Id leaderboard_id, int limit) = 0;
  virtual void set_submission_hacked(Id submission_id, bool hacked) = 0;
  // Removes the submission with its jobs, runs and progress, and its code unless another
  // submission has the same code. False when there is no such submission.
  virtual bool delete_submission(Id submission_id) = 0;
  virtual std::vector<Run> submission_runs(Id submission_id) = 0;
  // The files of the submission's runs (names and sizes), by run and name; one file's content.
  virtual std::vector<RunFileInfo> run_files(Id submission_id) = 0;
  virtual std::optional<std::string> run_file(Id run_id, std::string_view name) = 0;

  // The queue. A job goes queued -> running (claimed, leased) -> done | failed; an abandoned
  // running job goes back to queued until it was claimed max_attempts times, then fails.
  // Queues another job for an existing submission (a rejudge); the submission goes back to queued.
  virtual Job enqueue(Id submission_id, std::string_view gpu_type) = 0;
  virtual std::optional<Job> get_job(Id job_id) = 0;
  virtual std::vector<Job> submission_jobs(Id submission_id) = 0;
  virtual int count_queued_jobs(std::string_view gpu_type) = 0;
  // A queued job's place in its GPU type's queue: 1 + the queued jobs of that type before it.
  // None when the job is not queued (or does not exist).
  virtual std::optional<int> queue_position(Id job_id) = 0;
  // Every job in the store by state (all four states present, zero when none): for /metrics.
  virtual std::map<JobState, int> count_jobs_by_state() = 0;
  // The oldest queued job for one of gpu_types that needs at most max_gpus GPUs (a multi-GPU
  // job needs its world_size), leased to worker_id; none when the queue is empty.
  // Two callers never get the same job.
  virtual std::optional<ClaimedJob> claim_next_job(std::string_view worker_id,
                                                   std::span<const std::string> gpu_types,
                                                   std::chrono::seconds lease_duration,
                                                   int max_gpus = 1) = 0;
  // Extends the lease; false when the holder lost it (requeued, completed, or claimed again).
  [[nodiscard]] virtual bool heartbeat(const JobLease& lease,
                                       std::chrono::seconds lease_duration) = 0;
  // Records the runs and the verdict and marks the job done; false (nothing recorded) unless the
  // caller still holds the lease, so a job has exactly one final result.
  [[nodiscard]] virtual bool complete(const JobLease& lease, const JobOutcome& outcome) = 0;
  // Gives a job back after an infrastructure fault: queued again, or failed with internal_error
  // once max_attempts claims were made. False when the caller no longer holds the lease.
  [[nodiscard]] virtual bool release(const JobLease& lease, std::string_view error) = 0;
  // Applies release() to every running job whose lease expired before `now`. Returns how many.
  virtual int requeue_expired(Time now) = 0;
  // At server start: applies release() to every running job (its worker died with the server).
  // On PostgreSQL, shared by several servers and worker hosts, only expired leases are released.
  virtual int recover_running_jobs() = 0;

  // Wake-ups: blocks until a job for one of gpu_types may have been queued since the previous
  // call returned (true), or until timeout (false). The first call on a Store returns true at
  // once. SQLite signals the workers of this process; PostgreSQL uses LISTEN/NOTIFY, so any
  // process's enqueue wakes every host. Callers still poll at a slow pace as a fallback.
  virtual bool wait_for_jobs(std::span<const std::string> gpu_types,
                             std::chrono::milliseconds timeout) = 0;

  // Workers. Registering (again) clears a drain request and gives back the jobs still leased
  // under the same name: that worker restarted, so nothing of its is running.
  virtual void register_worker(const WorkerRegistration& worker) = 0;
  // Records a worker's state and heartbeat (claim/complete/release record busy and idle
  // themselves). Returns true when an operator asked it to drain.
  virtual bool worker_heartbeat(std::string_view name, std::string_view state) = 0;
  virtual std::vector<WorkerStatus> list_workers() = 0;
  // Asks every worker whose name or host is `name` to finish its current job and claim no more
  // (claim_next_job returns none for it from now on). Returns how many workers matched.
  virtual int request_drain(std::string_view name) = 0;

  // Progress of a job for live display; only the lease holder appends. Returns the new seq.
  virtual std::optional<std::int64_t> append_progress(const JobLease& lease,
                                                      std::string_view event_json) = 0;
  virtual std::vector<ProgressEvent> progress_since(Id job_id, std::int64_t after_seq) = 0;

  // Each user's best score on a leaderboard and GPU type, ascending. Eligible: a passed,
  // non-secret leaderboard-mode run with a score, of a submission not marked hacked and with no
  // failed secret run.
  virtual std::vector<RankedEntry> ranking(Id leaderboard_id, std::string_view gpu_type) = 0;

  // A user's submissions on a leaderboard in (now - window, now]; mode empty: every mode.
  // retry_after is set when that count is at least max_submissions.
  virtual RateWindow rate_window(Id user_id, Id leaderboard_id, std::string_view mode,
                                 int max_submissions, std::chrono::seconds window) = 0;

  // Datasets. Every submission of the given leaderboards (every leaderboard when empty) with its
  // runs, by id, read in one transaction; with its code only when `code` is RecordCode::with
  // (otherwise SubmissionRecord::code is empty: rankings and summaries need no code).
  enum class RecordCode { with, without };
  virtual void for_each_submission_record(
      std::span<const Id> leaderboard_ids, RecordCode code,
      const std::function<void(const SubmissionRecord&)>& visit) = 0;
  void for_each_submission_record(std::span<const Id> leaderboard_ids,
                                  const std::function<void(const SubmissionRecord&)>& visit) {
    for_each_submission_record(leaderboard_ids, RecordCode::with, visit);
  }
  // Records submissions judged elsewhere, all in one transaction (all or none); those already
  // present are skipped. The `leaderboards` are looked up by name or created first in the same
  // transaction, their ids written to `leaderboard_ids` (in order) before `next` is first called.
  // `next` fills in the next submission (the object is reused from call to call) and returns
  // false after the last; an exception from `next` rolls everything back, the leaderboards
  // included. `next` is called on a second thread, one call at a time, a batch of submissions
  // ahead of the inserts. Source ids: ImportedSubmission, ImportedLeaderboard.
  virtual ImportOutcome import_submissions(
      std::span<const ImportedLeaderboard> leaderboards, std::vector<Id>& leaderboard_ids,
      const std::function<bool(ImportedSubmission&)>& next) = 0;
  int import_submissions(const std::function<bool(ImportedSubmission&)>& next) {
    std::vector<Id> ids;
    return import_submissions({}, ids, next).submissions_added;
  }
  int import_submissions(std::span<const ImportedSubmission> submissions) {
    std::size_t i = 0;
    return import_submissions([&](ImportedSubmission& s) {
      if (i == submissions.size()) return false;
      s = submissions[i++];
      return true;
    });
  }
  // The ids imported rows of `kind` had in their dataset, by local id, where the two differ (an
  // export writes these instead of the local ids).
  virtual std::unordered_map<Id, std::string> source_ids(SourceKind kind) = 0;
};

// "sqlite:PATH" or a plain path: SQLite (created if missing, migrated to the current schema).
// "postgres://..." / "postgresql://...": PostgreSQL through libpq, loaded when first needed
// (docs/store.md); the schema is migrated at open like SQLite's.
std::unique_ptr<Store> open_store(const std::string& url, StoreOptions options = {});

// The newest schema version this build knows.
int latest_schema_version();

}  // namespace kj::store
