#include "store/store.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "store/detail/postgres_store.h"
#include "store/detail/queue_signal.h"
#include "store/detail/sqlite_schema.h"
#include "store/detail/sqlite_store.h"

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

std::string to_string(SubmissionStatus status) {
  switch (status) {
    case SubmissionStatus::queued:
      return "queued";
    case SubmissionStatus::running:
      return "running";
    case SubmissionStatus::done:
      return "done";
    case SubmissionStatus::failed:
      return "failed";
  }
  return "failed";
}

std::string to_string(JobState state) {
  switch (state) {
    case JobState::queued:
      return "queued";
    case JobState::running:
      return "running";
    case JobState::done:
      return "done";
    case JobState::failed:
      return "failed";
  }
  return "failed";
}

int latest_schema_version() {
  int latest = 0;
  for (const auto& migration : detail::sqlite_migrations())
    latest = std::max(latest, migration.version);
  return latest;
}

std::unique_ptr<Store> open_store(const std::string& url, StoreOptions options) {
  if (url.starts_with("postgres://") || url.starts_with("postgresql://")) {
    return detail::open_postgres_store(url, std::move(options));
  }
  std::string path = url.starts_with("sqlite:") ? url.substr(7) : url;
  if (path.empty()) throw StoreError("open", "no database path in " + url);
  return detail::open_sqlite_store(path, std::move(options));
}

namespace detail {

std::shared_ptr<QueueSignal> queue_signal_for(const std::string& database_key) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<QueueSignal>> signals;
  std::lock_guard lock(mutex);
  auto& slot = signals[database_key];
  auto signal = slot.lock();
  if (!signal) {
    signal = std::make_shared<QueueSignal>();
    slot = signal;
  }
  return signal;
}

}  // namespace detail
}  // namespace kj::store
