// The SQLite schema as numbered migrations. A released migration is never edited: a change is a
// new migration appended to the list. Times are INTEGER unix microseconds.
#pragma once

#include <span>

namespace kj::store::detail {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

inline constexpr Migration kSqliteMigrations[] = {
    {1, "leaderboards, users, tokens, code, submissions, jobs, runs, progress events", R"sql(
CREATE TABLE leaderboards (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE CHECK (name <> ''),
  problem_dir TEXT NOT NULL,
  task_yaml TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  deadline INTEGER,
  secret_seed INTEGER NOT NULL,
  visibility TEXT NOT NULL CHECK (visibility IN ('public', 'hidden')),
  created_at INTEGER NOT NULL,
  synced_at INTEGER NOT NULL
);
CREATE TABLE leaderboard_gpu_types (
  leaderboard_id INTEGER NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  PRIMARY KEY (leaderboard_id, gpu_type)
) WITHOUT ROWID;
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE CHECK (name <> ''),
  is_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  created_at INTEGER NOT NULL
);
CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_sha256 BLOB NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
  label TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
CREATE TABLE code_files (
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  code BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE submissions (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  leaderboard_id INTEGER NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
  file_name TEXT NOT NULL CHECK (file_name <> ''),
  code_id INTEGER NOT NULL REFERENCES code_files (id),
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  mode TEXT NOT NULL CHECK (mode <> ''),
  created_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  verdict TEXT,
  score REAL,
  hacked INTEGER NOT NULL DEFAULT 0 CHECK (hacked IN (0, 1))
);
CREATE INDEX submissions_by_user ON submissions (user_id, leaderboard_id, created_at);
CREATE INDEX submissions_by_leaderboard ON submissions (leaderboard_id, gpu_type);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  submission_id INTEGER NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  error TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX jobs_by_submission ON jobs (submission_id);
CREATE INDEX jobs_queued ON jobs (gpu_type, id) WHERE state = 'queued';
CREATE INDEX jobs_running ON jobs (lease_expires_at) WHERE state = 'running';
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  submission_id INTEGER NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  mode TEXT NOT NULL CHECK (mode <> ''),
  runner TEXT NOT NULL,
  secret INTEGER NOT NULL DEFAULT 0 CHECK (secret IN (0, 1)),
  score REAL,
  passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
  compilation_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(compilation_json)),
  result_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(result_json)),
  system_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(system_json)),
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL
);
CREATE INDEX runs_by_submission ON runs (submission_id);
CREATE INDEX runs_ranked ON runs (submission_id, score)
  WHERE mode = 'leaderboard' AND passed = 1 AND secret = 0 AND score IS NOT NULL;
CREATE INDEX runs_failed_secret ON runs (submission_id) WHERE secret = 1 AND passed = 0;
CREATE TABLE job_events (
  job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  time INTEGER NOT NULL,
  event_json TEXT NOT NULL CHECK (json_valid(event_json)),
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
)sql"},
    {2, "workers: registration, state, heartbeat, drain requests", R"sql(
CREATE TABLE workers (
  name TEXT PRIMARY KEY CHECK (name <> ''),
  host TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  gpu_type TEXT NOT NULL CHECK (gpu_type <> ''),
  gpu_count INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL,
  current_job_id INTEGER,
  drain INTEGER NOT NULL DEFAULT 0 CHECK (drain IN (0, 1)),
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
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
};

inline std::span<const Migration> sqlite_migrations() { return kSqliteMigrations; }

}  // namespace kj::store::detail
