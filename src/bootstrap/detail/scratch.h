// A temporary host directory for one row's files, removed with everything in it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kj::bootstrap::detail {

class ScratchDir {
 public:
  // Creates $TMPDIR (else /tmp) /<prefix>XXXXXX. Throws std::runtime_error on failure.
  explicit ScratchDir(std::string_view prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `text` to `path` (truncating). Throws std::runtime_error on failure.
void write_file(const std::filesystem::path& path, std::string_view text);
std::string read_file(const std::filesystem::path& path);

}  // namespace kj::bootstrap::detail
