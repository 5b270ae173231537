// The schema as numbered migrations, one list for both databases. A released migration is never
// edited: a change is a new migration appended to the list. Times are unix microseconds in 64-bit
// integers, flags 0/1 integers. Where the databases spell a type differently the text holds a
// {FRAGMENT} that the dialect fills in (render_migration): {ID} an auto-numbered 64-bit primary
// key, {INT64}, {REAL}, {BYTES}, {BYTES_LENGTH}(...), {WITHOUT_ROWID}, and the check that a
// column holds JSON, {JSON_VALID}column{/JSON_VALID}.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kj::store::detail {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

inline constexpr Migration kMigrations[] = {
    {1, "leaderboards, users, tokens, code, submissions, jobs, runs, progress events", R"sql(
CREATE TABLE leaderboards (
  id {ID},
  name TEXT NOT NULL UNIQUE CHECK (name <> ''),
  problem_dir TEXT NOT NULL,
  task_yaml TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  deadline {INT64},
  secret_seed {INT64} NOT NULL,
  visibility TEXT NOT NULL CHECK (visibility IN ('public', 'hidden')),
  created_at {INT64} NOT NULL,
  synced_at {INT64} NOT NULL
);
CREATE TABLE leaderboard_gpu_types (
  leaderboard_id {INT64} NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  PRIMARY KEY (leaderboard_id, gpu_type)
){WITHOUT_ROWID};
CREATE TABLE users (
  id {ID},
  name TEXT NOT NULL UNIQUE CHECK (name <> ''),
  is_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  created_at {INT64} NOT NULL
);
CREATE TABLE api_tokens (
  id {ID},
  user_id {INT64} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_sha256 {BYTES} NOT NULL UNIQUE CHECK ({BYTES_LENGTH}(token_sha256) = 32),
  label TEXT NOT NULL DEFAULT '',
  created_at {INT64} NOT NULL,
  revoked_at {INT64}
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
CREATE TABLE code_files (
  id {ID},
  sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  code {BYTES} NOT NULL,
  created_at {INT64} NOT NULL
);
CREATE TABLE submissions (
  id {ID},
  user_id {INT64} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  leaderboard_id {INT64} NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
  file_name TEXT NOT NULL CHECK (file_name <> ''),
  code_id {INT64} NOT NULL REFERENCES code_files (id),
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  mode TEXT NOT NULL CHECK (mode <> ''),
  created_at {INT64} NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  verdict TEXT,
  score {REAL},
  hacked INTEGER NOT NULL DEFAULT 0 CHECK (hacked IN (0, 1))
);
CREATE INDEX submissions_by_user ON submissions (user_id, leaderboard_id, created_at);
CREATE INDEX submissions_by_leaderboard ON submissions (leaderboard_id, gpu_type);
CREATE TABLE jobs (
  id {ID},
  submission_id {INT64} NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at {INT64},
  error TEXT NOT NULL DEFAULT '',
  created_at {INT64} NOT NULL,
  updated_at {INT64} NOT NULL
);
CREATE INDEX jobs_by_submission ON jobs (submission_id);
CREATE INDEX jobs_queued ON jobs (gpu_type, id) WHERE state = 'queued';
CREATE INDEX jobs_running ON jobs (lease_expires_at) WHERE state = 'running';
CREATE TABLE runs (
  id {ID},
  submission_id {INT64} NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  job_id {INT64} NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  mode TEXT NOT NULL CHECK (mode <> ''),
  runner TEXT NOT NULL,
  secret INTEGER NOT NULL DEFAULT 0 CHECK (secret IN (0, 1)),
  score {REAL},
  passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
  compilation_json TEXT NOT NULL DEFAULT '{}' CHECK ({JSON_VALID}compilation_json{/JSON_VALID}),
  result_json TEXT NOT NULL DEFAULT '{}' CHECK ({JSON_VALID}result_json{/JSON_VALID}),
  system_json TEXT NOT NULL DEFAULT '{}' CHECK ({JSON_VALID}system_json{/JSON_VALID}),
  start_time {INT64} NOT NULL,
  end_time {INT64} NOT NULL
);
CREATE INDEX runs_by_submission ON runs (submission_id);
CREATE INDEX runs_ranked ON runs (submission_id, score)
  WHERE mode = 'leaderboard' AND passed = 1 AND secret = 0 AND score IS NOT NULL;
CREATE INDEX runs_failed_secret ON runs (submission_id) WHERE secret = 1 AND passed = 0;
CREATE TABLE job_events (
  job_id {INT64} NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq {INT64} NOT NULL,
  time {INT64} NOT NULL,
  event_json TEXT NOT NULL CHECK ({JSON_VALID}event_json{/JSON_VALID}),
  PRIMARY KEY (job_id, seq)
){WITHOUT_ROWID};
)sql"},
    {2, "workers: registration, state, heartbeat, drain requests", R"sql(
CREATE TABLE workers (
  name TEXT PRIMARY KEY CHECK (name <> ''),
  host TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  gpu_count INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL,
  current_job_id {INT64},
  drain INTEGER NOT NULL DEFAULT 0 CHECK (drain IN (0, 1)),
  started_at {INT64} NOT NULL,
  heartbeat_at {INT64} NOT NULL
);
CREATE INDEX workers_by_job ON workers (current_job_id) WHERE current_job_id IS NOT NULL;
)sql"},
    // The claim takes the oldest queued job of any of a worker's GPU types: without this index
    // PostgreSQL walked the primary key past every finished job to find it.
    {3, "queued jobs in id order", R"sql(
CREATE INDEX jobs_queued_by_id ON jobs (id) WHERE state = 'queued';
)sql"},
    // A job of a multi-GPU problem is claimed only by a worker with that many GPUs free.
    {4, "jobs: GPUs needed", R"sql(
ALTER TABLE jobs ADD COLUMN gpus_needed INTEGER NOT NULL DEFAULT 1 CHECK (gpus_needed >= 1);
)sql"},
    // Imports keep the ids rows had in the dataset they came from: as the local id where it was
    // free, else here (users: whenever theirs differs, kernelbot's user ids being text). An
    // imported leaderboard has no problem directory: its reference.py is kept as published; so
    // is an imported run's run_meta.
    {5, "source ids of imported rows, reference of imported leaderboards, meta of imported runs",
     R"sql(
CREATE TABLE source_ids (
  kind TEXT NOT NULL CHECK (kind IN ('leaderboard', 'user', 'code', 'submission', 'run')),
  local_id {INT64} NOT NULL,
  source_id TEXT NOT NULL CHECK (source_id <> ''),
  PRIMARY KEY (kind, local_id)
){WITHOUT_ROWID};
ALTER TABLE leaderboards ADD COLUMN reference TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN meta_json TEXT NOT NULL DEFAULT '';
)sql"},
    // Files a run produced that its result JSON does not hold: profile mode's Nsight Compute
    // report. They go with their run (and so with a deleted submission).
    {6, "run files", R"sql(
CREATE TABLE run_files (
  id {ID},
  run_id {INT64} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (name <> ''),
  content {BYTES} NOT NULL,
  UNIQUE (run_id, name)
);
)sql"},
};

inline std::span<const Migration> migrations() { return kMigrations; }

// How one database spells the schema's {FRAGMENT}s.
struct SchemaSpelling {
  std::string_view id, int64, real, bytes, bytes_length, without_rowid, json_valid, json_valid_end;
};

// The migration's SQL in one database's spelling.
inline std::string render_migration(std::string_view sql, const SchemaSpelling& spelling) {
  const std::pair<std::string_view, std::string_view> fragments[] = {
      {"{ID}", spelling.id},
      {"{INT64}", spelling.int64},
      {"{REAL}", spelling.real},
      {"{BYTES}", spelling.bytes},
      {"{BYTES_LENGTH}", spelling.bytes_length},
      {"{WITHOUT_ROWID}", spelling.without_rowid},
      {"{JSON_VALID}", spelling.json_valid},
      {"{/JSON_VALID}", spelling.json_valid_end}};
  std::string out(sql);
  for (const auto& [name, text] : fragments) {
    for (auto at = out.find(name); at != std::string::npos; at = out.find(name, at + text.size())) {
      out.replace(at, name.size(), text);
    }
  }
  return out;
}

}  // namespace kj::store::detail
