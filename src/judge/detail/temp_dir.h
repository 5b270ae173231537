// A host directory of the judge's, removed with everything in it when its owner goes away.
// Internal to src/judge.
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

}  // namespace kj::judge::detail
