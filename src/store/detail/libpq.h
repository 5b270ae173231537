// libpq, loaded with dlopen the first time a postgres:// URL is opened, so `kj` starts on hosts
// without it (GPU hosts that only use SQLite). Only the declarations come from libpq-fe.h.
// Thin RAII wrappers: a connection, a result, and the error with its SQLSTATE.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "store/detail/sql.h"

namespace kj::store::detail {

// The libpq functions the store calls, resolved once per process: (libpq name, member).
#define KJ_LIBPQ_FUNCTIONS(X)                                                                   \
  X(PQconnectdb, connectdb)                                                                     \
  X(PQfinish, finish)                                                                           \
  X(PQstatus, status) X(PQerrorMessage, error_message) X(PQexec, exec)                          \
      X(PQexecParams, exec_params) X(PQprepare, prepare) X(PQexecPrepared, exec_prepared)       \
          X(PQresultStatus, result_status) X(PQresultErrorMessage, result_error_message)        \
              X(PQresultErrorField, result_error_field) X(PQclear, clear) X(PQntuples, ntuples) \
                  X(PQgetvalue, getvalue) X(PQgetlength, getlength) X(PQgetisnull, getisnull)   \
                      X(PQcmdTuples, cmd_tuples) X(PQsocket, socket)                            \
                          X(PQconsumeInput, consume_input) X(PQnotifies, notifies)              \
                              X(PQfreemem, freemem) X(PQsetNoticeProcessor, set_notice_processor)
struct Libpq {
#define KJ_LIBPQ_MEMBER(function, member) decltype(&function) member = nullptr;
  KJ_LIBPQ_FUNCTIONS(KJ_LIBPQ_MEMBER)
#undef KJ_LIBPQ_MEMBER
};

// Loads libpq.so.5 (or $KJ_LIBPQ) once; throws std::runtime_error saying what to install.
const Libpq& libpq();

class PgError : public SqlError {
 public:
  PgError(const std::string& message, std::string sqlstate, bool connection_lost)
      : SqlError(message), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost) {}
  const std::string& sqlstate() const { return sqlstate_; }
  bool unique_violation() const override { return sqlstate_ == "23505"; }
  bool connection_lost() const override { return connection_lost_; }

 private:
  std::string sqlstate_;
  bool connection_lost_;
};

// One statement parameter: text, binary (bytea), or NULL.
struct PgParam {
  std::optional<std::string> value;
  bool binary = false;
};

class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* result) : result_(result) {}
  PGresult* get() const { return result_.get(); }
  int rows() const;
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  std::int64_t int64(int row, int column) const;
  double real(int row, int column) const;
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
  // A statement prepared under `name` on this connection, then executed by that name.
  void prepare(const std::string& name, const std::string& sql);
  PgResult exec_prepared(const std::string& name, const std::vector<PgParam>& params);
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
};

}  // namespace kj::store::detail
