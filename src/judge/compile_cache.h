// The compile cache (docs/sandbox.md, "Compile cache"): what Triton and torch's extension
// builder compiled in a scope's earlier runs, given to its next run so that a resubmitted kernel
// is not compiled again. A scope is one user's runs of one exact source (the judge adds the
// source's digest to the owner it is given): a run reads only its own scope's entries, and only
// the judge writes them, from the report of a run of that scope (harness/kj_harness/
// compile_cache.py). So what a run compiles, or plants, reaches only later runs of the same code
// by the same user, which would compile or plant the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::judge {

// What the cache keeps in all (least recently used scopes go first), and what one run gets or
// reports.
constexpr std::uintmax_t kCompileCacheBytes = 4ull << 30;
constexpr std::uintmax_t kCompileCacheRunBytes = 48ull << 20;
constexpr std::uintmax_t kCompileCacheFileBytes = 32ull << 20;

class CompileCache {
 public:
  // Entries live under root/<scope digest>/<cache>/<entry>/...; <cache> is `triton` or
  // `torch_extensions`, an entry one kernel's group (Triton) or one extension's build directory.
  explicit CompileCache(std::filesystem::path root,
                        std::uintmax_t total_bytes = kCompileCacheBytes);

  // $KJ_COMPILE_CACHE, else $XDG_CACHE_HOME/kj/compile, else ~/.cache/kj/compile.
  static std::filesystem::path default_root();

  // The file a run of `scope` reads (JSON: {"files": [{path, mtime_ns, executable, data}]}):
  // the scope's most recently used entries, up to kCompileCacheRunBytes; they count as used now.
  std::string entries_for(const std::string& scope) const;

  // Stores the files of a run's `compile_cache` event under `scope`, each checked (path shape,
  // base64, sizes); then evicts the least recently used scopes beyond the cache's size. Returns
  // {"stored", "refused"} counts. Never throws for what the run reported.
  nlohmann::json store(const std::string& scope, const nlohmann::json& event) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path scope_dir(const std::string& scope) const;
  void evict() const;

  std::filesystem::path root_;
  std::uintmax_t total_bytes_;
};

}  // namespace kj::judge
