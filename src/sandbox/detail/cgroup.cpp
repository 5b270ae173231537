#include "sandbox/detail/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace kj::sandbox::detail {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  for (const auto& entry : list)
    if (entry == item) return true;
  return false;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Value of `key` in a "key value" per line file (memory.events, cpu.stat, oom_control).
std::optional<std::uint64_t> keyed_value(const std::optional<std::string>& text,
                                         const std::string& key) {
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return std::nullopt;
}

std::optional<std::uint64_t> number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  try {
    return std::stoull(*text);
  } catch (...) {
    return std::nullopt;
  }
}

// Joins a mount point with a cgroup path, given the root of the hierarchy that is mounted there.
std::string join_cgroup(const std::string& mount, const std::string& mount_root,
                        const std::string& own) {
  std::string rel = own;
  if (mount_root != "/" && rel.rfind(mount_root, 0) == 0) rel = rel.substr(mount_root.size());
  if (rel.empty() || rel == "/") return mount;
  return mount + rel;
}

std::string unique_name() {
  static std::atomic<unsigned> counter{0};
  return "kj-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

std::string errno_text() { return std::strerror(errno); }

bool write_file(const std::string& path, const std::string& value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

}  // namespace

void CgroupDir::remove() {
  if (path_.empty()) return;
  // The tree is normally gone when this runs; retry briefly and kill stragglers otherwise.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    if (auto procs = read("cgroup.procs")) {
      std::istringstream in(*procs);
      pid_t pid = 0;
      while (in >> pid) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool CgroupDir::write(const std::string& file, const std::string& value) const {
  return write_file(path_ + "/" + file, value);
}

std::optional<std::string> CgroupDir::read(const std::string& file) const {
  return read_file(path_ + "/" + file);
}

CgroupLayout detect_cgroups() {
  CgroupLayout layout;
  // Own cgroup path per controller list ("" key = unified hierarchy).
  std::vector<std::pair<std::vector<std::string>, std::string>> own;
  std::string unified_own;
  if (auto text = read_file("/proc/self/cgroup")) {
    for (const auto& line : split(*text, '\n')) {
      const auto first = line.find(':');
      const auto second = line.find(':', first + 1);
      if (first == std::string::npos || second == std::string::npos) continue;
      const std::string controllers = line.substr(first + 1, second - first - 1);
      const std::string path = line.substr(second + 1);
      if (controllers.empty())
        unified_own = path;
      else
        own.emplace_back(split(controllers, ','), path);
    }
  }
  auto own_path = [&](const std::string& controller) -> std::optional<std::string> {
    for (const auto& [controllers, path] : own)
      if (contains(controllers, controller)) return path;
    return std::nullopt;
  };

  if (auto text = read_file("/proc/self/mountinfo")) {
    for (const auto& line : split(*text, '\n')) {
      const auto dash = line.find(" - ");
      if (dash == std::string::npos) continue;
      const auto fields = split(line.substr(0, dash), ' ');
      const auto tail = split(line.substr(dash + 3), ' ');
      if (fields.size() < 5 || tail.size() < 3) continue;
      const std::string& mount_root = fields[3];
      const std::string& mount_point = fields[4];
      if (tail[0] == "cgroup2" && layout.v2_mount.empty()) {
        layout.v2_mount = mount_point;
        layout.v2_parent = join_cgroup(mount_point, mount_root, unified_own);
      } else if (tail[0] == "cgroup") {
        const auto options = split(tail[2], ',');
        for (const char* controller : {"memory", "pids", "cpuacct"}) {
          if (!contains(options, controller)) continue;
          const auto path = own_path(controller);
          if (!path) continue;
          const std::string dir = join_cgroup(mount_point, mount_root, *path);
          if (std::strcmp(controller, "memory") == 0) layout.v1_memory = dir;
          if (std::strcmp(controller, "pids") == 0) layout.v1_pids = dir;
          if (std::strcmp(controller, "cpuacct") == 0) layout.v1_cpuacct = dir;
        }
      }
    }
  }
  if (!layout.v2_parent.empty()) {
    if (auto controllers = read_file(layout.v2_parent + "/cgroup.controllers")) {
      std::istringstream in(*controllers);
      std::string name;
      while (in >> name) layout.v2_controllers.push_back(name);
    }
  }
  // Prefer v2 when it holds the memory controller (unified hosts); else v1 (hybrid hosts).
  if (contains(layout.v2_controllers, "memory"))
    layout.version = "v2";
  else if (!layout.v1_memory.empty() || !layout.v1_pids.empty())
    layout.version = "v1";
  else
    layout.version = "none";
  return layout;
}

RunCgroups::RunCgroups(std::uint64_t memory_bytes, int max_processes,
                       std::vector<std::string>& warnings) {
  const CgroupLayout layout = detect_cgroups();
  const std::string name = unique_name();
  if (layout.version == "v2") {
    v2_ = true;
    // A v2 parent with processes of its own cannot enable controllers for children (no
    // internal processes rule); try our own cgroup, then its ancestors up to the mount.
    std::string parent = layout.v2_parent;
    std::string chosen;
    for (;;) {
      bool enabled = true;
      for (const char* controller : {"memory", "pids"}) {
        auto active = read_file(parent + "/cgroup.subtree_control").value_or("");
        if (active.find(controller) != std::string::npos) continue;
        if (!write_file(parent + "/cgroup.subtree_control", std::string("+") + controller))
          enabled = false;
      }
      if (enabled) {
        chosen = parent;
        break;
      }
      if (parent == layout.v2_mount || parent.size() <= layout.v2_mount.size()) break;
      parent = parent.substr(0, parent.rfind('/'));
    }
    if (chosen.empty()) {
      warnings.push_back("cgroup v2: cannot enable memory/pids controllers under " +
                         layout.v2_parent + " (" + errno_text() +
                         "): memory and process count are not capped");
      return;
    }
    const std::string path = chosen + "/" + name;
    if (::mkdir(path.c_str(), 0755) != 0) {
      warnings.push_back("cgroup v2: cannot create " + path + " (" + errno_text() +
                         "): memory and process count are not capped");
      return;
    }
    memory_ = CgroupDir(path);
    memory_ok_ = memory_.write("memory.max", std::to_string(memory_bytes));
    if (!memory_ok_) warnings.push_back("cgroup v2: cannot set memory.max: memory not capped");
    memory_.write("memory.swap.max", "0");  // absent without swap accounting; harmless
    pids_ok_ = memory_.write("pids.max", std::to_string(max_processes));
    if (!pids_ok_) warnings.push_back("cgroup v2: cannot set pids.max: process count not capped");
    return;
  }

  auto make_v1 = [&](const std::string& parent, const char* controller) -> CgroupDir {
    if (parent.empty()) {
      warnings.push_back(std::string("cgroup v1: no ") + controller + " hierarchy mounted");
      return CgroupDir();
    }
    const std::string path = parent + "/" + name;
    if (::mkdir(path.c_str(), 0755) != 0) {
      warnings.push_back(std::string("cgroup v1: cannot create ") + path + " (" + errno_text() +
                         ")");
      return CgroupDir();
    }
    return CgroupDir(path);
  };
  memory_ = make_v1(layout.v1_memory, "memory");
  pids_ = make_v1(layout.v1_pids, "pids");
  cpu_ = make_v1(layout.v1_cpuacct, "cpuacct");
  if (memory_) {
    memory_ok_ = memory_.write("memory.limit_in_bytes", std::to_string(memory_bytes));
    // Without this, v1 would let the tree swap past the cap; absent when swap accounting is off.
    memory_.write("memory.memsw.limit_in_bytes", std::to_string(memory_bytes));
    if (!memory_ok_) warnings.push_back("cgroup v1: cannot set memory.limit_in_bytes");
  }
  if (!memory_ok_) warnings.push_back("memory is not capped (no writable memory cgroup)");
  if (pids_) {
    pids_ok_ = pids_.write("pids.max", std::to_string(max_processes));
    if (!pids_ok_) warnings.push_back("cgroup v1: cannot set pids.max");
  }
}

void RunCgroups::attach(pid_t pid, std::vector<std::string>& warnings) {
  const std::string text = std::to_string(pid);
  for (CgroupDir* dir : {&memory_, &pids_, &cpu_}) {
    if (!*dir) continue;
    if (!dir->write("cgroup.procs", text)) {
      warnings.push_back("cannot move the sandbox into " + dir->path() + " (" + errno_text() + ")");
      if (dir == &memory_) {
        memory_ok_ = false;
        if (v2_) pids_ok_ = false;  // one directory holds both controllers on v2
      }
      if (dir == &pids_) pids_ok_ = false;
    }
  }
}

std::optional<std::uint64_t> RunCgroups::cpu_ns() const {
  if (v2_) {
    if (!memory_) return std::nullopt;
    auto usec = keyed_value(memory_.read("cpu.stat"), "usage_usec");
    if (!usec) return std::nullopt;
    return *usec * 1000;
  }
  if (!cpu_) return std::nullopt;
  return number(cpu_.read("cpuacct.usage"));
}

std::optional<std::uint64_t> RunCgroups::peak_memory() const {
  if (!memory_ok_) return std::nullopt;
  if (v2_) return number(memory_.read("memory.peak"));  // kernel >= 5.19
  return number(memory_.read("memory.max_usage_in_bytes"));
}

bool RunCgroups::oom_killed() const {
  if (!memory_ok_) return false;
  if (v2_) return keyed_value(memory_.read("memory.events"), "oom_kill").value_or(0) > 0;
  return keyed_value(memory_.read("memory.oom_control"), "oom_kill").value_or(0) > 0;
}

bool RunCgroups::memory_limit_reached() const {
  if (!memory_ok_) return false;
  if (v2_) return keyed_value(memory_.read("memory.events"), "max").value_or(0) > 0;
  return number(memory_.read("memory.failcnt")).value_or(0) > 0;
}

bool RunCgroups::process_limit_reached() const {
  if (!pids_ok_) return false;
  const CgroupDir& dir = v2_ ? memory_ : pids_;
  return keyed_value(dir.read("pids.events"), "max").value_or(0) > 0;
}

}  // namespace kj::sandbox::detail
