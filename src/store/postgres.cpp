// PostgreSQL under the SQL store: the driver over libpq and the dialect. One connection (connected
// again with backoff when the server went away); the queue claims and completes in one statement
// each, rows locked with FOR UPDATE (SKIP LOCKED where another transaction's rows may be passed
// over); waiting workers are woken with LISTEN/NOTIFY on a second connection.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "store/detail/dialect.h"
#include "store/detail/libpq.h"

namespace kj::store::detail {
namespace {

PgParam to_pg(const SqlParam& param) {
  struct Text {
    PgParam operator()(std::monostate) const { return {}; }
    PgParam operator()(std::int64_t v) const { return {std::to_string(v), false}; }
    PgParam operator()(double v) const {
      char buffer[64];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
      return {std::string(buffer, end), false};
    }
    PgParam operator()(std::string_view v) const { return {std::string(v), false}; }
    PgParam operator()(Bytes v) const { return {std::string(v.data), true}; }
  };
  return std::visit(Text{}, param.value());
}

// A result's rows, read forward.
class PgRows final : public SqlRows {
 public:
  explicit PgRows(PgResult result) : result_(std::move(result)) {}
  bool next() override { return ++row_ < result_.rows(); }
  bool is_null(int column) const override { return result_.is_null(row_, column); }
  std::int64_t int64(int column) const override { return result_.int64(row_, column); }
  double real(int column) const override { return result_.real(row_, column); }
  std::string text(int column) const override { return result_.text(row_, column); }
  void bytes_into(int column, std::string& out) const override {
    out = result_.bytes(row_, column);
  }

 private:
  PgResult result_;
  int row_ = -1;
};

std::string pg_array(const std::vector<std::optional<std::string>>& elements) {
  std::string literal = "{";
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) literal += ',';
    if (!elements[i]) {
      literal += "NULL";  // unquoted: SQL NULL (a quoted "NULL" is the text NULL)
      continue;
    }
    literal += '"';
    for (char c : *elements[i]) {
      if (c == '"' || c == '\\') literal += '\\';
      literal += c;
    }
    literal += '"';
  }
  literal += '}';
  return literal;
}

// The SQL driver over a PgConnection: every statement is prepared on first use and executed by
// name after that; parameters go as text (bytes as binary) and the server infers their types.
class PostgresConnection final : public SqlConnection {
 public:
  explicit PostgresConnection(const std::string& url) : connection_(url) {}
  PgConnection& pg() { return connection_; }
  std::unique_ptr<SqlRows> query(std::string_view sql, SqlParams params = {}) override;
  int exec(std::string_view sql, SqlParams params = {}) override;
  void script(const std::string& sql) override { connection_.exec_script(sql); }
  void begin(Access access) override;
  void commit() override;
  void rollback() noexcept override;
  bool usable() const override { return connection_.ok(); }

 private:
  PgResult run(std::string_view sql, SqlParams params);
  PgConnection connection_;
  std::unordered_map<std::string, std::string> statement_names_;  // by SQL text
};

PgResult PostgresConnection::run(std::string_view sql, SqlParams params) {
  auto name = statement_names_.find(std::string(sql));
  if (name == statement_names_.end()) {
    std::string fresh = "kj_" + std::to_string(statement_names_.size());
    connection_.prepare(fresh, std::string(sql));
    name = statement_names_.emplace(std::string(sql), std::move(fresh)).first;
  }
  std::vector<PgParam> values;
  values.reserve(params.size());
  for (const auto& param : params) values.push_back(to_pg(param));
  return connection_.exec_prepared(name->second, values);
}

std::unique_ptr<SqlRows> PostgresConnection::query(std::string_view sql, SqlParams params) {
  return std::make_unique<PgRows>(run(sql, params));
}

int PostgresConnection::exec(std::string_view sql, SqlParams params) {
  return run(sql, params).affected();
}

void PostgresConnection::begin(Access access) {
  connection_.exec(access == Access::write ? "BEGIN"
                                           : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

void PostgresConnection::commit() {
  try {
    connection_.exec("COMMIT");
  } catch (const PgError& error) {
    // Whether the commit took effect is unknown: never retried as if nothing happened.
    throw PgError(std::string("COMMIT: ") + error.what(), error.sqlstate(), false);
  }
}

void PostgresConnection::rollback() noexcept {
  try {
    if (connection_.ok()) connection_.exec("ROLLBACK");
  } catch (const std::exception&) {
    // The connection is gone: the server rolled the transaction back.
  }
}

constexpr SchemaSpelling kPostgresSpelling{"BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                                           "BIGINT",
                                           "DOUBLE PRECISION",
                                           "BYTEA",
                                           "octet_length",
                                           "",
                                           "",
                                           "::json IS NOT NULL"};

constexpr const char* kJobsChannel = "kj_jobs";
// Held while migrating, so servers starting together migrate once.
constexpr std::int64_t kMigrationLockKey = 0x6b6a5f6d696772;  // "kj_migr"

// $1 GPU types (text[]), $2 worker, $3 lease expiry, $4 now, $5 most GPUs. The oldest queued job
// that no other transaction holds and that this worker may take is leased, its submission marked
// running and the worker busy; returns the claimed row (read_claimed). Who may take a job is the
// `next` CTE's WHERE.
const std::string kClaimNextJob = std::string(R"sql(
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
SELECT claimed.*, )sql") + std::string(kSubmissionFields) +
                                  ", " + std::string(kClaimedExtraFields) +
                                  std::string(kSubmissionJoins) +
                                  "JOIN claimed ON claimed.submission_id = s.id";

// $1 job, $2 worker, $3 attempt, $4 now, $5 verdict, $6 score, $7-$16 the runs, one array per
// column (run_columns). The fencing check is `held`: the job row is locked and re-checked when
// another transaction (a sweeper) changed it first, and every other part acts only on the row
// `held` returns, so a worker that lost its lease records nothing. Returns a row when recorded.
constexpr const char* kComplete = R"sql(
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
SELECT submission_id FROM held)sql";

std::string text_of(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

// kComplete's $7-$16: the runs' columns as array literals, in run order.
std::vector<std::string> run_columns(const std::vector<NewRun>& runs) {
  std::vector<std::vector<std::optional<std::string>>> columns(10);
  for (const auto& run : runs) {
    columns[0].emplace_back(run.mode);
    columns[1].emplace_back(run.runner);
    columns[2].emplace_back(run.compilation_json);
    columns[3].emplace_back(run.result_json);
    columns[4].emplace_back(run.system_json);
    columns[5].emplace_back(run.secret ? "1" : "0");
    columns[6].push_back(run.score ? std::optional(text_of(*run.score)) : std::nullopt);
    columns[7].emplace_back(run.passed ? "1" : "0");
    columns[8].emplace_back(std::to_string(run.start_time.time_since_epoch().count()));
    columns[9].emplace_back(std::to_string(run.end_time.time_since_epoch().count()));
  }
  std::vector<std::string> literals;
  for (const auto& column : columns) literals.push_back(pg_array(column));
  return literals;
}

// Connects, retrying with exponential backoff until `patience` ran out.
std::unique_ptr<PostgresConnection> connect_with_backoff(const std::string& url,
                                                         std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  std::chrono::milliseconds pause{50};
  while (true) {
    try {
      return std::make_unique<PostgresConnection>(url);
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

class PostgresDialect final : public Dialect {
 public:
  PostgresDialect(const std::string& url, const StoreOptions& options)
      : url_(url), name_(redacted(url)), patience_(options.busy_timeout) {
    try {
      db_ = connect_with_backoff(url_, patience_);
    } catch (const std::exception& error) {
      throw StoreError("open", name_ + ": " + error.what());
    }
  }

  const std::string& name() const override { return name_; }
  SqlConnection& connection() override {
    if (!db_ || !db_->usable()) {
      db_.reset();
      db_ = connect_with_backoff(url_, patience_);
    }
    return *db_;
  }
  const SchemaSpelling& spelling() const override { return kPostgresSpelling; }
  void lock_for_migration(SqlConnection& db) override {
    db.exec("SELECT pg_advisory_xact_lock($1)", {kMigrationLockKey});
  }
  std::string_view lock_rows() const override { return " FOR UPDATE"; }
  std::string_view lock_rows_skip_locked() const override { return " FOR UPDATE SKIP LOCKED"; }
  bool shared_by_servers() const override { return true; }

  bool one_statement_queue() const override { return true; }
  std::optional<ClaimedJob> claim(SqlConnection& db, const ClaimRequest& request) override {
    std::vector<std::optional<std::string>> gpu_types(request.gpu_types.begin(),
                                                      request.gpu_types.end());
    auto row = db.query(kClaimNextJob, {pg_array(gpu_types), request.worker_id,
                                        request.lease_expires_at, request.now, request.max_gpus});
    if (!row->next()) return std::nullopt;
    return read_claimed(*row, request.worker_id);
  }
  bool complete(SqlConnection& db, const JobLease& lease, Time now,
                const JobOutcome& outcome) override {
    const auto runs = run_columns(outcome.runs);
    // One statement, so one transaction: recorded whole or not at all.
    return db
        .query(kComplete, {lease.job_id, lease.worker_id, lease.attempt, now, outcome.verdict,
                           outcome.score, runs[0], runs[1], runs[2], runs[3], runs[4], runs[5],
                           runs[6], runs[7], runs[8], runs[9]})
        ->next();
  }

  // The notification is delivered when the transaction commits.
  void job_queued(SqlConnection& db, std::string_view gpu_type) override {
    db.exec("SELECT pg_notify($1, $2)", {kJobsChannel, gpu_type});
  }
  void committed() override {}

  bool wait_for_jobs(std::span<const std::string> gpu_types,
                     std::chrono::milliseconds timeout) override {
    std::lock_guard lock(listen_mutex_);
    if (!listener_ || !listener_->ok()) {
      // (Re)subscribe, then report that jobs may be waiting: any NOTIFY sent while no
      // connection listened is lost.
      subscribe(timeout);
      return true;
    }
    const auto& lib = libpq();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      bool relevant = false;
      while (PGnotify* notify = lib.notifies(listener_->get())) {
        const std::string payload = notify->extra != nullptr ? notify->extra : "";
        lib.freemem(notify);
        relevant = relevant || payload.empty() ||
                   std::find(gpu_types.begin(), gpu_types.end(), payload) != gpu_types.end();
      }
      if (relevant) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{listener_->socket(), POLLIN, 0};
      const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
      if ((ready < 0 && errno != EINTR) ||
          (ready > 0 && lib.consume_input(listener_->get()) == 0)) {
        listener_.reset();  // the server went away: subscribe again on the next call
        return true;
      }
    }
  }

  std::shared_ptr<void> bulk_read(SqlConnection&) override { return nullptr; }
  std::shared_ptr<void> bulk_write(SqlConnection&) override { return nullptr; }

 private:
  void subscribe(std::chrono::milliseconds timeout) {
    listener_.reset();
    try {
      listener_.emplace(url_);
      listener_->exec(std::string("LISTEN ") + kJobsChannel);
    } catch (const std::exception&) {
      listener_.reset();
      std::this_thread::sleep_for(
          std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(1)));
    }
  }

  std::string url_;
  std::string name_;
  std::chrono::milliseconds patience_;
  std::unique_ptr<PostgresConnection> db_;
  std::mutex listen_mutex_;
  std::optional<PgConnection> listener_;
};

}  // namespace

std::unique_ptr<Dialect> postgres_dialect(const std::string& url, const StoreOptions& options) {
  return std::make_unique<PostgresDialect>(url, options);
}

}  // namespace kj::store::detail
