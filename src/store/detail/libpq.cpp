#include "store/detail/libpq.h"

#include <dlfcn.h>

#include <charconv>
#include <cstdlib>
#include <mutex>

namespace kj::store::detail {
namespace {

struct DlClose {
  void operator()(void* library) const {
    if (library != nullptr) dlclose(library);
  }
};

template <typename Function>
void resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(library, name));
  if (out == nullptr) {
    throw std::runtime_error(std::string("the loaded libpq lacks ") + name);
  }
}

// Server notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
void ignore_notice(void*, const char*) {}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw std::runtime_error("bad hex digit in a bytea value");
}

}  // namespace

const Libpq& libpq() {
  static std::mutex mutex;
  static std::unique_ptr<void, DlClose> library;
  static Libpq functions;
  static std::string failure;
  std::lock_guard lock(mutex);
  if (functions.connectdb != nullptr) return functions;
  if (!failure.empty()) throw std::runtime_error(failure);
  const char* override_path = std::getenv("KJ_LIBPQ");
  const std::string name =
      override_path != nullptr && *override_path ? override_path : "libpq.so.5";
  library.reset(dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library) {
    const char* why = dlerror();
    failure = "PostgreSQL needs libpq (" + name + " did not load" +
              (why != nullptr ? std::string(": ") + why : std::string()) +
              "); install it with `apt-get install libpq5`";
    throw std::runtime_error(failure);
  }
  Libpq loaded;
  void* lib = library.get();
  try {
#define KJ_LIBPQ_RESOLVE(function, member) resolve(lib, #function, loaded.member);
    KJ_LIBPQ_FUNCTIONS(KJ_LIBPQ_RESOLVE)
#undef KJ_LIBPQ_RESOLVE
  } catch (const std::exception& e) {
    failure = e.what();
    library.reset();
    throw;
  }
  functions = loaded;
  return functions;
}

namespace {
// A parameter list as libpq's exec calls take it.
struct ParamArrays {
  explicit ParamArrays(const std::vector<PgParam>& params)
      : values(params.size()), lengths(params.size()), formats(params.size()) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      values[i] = params[i].value ? params[i].value->data() : nullptr;
      lengths[i] = params[i].value ? static_cast<int>(params[i].value->size()) : 0;
      formats[i] = params[i].binary ? 1 : 0;
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

}  // namespace

void PgResult::Clear::operator()(PGresult* result) const {
  if (result != nullptr) libpq().clear(result);
}
int PgResult::rows() const { return result_ ? libpq().ntuples(result_.get()) : 0; }
bool PgResult::is_null(int row, int column) const {
  return libpq().getisnull(result_.get(), row, column) != 0;
}
std::string PgResult::text(int row, int column) const {
  const auto& lib = libpq();
  return std::string(lib.getvalue(result_.get(), row, column),
                     static_cast<std::size_t>(lib.getlength(result_.get(), row, column)));
}
std::int64_t PgResult::int64(int row, int column) const {
  const std::string value = text(row, column);
  std::int64_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc()) {
    // Booleans come back as t/f.
    if (value == "t") return 1;
    if (value == "f") return 0;
    throw std::runtime_error("not an integer: " + value);
  }
  return out;
}
double PgResult::real(int row, int column) const {
  return std::strtod(text(row, column).c_str(), nullptr);
}
std::string PgResult::bytes(int row, int column) const {
  const std::string hex = text(row, column);
  if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x' || hex.size() % 2 != 0) {
    throw std::runtime_error("unexpected bytea encoding");
  }
  std::string out;
  out.reserve((hex.size() - 2) / 2);
  for (std::size_t i = 2; i < hex.size(); i += 2) {
    out += static_cast<char>(hex_value(hex[i]) * 16 + hex_value(hex[i + 1]));
  }
  return out;
}
int PgResult::affected() const {
  const char* count = libpq().cmd_tuples(result_.get());
  return count != nullptr && *count ? std::atoi(count) : 0;
}

void PgConnection::Finish::operator()(PGconn* connection) const {
  if (connection != nullptr) libpq().finish(connection);
}

PgConnection::PgConnection(const std::string& url) {
  const auto& lib = libpq();
  connection_.reset(lib.connectdb(url.c_str()));
  if (!connection_) throw PgError("out of memory connecting to PostgreSQL", "", true);
  if (lib.status(connection_.get()) != CONNECTION_OK) {
    std::string message = lib.error_message(connection_.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    throw PgError("cannot connect to PostgreSQL: " + message, "", true);
  }
  lib.set_notice_processor(connection_.get(), ignore_notice, nullptr);
}

bool PgConnection::ok() const { return libpq().status(connection_.get()) == CONNECTION_OK; }

int PgConnection::socket() const { return libpq().socket(connection_.get()); }

PgResult PgConnection::exec(const std::string& sql, const std::vector<PgParam>& params) {
  const auto& lib = libpq();
  const ParamArrays p(params);
  PgResult result(lib.exec_params(connection_.get(), sql.c_str(), p.count(), nullptr,
                                  p.values.data(), p.lengths.data(), p.formats.data(), 0));
  return checked(std::move(result));
}

void PgConnection::prepare(const std::string& name, const std::string& sql) {
  // Types are inferred from the SQL, as PQexecParams does without paramTypes.
  checked(PgResult(libpq().prepare(connection_.get(), name.c_str(), sql.c_str(), 0, nullptr)));
}

PgResult PgConnection::exec_prepared(const std::string& name, const std::vector<PgParam>& params) {
  const ParamArrays p(params);
  return checked(
      PgResult(libpq().exec_prepared(connection_.get(), name.c_str(), p.count(), p.values.data(),
                                     p.lengths.data(), p.formats.data(), 0)));
}

PgResult PgConnection::exec_script(const std::string& sql) {
  return checked(PgResult(libpq().exec(connection_.get(), sql.c_str())));
}

PgResult PgConnection::checked(PgResult result) {
  const auto& lib = libpq();
  const ExecStatusType status =
      result.get() != nullptr ? lib.result_status(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  std::string message = result.get() != nullptr ? lib.result_error_message(result.get())
                                                : lib.error_message(connection_.get());
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state =
      result.get() != nullptr ? lib.result_error_field(result.get(), PG_DIAG_SQLSTATE) : nullptr;
  std::string sqlstate = state != nullptr ? state : "";
  // Class 08 (connection exception), 57P01-57P03 (server shutting down or not ready), or a
  // connection libpq now reports as broken.
  const bool lost = !ok() || sqlstate.starts_with("08") || sqlstate.starts_with("57P");
  throw PgError(message, sqlstate, lost);
}

}  // namespace kj::store::detail
