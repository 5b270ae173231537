// Owning wrappers around the SQLite C API: a connection, prepared statements, transactions.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kj::store::detail {

// A failed SQLite call; the store turns it into a StoreError naming the operation.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // extended result code

 private:
  int code_;
};

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

// A prepared statement, reset and unbound when a Query over it ends.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  sqlite3_stmt* get() const { return statement_.get(); }

 private:
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> statement_;
};

// One execution of a cached statement: bind, step, read columns. Resets the statement on exit.
class Query {
 public:
  Query(sqlite3* db, Statement& statement);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& bind(int index, std::int64_t value);
  Query& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Query& bind(int index, bool value) { return bind(index, static_cast<std::int64_t>(value)); }
  Query& bind(int index, double value);
  Query& bind(int index, std::string_view text);
  Query& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Query& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Query& bind_blob(int index, const void* data, std::size_t size);
  Query& bind_null(int index);
  template <typename T>
  Query& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // True while a row is available.
  bool step();
  // Runs a statement that returns no rows (or ignores them).
  void run();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::string blob(int column) const;                  // byte-exact, NUL bytes included
  void blob_into(int column, std::string& out) const;  // the same, reusing out's buffer
  std::optional<std::int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_;
};

// An open database with a cache of prepared statements keyed by their SQL text.
class Connection {
 public:
  explicit Connection(const std::string& path);
  sqlite3* get() const { return db_.get(); }

  // Runs SQL that may hold several statements and returns no rows.
  void exec(const std::string& sql);
  Query query(const std::string& sql);
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_.get()); }
  int changes() const { return sqlite3_changes(db_.get()); }

 private:
  std::unique_ptr<sqlite3, ConnectionCloser> db_;
  std::unordered_map<std::string, Statement> statements_;
};

// BEGIN IMMEDIATE (takes the write lock up front, so read-then-write cannot race another
// connection); rolled back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

}  // namespace kj::store::detail
