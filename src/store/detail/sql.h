// The SQL driver interface the store is written against: a connection that runs statements with
// typed parameters, a cursor over the rows they return, and a transaction. SQLite (sqlite.cpp)
// and PostgreSQL (postgres.cpp) implement it. Statements are written once, with $1, $2, ...
// placeholders; CAST(x AS T) where PostgreSQL must be told a parameter's type.
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "store/store.h"

namespace kj::store::detail {

// A failed statement, and what of it the store must know.
class SqlError : public std::runtime_error {
 public:
  enum class Kind {
    other,
    unique_violation,
    busy,             // another connection holds the database (SQLite)
    connection_lost,  // nothing was committed: retrying is safe (never said of COMMIT)
  };
  SqlError(const std::string& message, Kind kind) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// What `attempt` returns, tried again after an SqlError of `kind` (pausing `pause`, doubled each
// time up to `max_pause`) until `patience` ran out; then that error is thrown.
template <typename Attempt>
auto retry(SqlError::Kind kind, std::chrono::milliseconds patience, std::chrono::milliseconds pause,
           std::chrono::milliseconds max_pause, Attempt&& attempt) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    try {
      return attempt();
    } catch (const SqlError& error) {
      if (error.kind() != kind || std::chrono::steady_clock::now() + pause > deadline) throw;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, max_pause);
  }
}

// Bytes bound as a BLOB / bytea (text is bound as text).
struct Bytes {
  std::string_view data;
};

// One statement parameter; times are bound as unix microseconds, flags as 0/1.
class SqlParam {
 public:
  using Value = std::variant<std::monostate, std::int64_t, double, std::string_view, Bytes>;
  SqlParam(std::nullopt_t) {}
  template <std::integral Integer>  // int, std::int64_t, bool
  SqlParam(Integer value) : value_(std::int64_t{value}) {}
  SqlParam(double value) : value_(value) {}
  template <std::convertible_to<std::string_view> Text>  // std::string, a literal, ...
  SqlParam(const Text& value) : value_(std::string_view(value)) {}
  SqlParam(Bytes value) : value_(value) {}
  SqlParam(Time value) : value_(std::int64_t{value.time_since_epoch().count()}) {}
  template <typename T>
  SqlParam(const std::optional<T>& value) {
    if (value) *this = SqlParam(*value);
  }
  const Value& value() const { return value_; }

 private:
  Value value_;
};
using SqlParams = std::initializer_list<SqlParam>;

// The rows of one statement, read forward. Column accessors read the current row.
class SqlRows {
 public:
  virtual ~SqlRows() = default;
  virtual bool next() = 0;  // true while a row is available
  virtual bool is_null(int column) const = 0;
  virtual std::int64_t int64(int column) const = 0;
  virtual double real(int column) const = 0;
  virtual std::string text(int column) const = 0;                   // NULL: empty
  virtual void bytes_into(int column, std::string& out) const = 0;  // a BLOB / bytea, byte-exact

  std::string bytes(int column) const {
    std::string out;
    bytes_into(column, out);
    return out;
  }
};

// A JobState, SubmissionStatus or Visibility from its name in the database.
template <typename Enum>
Enum from_text(const std::string& text) {
  if constexpr (std::is_same_v<Enum, Visibility>) {
    return visibility_from_string(text).value_or(Visibility::hidden);
  } else {
    for (const Enum state : {Enum::queued, Enum::running, Enum::done}) {
      if (to_string(state) == text) return state;
    }
    return Enum::failed;
  }
}

// Reads the current row's columns left to right, each as the type it is read into: integers,
// flags (0/1) as bool, unix microseconds as Time, states by name, NULL as nullopt.
class RowReader {
 public:
  explicit RowReader(const SqlRows& row, int first = 0) : row_(row), column_(first) {}
  template <typename T>
  RowReader& operator>>(std::optional<T>& out) {
    if (!row_.is_null(column_)) return *this >> out.emplace();
    out.reset();
    ++column_;
    return *this;
  }
  template <typename T>
  RowReader& operator>>(T& out) {
    const int column = column_++;
    if constexpr (std::is_same_v<T, std::string>) {
      out = row_.text(column);
    } else if constexpr (std::is_same_v<T, bool>) {
      out = row_.int64(column) != 0;
    } else if constexpr (std::is_same_v<T, double>) {
      out = row_.real(column);
    } else if constexpr (std::is_same_v<T, Time>) {
      out = Time(std::chrono::microseconds(row_.int64(column)));
    } else if constexpr (std::is_enum_v<T>) {
      out = from_text<T>(row_.text(column));
    } else {
      out = static_cast<T>(row_.int64(column));
    }
    return *this;
  }
  // A BLOB / bytea column into `out`.
  RowReader& bytes_into(std::string& out) {
    row_.bytes_into(column_++, out);
    return *this;
  }

 private:
  const SqlRows& row_;
  int column_;
};

// A row made a value of type T: its columns, or those an operator>>(RowReader&, T&) reads.
template <typename T>
T read(const SqlRows& row) {
  T value;
  RowReader reader(row);
  reader >> value;
  return value;
}

enum class Access { write, snapshot };  // a read-write transaction, or one consistent read

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs a statement; the rows it returns (RETURNING included) are read from the cursor, which
  // must be dropped before the statement is run again.
  virtual std::unique_ptr<SqlRows> query(std::string_view sql, SqlParams params = {}) = 0;
  // Runs a statement to its end; how many rows it inserted, updated or deleted.
  virtual int exec(std::string_view sql, SqlParams params = {}) = 0;
  // Runs an INSERT of one row into a table with an `id` key; the new row's id.
  virtual std::int64_t insert(std::string_view sql, SqlParams params) = 0;
  // Several statements without parameters (migrations).
  virtual void script(const std::string& sql) = 0;
  void begin(Access access) { script(begin_statement(access)); }
  virtual void commit() { script("COMMIT"); }
  void rollback() noexcept {
    try {
      if (usable()) script("ROLLBACK");
    } catch (const std::exception&) {
      // The database already rolled back (after an I/O error, or with the lost connection).
    }
  }
  // BEGIN as this database spells the transaction.
  virtual std::string begin_statement(Access access) const = 0;
  // False once the connection failed for good (a PostgreSQL server went away).
  virtual bool usable() const = 0;

  // Every row of the statement, each made a value by `read`.
  template <typename Read>
  auto all(std::string_view sql, SqlParams params, Read read) {
    auto rows = query(sql, params);
    std::vector<std::decay_t<decltype(read(*rows))>> values;
    while (rows->next()) values.push_back(read(*rows));
    return values;
  }
  // The first row made a value by `read`; nullopt when there is no row.
  template <typename Read>
  auto first(std::string_view sql, SqlParams params, Read read)
      -> std::optional<std::decay_t<decltype(read(std::declval<const SqlRows&>()))>> {
    auto rows = query(sql, params);
    if (!rows->next()) return std::nullopt;
    return read(*rows);
  }
  // The first row's first column as an integer; nullopt when there is no row.
  std::optional<std::int64_t> scalar(std::string_view sql, SqlParams params = {}) {
    return first(sql, params, read<std::int64_t>);
  }
};

// A transaction, rolled back unless commit() was called.
class SqlTransaction {
 public:
  explicit SqlTransaction(SqlConnection& connection, Access access = Access::write)
      : connection_(connection) {
    connection_.begin(access);
  }
  ~SqlTransaction() {
    if (open_) connection_.rollback();
  }
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  void commit() {
    open_ = false;
    connection_.commit();
  }

 private:
  SqlConnection& connection_;
  bool open_ = true;
};

}  // namespace kj::store::detail
