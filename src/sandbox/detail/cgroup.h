// Per-run control groups (v1 or v2) that cap memory and process count and measure CPU time and
// peak memory of the whole tree. Every step degrades to a warning when the hierarchy is not
// writable; the directories are removed on destruction.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kj::sandbox::detail {

// One cgroup directory created for this run; removed (after killing leftovers) on destruction.
class CgroupDir {
 public:
  CgroupDir() = default;
  explicit CgroupDir(std::string path) : path_(std::move(path)) {}
  ~CgroupDir() { remove(); }
  CgroupDir(CgroupDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  CgroupDir& operator=(CgroupDir&& other) noexcept {
    if (this != &other) {
      remove();
      path_ = std::move(other.path_);
      other.path_.clear();
    }
    return *this;
  }
  CgroupDir(const CgroupDir&) = delete;
  CgroupDir& operator=(const CgroupDir&) = delete;

  const std::string& path() const { return path_; }
  explicit operator bool() const { return !path_.empty(); }
  bool write(const std::string& file, const std::string& value) const;
  std::optional<std::string> read(const std::string& file) const;

 private:
  void remove();
  std::string path_;
};

// What the host's cgroup mounts look like from this process.
struct CgroupLayout {
  std::string version;  // "v1", "v2" or "none"
  // Parent directories where this process may create children, per controller ("" = none).
  std::string v1_memory, v1_pids, v1_cpuacct;
  std::string v2_parent;                    // own cgroup in the unified hierarchy
  std::string v2_mount;                     // mount point of the unified hierarchy
  std::vector<std::string> v2_controllers;  // enabled in v2_parent/cgroup.controllers
};
CgroupLayout detect_cgroups();

class RunCgroups {
 public:
  // Creates the run's cgroups and applies the limits; problems become warnings.
  RunCgroups(std::uint64_t memory_bytes, int max_processes, std::vector<std::string>& warnings);
  RunCgroups(const RunCgroups&) = delete;
  RunCgroups& operator=(const RunCgroups&) = delete;

  bool caps_memory() const { return memory_ok_; }
  bool caps_processes() const { return pids_ok_; }
  // Moves `pid` (and so every descendant it creates later) into the run's cgroups.
  void attach(pid_t pid, std::vector<std::string>& warnings);

  std::optional<std::uint64_t> cpu_ns() const;
  std::optional<std::uint64_t> peak_memory() const;
  bool oom_killed() const;            // the kernel's OOM killer fired inside the memory cap
  bool memory_limit_reached() const;  // failcnt / events max > 0 (may be reclaimed page cache)
  bool process_limit_reached() const;

 private:
  bool v2_ = false;
  bool memory_ok_ = false;
  bool pids_ok_ = false;
  CgroupDir memory_, pids_, cpu_;  // all three are the same directory on v2 (only memory_ used)
};

}  // namespace kj::sandbox::detail
