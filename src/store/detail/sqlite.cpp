#include "store/detail/sqlite.h"

#include <limits>

namespace kj::store::detail {
namespace {

[[noreturn]] void fail(sqlite3* db, int code, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  throw SqliteError(db ? sqlite3_extended_errcode(db) : code, message);
}

void check(sqlite3* db, int code, std::string_view what) {
  if (code != SQLITE_OK) fail(db, code, what);
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sql.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw SqliteError(SQLITE_TOOBIG, "statement too long");
  }
  int code = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  statement_.reset(statement);
  check(db, code, "prepare");
}

Query::Query(sqlite3* db, Statement& statement) : db_(db), statement_(statement.get()) {}

Query::~Query() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

Query& Query::bind(int index, std::int64_t value) {
  check(db_, sqlite3_bind_int64(statement_, index, value), "bind");
  return *this;
}

Query& Query::bind(int index, double value) {
  check(db_, sqlite3_bind_double(statement_, index, value), "bind");
  return *this;
}

Query& Query::bind(int index, std::string_view text) {
  check(db_,
        sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                            SQLITE_UTF8),
        "bind");
  return *this;
}

Query& Query::bind_blob(int index, const void* data, std::size_t size) {
  check(db_, sqlite3_bind_blob64(statement_, index, data, size, SQLITE_TRANSIENT), "bind");
  return *this;
}

Query& Query::bind_null(int index) {
  check(db_, sqlite3_bind_null(statement_, index), "bind");
  return *this;
}

bool Query::step() {
  int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  fail(db_, code, "step");
}

void Query::run() {
  while (step()) {
  }
}

bool Query::is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::int64_t Query::int64(int column) const { return sqlite3_column_int64(statement_, column); }

double Query::real(int column) const { return sqlite3_column_double(statement_, column); }

std::string Query::text(int column) const {
  const auto* data = sqlite3_column_text(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  if (!data) return {};
  return std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
}

std::string Query::blob(int column) const {
  const auto* data = sqlite3_column_blob(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  if (!data) return {};
  return std::string(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

void Query::blob_into(int column, std::string& out) const {
  const auto* data = sqlite3_column_blob(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  if (!data) {
    out.clear();
    return;
  }
  out.assign(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

std::optional<std::int64_t> Query::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> Query::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

Connection::Connection(const std::string& path) {
  sqlite3* db = nullptr;
  int code = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  db_.reset(db);
  if (code != SQLITE_OK) fail(db, code, "open " + path);
  sqlite3_extended_result_codes(db, 1);
}

void Connection::exec(const std::string& sql) {
  char* error = nullptr;
  int code = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &error);
  if (code != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(code);
    sqlite3_free(error);
    throw SqliteError(sqlite3_extended_errcode(db_.get()), message);
  }
}

Query Connection::query(const std::string& sql) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    found = statements_.emplace(sql, Statement(db_.get(), sql)).first;
  }
  return Query(db_.get(), found->second);
}

Transaction::Transaction(Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!open_) return;
  try {
    connection_.exec("ROLLBACK");
  } catch (const SqliteError&) {
    // SQLite already rolled back (e.g. after an I/O error); nothing is left to undo.
  }
}

void Transaction::commit() {
  connection_.exec("COMMIT");
  open_ = false;
}

}  // namespace kj::store::detail
