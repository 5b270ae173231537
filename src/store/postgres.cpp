// PostgreSQL under the SQL store: the driver over libpq and the dialect. One connection
// (connected again with backoff when the server went away); the queue claims and completes in one
// statement each, rows locked with FOR UPDATE (SKIP LOCKED where another transaction's rows may
// be passed over); waiting workers are woken with LISTEN/NOTIFY on a second connection.
//
// libpq is loaded with dlopen the first time a postgres:// URL is opened, so `kj` starts on hosts
// without it (GPU hosts that only use SQLite). Only the declarations come from libpq-fe.h.
#include <dlfcn.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "store/detail/dialect.h"

namespace kj::store::detail {
namespace {

// The libpq functions the store calls, resolved once per process: (libpq name, member).
// clang-format off
#define KJ_LIBPQ_FUNCTIONS(X)                                                                  \
  X(PQconnectdb, connectdb) X(PQfinish, finish) X(PQstatus, status)                            \
  X(PQerrorMessage, error_message) X(PQexec, exec) X(PQprepare, prepare)                       \
  X(PQexecPrepared, exec_prepared) X(PQresultStatus, result_status)                            \
  X(PQresultErrorMessage, result_error_message) X(PQresultErrorField, result_error_field)      \
  X(PQclear, clear) X(PQntuples, ntuples) X(PQgetvalue, getvalue) X(PQgetlength, getlength)    \
  X(PQgetisnull, getisnull) X(PQcmdTuples, cmd_tuples) X(PQsocket, socket)                     \
  X(PQconsumeInput, consume_input) X(PQnotifies, notifies) X(PQfreemem, freemem)               \
  X(PQsetNoticeProcessor, set_notice_processor)
// clang-format on
struct Libpq {
#define KJ_LIBPQ_MEMBER(function, member) decltype(&function) member = nullptr;
  KJ_LIBPQ_FUNCTIONS(KJ_LIBPQ_MEMBER)
#undef KJ_LIBPQ_MEMBER
};

// Loads libpq.so.5 (or $KJ_LIBPQ) once; throws std::runtime_error saying what to install.
const Libpq& libpq() {
  static std::mutex mutex;
  static Libpq functions;
  static std::string failure;
  std::lock_guard lock(mutex);
  if (functions.connectdb != nullptr) return functions;
  if (!failure.empty()) throw std::runtime_error(failure);
  const char* override_path = std::getenv("KJ_LIBPQ");
  const std::string name =
      override_path != nullptr && *override_path ? override_path : "libpq.so.5";
  // Kept loaded for the life of the process.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    failure = "PostgreSQL needs libpq (" + name + " did not load" +
              (why != nullptr ? std::string(": ") + why : std::string()) +
              "); install it with `apt-get install libpq5`";
    throw std::runtime_error(failure);
  }
  Libpq loaded;
#define KJ_LIBPQ_RESOLVE(function, member)                                          \
  loaded.member = reinterpret_cast<decltype(&function)>(dlsym(library, #function)); \
  if (loaded.member == nullptr) failure = "the loaded libpq lacks " #function;
  KJ_LIBPQ_FUNCTIONS(KJ_LIBPQ_RESOLVE)
#undef KJ_LIBPQ_RESOLVE
  if (!failure.empty()) {
    dlclose(library);
    throw std::runtime_error(failure);
  }
  functions = loaded;
  return functions;
}

std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

using Result = std::unique_ptr<PGresult, decltype(Libpq::clear)>;

// A result's rows, read forward. Values come as text; booleans as t/f, bytea as hex.
class PgRows final : public SqlRows {
 public:
  explicit PgRows(Result result) : result_(std::move(result)) {}
  bool next() override { return ++row_ < libpq().ntuples(result_.get()); }
  bool is_null(int column) const override {
    return libpq().getisnull(result_.get(), row_, column) != 0;
  }
  std::int64_t int64(int column) const override {
    const std::string value = text(column);
    std::int64_t out = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc()) throw std::runtime_error("not an integer: " + value);
    return out;
  }
  double real(int column) const override { return std::strtod(text(column).c_str(), nullptr); }
  std::string text(int column) const override {
    const auto& lib = libpq();
    return std::string(lib.getvalue(result_.get(), row_, column),
                       static_cast<std::size_t>(lib.getlength(result_.get(), row_, column)));
  }
  void bytes_into(int column, std::string& out) const override {
    const std::string hex = text(column);
    if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x' || hex.size() % 2 != 0) {
      throw std::runtime_error("unexpected bytea encoding");
    }
    out.resize((hex.size() - 2) / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const char* digits = hex.data() + 2 + 2 * i;
      unsigned byte = 0;
      auto [end, ec] = std::from_chars(digits, digits + 2, byte, 16);
      if (ec != std::errc() || end != digits + 2) throw std::runtime_error("bad hex in a bytea");
      out[i] = static_cast<char>(byte);
    }
  }

 private:
  Result result_;
  int row_ = -1;
};

// A parameter as text (bytes as binary); the server infers its type from the statement.
struct PgParam {
  std::optional<std::string> value;
  bool binary = false;
};

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

// One server connection. Every statement with parameters is prepared on first use and executed
// by name after that: parsed and planned once per connection.
class PostgresConnection final : public SqlConnection {
 public:
  explicit PostgresConnection(const std::string& url) {
    const auto& lib = libpq();
    connection_.reset(lib.connectdb(url.c_str()));
    if (!connection_ || lib.status(connection_.get()) != CONNECTION_OK) {
      const std::string why = connection_ ? lib.error_message(connection_.get()) : "out of memory";
      throw SqlError("cannot connect to PostgreSQL: " + trimmed(why),
                     SqlError::Kind::connection_lost);
    }
    // Server notices ("relation already exists, skipping") are not errors: not on stderr either.
    lib.set_notice_processor(
        connection_.get(), [](void*, const char*) {}, nullptr);
  }
  PGconn* get() const { return connection_.get(); }

  std::unique_ptr<SqlRows> query(std::string_view sql, SqlParams params = {}) override {
    return std::make_unique<PgRows>(run(sql, params));
  }
  int exec(std::string_view sql, SqlParams params = {}) override {
    const auto result = run(sql, params);  // the count is text inside it: kept until read
    const char* count = libpq().cmd_tuples(result.get());
    return count != nullptr && *count ? std::atoi(count) : 0;
  }
  std::int64_t insert(std::string_view sql, SqlParams params) override {
    return *scalar(std::string(sql) + " RETURNING id", params);
  }
  void script(const std::string& sql) override {
    checked(libpq().exec(connection_.get(), sql.c_str()));
  }
  std::string begin_statement(Access access) const override {
    return access == Access::write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
  }
  void commit() override {
    try {
      script("COMMIT");
    } catch (const SqlError& error) {
      // Whether the commit took effect is unknown: never retried as if nothing happened.
      throw SqlError(
          std::string("COMMIT: ") + error.what(),
          error.kind() == SqlError::Kind::connection_lost ? SqlError::Kind::other : error.kind());
    }
  }
  bool usable() const override { return libpq().status(connection_.get()) == CONNECTION_OK; }

 private:
  Result run(std::string_view sql, SqlParams params) {
    const auto& lib = libpq();
    auto name = statement_names_.find(std::string(sql));
    if (name == statement_names_.end()) {
      std::string fresh = "kj_" + std::to_string(statement_names_.size());
      checked(lib.prepare(connection_.get(), fresh.c_str(), std::string(sql).c_str(), 0, nullptr));
      name = statement_names_.emplace(std::string(sql), std::move(fresh)).first;
    }
    std::vector<PgParam> values;
    std::vector<const char*> data;
    std::vector<int> lengths, formats;
    for (const auto& param : params) values.push_back(to_pg(param));
    for (const auto& value : values) {
      data.push_back(value.value ? value.value->data() : nullptr);
      lengths.push_back(value.value ? static_cast<int>(value.value->size()) : 0);
      formats.push_back(value.binary ? 1 : 0);
    }
    return checked(lib.exec_prepared(connection_.get(), name->second.c_str(),
                                     static_cast<int>(values.size()), data.data(), lengths.data(),
                                     formats.data(), 0));
  }

  // Throws SqlError unless the command succeeded.
  Result checked(PGresult* raw) {
    const auto& lib = libpq();
    Result result(raw, lib.clear);
    const ExecStatusType status = raw != nullptr ? lib.result_status(raw) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    const std::string message = trimmed(raw != nullptr ? lib.result_error_message(raw)
                                                       : lib.error_message(connection_.get()));
    const char* state = raw != nullptr ? lib.result_error_field(raw, PG_DIAG_SQLSTATE) : nullptr;
    const std::string sqlstate = state != nullptr ? state : "";
    // Class 08 (connection exception), 57P01-57P03 (server shutting down or not ready), or a
    // connection libpq now reports as broken.
    const bool lost = !usable() || sqlstate.starts_with("08") || sqlstate.starts_with("57P");
    throw SqlError(message, lost                  ? SqlError::Kind::connection_lost
                            : sqlstate == "23505" ? SqlError::Kind::unique_violation
                                                  : SqlError::Kind::other);
  }

  std::unique_ptr<PGconn, decltype(Libpq::finish)> connection_{nullptr, libpq().finish};
  std::unordered_map<std::string, std::string> statement_names_;  // by SQL text
};

// An array literal for `unnest($n::text[])` and the like; nullopt elements are NULL.
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
)sql") + select_claimed("claimed");

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

// kComplete's $7-$16: the runs' columns as array literals, in run order.
std::vector<std::string> run_columns(const std::vector<NewRun>& runs) {
  std::vector<std::vector<std::optional<std::string>>> columns(10);
  for (const auto& run : runs) {
    const SqlParam values[] = {
        run.mode,   run.runner, run.compilation_json, run.result_json, run.system_json,
        run.secret, run.score,  run.passed,           run.start_time,  run.end_time};
    for (std::size_t i = 0; i < columns.size(); ++i) columns[i].push_back(to_pg(values[i]).value);
  }
  std::vector<std::string> literals;
  for (const auto& column : columns) literals.push_back(pg_array(column));
  return literals;
}

// Connects, retrying with exponential backoff until `patience` ran out.
std::unique_ptr<PostgresConnection> connect_with_backoff(const std::string& url,
                                                         std::chrono::milliseconds patience) {
  return retry(SqlError::Kind::connection_lost, patience, std::chrono::milliseconds(50),
               std::chrono::seconds(2), [&] { return std::make_unique<PostgresConnection>(url); });
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
  std::string json_number(std::string_view column, std::string_view key) const override {
    const std::string value =
        "(CAST(" + std::string(column) + " AS jsonb) -> '" + std::string(key) + "')";
    return "CASE WHEN jsonb_typeof" + value + " = 'number' THEN CAST(CAST(" + std::string(column) +
           " AS jsonb) ->> '" + std::string(key) + "' AS DOUBLE PRECISION) END";
  }
  void lock_for_migration(SqlConnection& db) override {
    db.exec("SELECT pg_advisory_xact_lock($1)", {kMigrationLockKey});
  }
  std::string next_id(std::string_view table) const override {
    return "nextval(pg_get_serial_sequence('" + std::string(table) + "', 'id'))";
  }
  Id last_id(SqlConnection& db) override { return *db.scalar("SELECT lastval()"); }
  // nextval first: the sequence never goes back below a value another transaction took.
  void ids_inserted(SqlConnection& db, std::string_view table) override {
    const std::string sequence = "pg_get_serial_sequence('" + std::string(table) + "', 'id')";
    db.exec("SELECT setval(" + sequence + ", GREATEST(nextval(" + sequence +
            "), (SELECT COALESCE(MAX(id), 1) FROM " + std::string(table) + ")))");
  }
  std::string_view lock_rows() const override { return " FOR UPDATE"; }
  std::string_view lock_rows_skip_locked() const override { return " FOR UPDATE SKIP LOCKED"; }
  bool shared_by_servers() const override { return true; }

  std::optional<ClaimedJob> claim(SqlConnection& db, const ClaimRequest& request) override {
    std::vector<std::optional<std::string>> gpu_types(request.gpu_types.begin(),
                                                      request.gpu_types.end());
    auto row = db.query(kClaimNextJob, {pg_array(gpu_types), request.worker_id,
                                        request.lease_expires_at, request.now, request.max_gpus});
    if (!row->next()) return std::nullopt;
    return read_claimed(*row, request.worker_id);
  }
  // One statement, so one transaction: recorded whole or not at all. Runs with files take the
  // store's transaction.
  std::optional<bool> complete(SqlConnection& db, const JobLease& lease, Time now,
                               const JobOutcome& outcome) override {
    for (const auto& run : outcome.runs) {
      if (!run.files.empty()) return std::nullopt;
    }
    const auto runs = run_columns(outcome.runs);
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

  bool wait_for_jobs(std::span<const std::string> gpu_types,
                     std::chrono::milliseconds timeout) override {
    std::lock_guard lock(listen_mutex_);
    if (!listener_ || !listener_->usable()) {
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
      pollfd fd{lib.socket(listener_->get()), POLLIN, 0};
      const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
      if ((ready < 0 && errno != EINTR) ||
          (ready > 0 && lib.consume_input(listener_->get()) == 0)) {
        listener_.reset();  // the server went away: subscribe again on the next call
        return true;
      }
    }
  }

 private:
  void subscribe(std::chrono::milliseconds timeout) {
    listener_.reset();
    try {
      listener_.emplace(url_);
      listener_->script(std::string("LISTEN ") + kJobsChannel);
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
  std::optional<PostgresConnection> listener_;
};

}  // namespace

std::unique_ptr<SqlConnection> postgres_connection(const std::string& url) {
  return std::make_unique<PostgresConnection>(url);
}

std::unique_ptr<Dialect> postgres_dialect(const std::string& url, const StoreOptions& options) {
  return std::make_unique<PostgresDialect>(url, options);
}

}  // namespace kj::store::detail
