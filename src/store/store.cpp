#include "store/store.h"

#include <algorithm>

#include "store/detail/dialect.h"

namespace kj::store {

StoreError::StoreError(std::string operation, const std::string& message)
    : std::runtime_error(operation + ": " + message), operation_(std::move(operation)) {}

std::string to_string(Visibility visibility) {
  return visibility == Visibility::listed ? "public" : "hidden";
}

std::optional<Visibility> visibility_from_string(std::string_view name) {
  if (name == "public") return Visibility::listed;
  if (name == "hidden") return Visibility::hidden;
  return std::nullopt;
}

// Both enums' names, in their order.
constexpr const char* kStateNames[] = {"queued", "running", "done", "failed"};
std::string to_string(SubmissionStatus status) { return kStateNames[static_cast<int>(status)]; }
std::string to_string(JobState state) { return kStateNames[static_cast<int>(state)]; }

int latest_schema_version() {
  int latest = 0;
  for (const auto& migration : detail::migrations()) latest = std::max(latest, migration.version);
  return latest;
}

std::unique_ptr<Store> open_store(const std::string& url, StoreOptions options) {
  try {
    if (url.starts_with("postgres://") || url.starts_with("postgresql://")) {
      auto dialect = detail::postgres_dialect(url, options);
      return detail::open_sql_store(std::move(dialect), std::move(options));
    }
    std::string path = url.starts_with("sqlite:") ? url.substr(7) : url;
    if (path.empty()) throw StoreError("open", "no database path in " + url);
    auto dialect = detail::sqlite_dialect(path, options);
    return detail::open_sql_store(std::move(dialect), std::move(options));
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& error) {
    throw StoreError("open", error.what());
  }
}

}  // namespace kj::store
