// Host directories of the judge's: a temporary one, removed with everything in it when its owner
// goes away, and the caches kept between runs. Internal to src/judge.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace kj::judge::detail {

class TempDir {
 public:
  // Creates <parent>/<prefix>XXXXXX (the parent too); parent defaults to $TMPDIR, else /tmp.
  explicit TempDir(std::string_view prefix = "kj-eval-", std::filesystem::path parent = {}) {
    if (parent.empty()) {
      const char* base = std::getenv("TMPDIR");
      parent = base != nullptr && *base != '\0' ? base : "/tmp";
    }
    std::filesystem::create_directories(parent);
    std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory in " + parent.string());
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  // The directory is kept: someone else owns it now.
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

// A cache of kj's kept between runs: $<override_variable> when set, else
// $XDG_CACHE_HOME/kj/<name>, else ~/.cache/kj/<name>, else <temp>/<temp_name>.
inline std::filesystem::path cache_dir(const char* override_variable, std::string_view name,
                                       std::string_view temp_name) {
  const auto set = [](const char* value) { return value != nullptr && *value != '\0'; };
  if (const char* path = std::getenv(override_variable); set(path)) {
    return std::filesystem::absolute(path);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); set(xdg)) {
    return std::filesystem::path(xdg) / "kj" / name;
  }
  if (const char* home = std::getenv("HOME"); set(home)) {
    return std::filesystem::path(home) / ".cache" / "kj" / name;
  }
  return std::filesystem::temp_directory_path() / temp_name;
}

}  // namespace kj::judge::detail
