// libpq, loaded with dlopen the first time a postgres:// URL is opened, so `kj` starts on hosts
// without it (GPU hosts that only use SQLite). Only the declarations come from libpq-fe.h.
// Thin RAII wrappers: a connection, a result, a parameter list and the error with its SQLSTATE.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kj::store::detail {

// The libpq functions this backend calls, resolved once per process.
struct Libpq {
  decltype(&PQconnectdb) connectdb = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQexec) exec = nullptr;
  decltype(&PQexecParams) exec_params = nullptr;
  decltype(&PQprepare) prepare = nullptr;
  decltype(&PQexecPrepared) exec_prepared = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQresultErrorField) result_error_field = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQcmdTuples) cmd_tuples = nullptr;
  decltype(&PQsocket) socket = nullptr;
  decltype(&PQconsumeInput) consume_input = nullptr;
  decltype(&PQnotifies) notifies = nullptr;
  decltype(&PQfreemem) freemem = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
};

// Loads libpq.so.5 (or $KJ_LIBPQ) once; throws std::runtime_error saying what to install.
const Libpq& libpq();

class PgError : public std::runtime_error {
 public:
  PgError(const std::string& message, std::string sqlstate, bool connection_lost)
      : std::runtime_error(message),
        sqlstate_(std::move(sqlstate)),
        connection_lost_(connection_lost) {}
  const std::string& sqlstate() const { return sqlstate_; }
  bool unique_violation() const { return sqlstate_ == "23505"; }
  bool connection_lost() const { return connection_lost_; }

 private:
  std::string sqlstate_;
  bool connection_lost_;
};

// One statement parameter: text, binary (bytea), or NULL.
struct PgParam {
  std::optional<std::string> value;
  bool binary = false;
};
PgParam pg(std::string_view text);
PgParam pg(const char* text);
PgParam pg(std::int64_t value);
PgParam pg(int value);
PgParam pg(double value);
PgParam pg(bool value);
PgParam pg(const std::optional<std::int64_t>& value);
PgParam pg(const std::optional<double>& value);
PgParam pg_bytes(const void* data, std::size_t size);
// A text[] literal for `= ANY($n::text[])`.
PgParam pg_text_array(const std::vector<std::string>& values);
// An array literal whose elements may be NULL, for `unnest($n::float8[])` and the like; each
// element is a PgParam's text (binary elements are not supported).
PgParam pg_array(const std::vector<PgParam>& elements);

// A statement a connection prepares the first time it runs it (PQprepare) and then executes by
// name: parsed and planned once per connection, so a new connection prepares it again.
struct PgStatement {
  const char* name;  // unique per statement
  const char* sql;
};

class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* result) : result_(result) {}
  PGresult* get() const { return result_.get(); }
  int rows() const;
  bool empty() const { return rows() == 0; }
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  std::int64_t int64(int row, int column) const;
  double real(int row, int column) const;
  std::optional<std::int64_t> optional_int64(int row, int column) const;
  std::optional<double> optional_real(int row, int column) const;
  std::string bytes(int row, int column) const;  // a bytea column, decoded from hex
  int affected() const;                          // rows an UPDATE/INSERT/DELETE touched

 private:
  struct Clear {
    void operator()(PGresult* result) const;
  };
  std::unique_ptr<PGresult, Clear> result_;
};

class PgConnection {
 public:
  // Connects; throws PgError (connection_lost) when the server cannot be reached.
  explicit PgConnection(const std::string& url);
  PGconn* get() const { return connection_.get(); }
  bool ok() const;
  PgResult exec(const std::string& sql, const std::vector<PgParam>& params = {});
  // Prepares `statement` on this connection if it was not yet, then executes it.
  PgResult exec_prepared(const PgStatement& statement, const std::vector<PgParam>& params);
  // Several statements, no parameters (migrations).
  PgResult exec_script(const std::string& sql);
  // The socket to wait on for notifications.
  int socket() const;

 private:
  PgResult checked(PgResult result);  // throws PgError unless the command succeeded
  struct Finish {
    void operator()(PGconn* connection) const;
  };
  std::unique_ptr<PGconn, Finish> connection_;
  std::set<std::string, std::less<>> prepared_;  // names prepared on this connection
};

// BEGIN ... COMMIT; rolled back unless commit() was called (and the connection still works).
class PgTransaction {
 public:
  explicit PgTransaction(PgConnection& connection);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  void commit();

 private:
  PgConnection& connection_;
  bool open_ = true;
};

}  // namespace kj::store::detail
