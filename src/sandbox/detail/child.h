// The code that runs on the sandbox side of clone(): the namespace init (pid 1) that builds the
// filesystem view, drops privileges and reaps, and the target it forks and execs. Everything is
// prepared by the supervisor in a ChildPlan so the child only makes system calls (no allocation:
// the supervisor may be multithreaded and a lock may have been held at clone time).
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kj::sandbox::detail {

// readonly: remount an earlier mount (not its submounts) read-only once it is populated.
enum class MountKind { tmpfs, proc, bind, device, symlink, file, readonly };

struct MountStep {
  MountStep() = default;
  MountStep(MountKind kind_, std::string target_, std::string source_ = {},
            std::string options_ = {}, unsigned long flags_ = 0)
      : kind(kind_),
        target(std::move(target_)),
        source(std::move(source_)),
        options(std::move(options_)),
        flags(flags_) {}

  MountKind kind = MountKind::bind;
  std::string target;           // absolute path inside the sandbox
  std::string source;           // host path (bind, device), link text (symlink), content (file)
  std::string options;          // tmpfs mount data
  unsigned long flags = 0;      // tmpfs mount flags
  bool writable = false;        // bind: skip the read-only remount
  bool directory = true;        // bind: the mount point is a directory (else an empty file)
  bool skip_if_exists = false;  // the caller's binds win over the generated /etc entries
};

struct ChildPlan {
  std::string root_dir;  // host directory the new root tmpfs is mounted on
  std::vector<MountStep> steps;
  std::vector<char*> argv;  // null-terminated, pointing into the Spec
  std::vector<char*> envp;
  std::string workdir;
  std::string hostname;
  bool real_root = false;  // build mounts first, then enter a user namespace
  bool new_uts = true;
  unsigned inside_id = 1000;     // uid/gid inside the user namespace
  unsigned fallback_id = 65534;  // host uid/gid when no user namespace can be made
  rlim_t cpu_seconds = 0;
  rlim_t file_size = 0;
  rlim_t open_files = 0;
  rlim_t processes = 0;  // RLIMIT_NPROC; 0 = leave (a pids cgroup caps the count)
  std::vector<sock_filter> seccomp;
  int result_fd = -1;  // fd number in the target
  int netns_fd = -1;   // a network namespace to join (setns) instead of a new one
  int passed_fd = -1;  // an fd of the supervisor given to the target as passed_fd_target
  int passed_fd_target = -1;
  // Child ends of the pipes (numbers in the supervisor; the child inherits them across clone).
  int ctl_write = -1, go_read = -1, stdin_read = -1, stdout_write = -1, stderr_write = -1,
      result_write = -1;
};

// Message types on the control pipe (child -> supervisor): [type][len hi][len lo][payload].
namespace msg {
constexpr char warning = 'W';     // an isolation step degraded
constexpr char error = 'E';       // setup failed at the named step; the run is void
constexpr char need_idmap = 'U';  // in a fresh user namespace: write uid_map/gid_map, then go
constexpr char exec_start = 'X';  // the target is about to execve: the wall clock starts
constexpr char status = 'S';      // "<wait status> <any sigsys>" of the target, from init
constexpr char hello = 'H';       // a zygote's run init, with SCM_CREDENTIALS: its host pid
}  // namespace msg

// Bytes the supervisor writes on the go pipe.
constexpr char kGo = '1';
constexpr char kIdmapFailed = '0';

// Entry point for clone(); `arg` is a ChildPlan. Never returns into supervisor code.
int sandbox_init_main(void* arg);

// Entry point for the SharedNetwork holder's clone(): brings loopback up in its new network
// namespace, writes one byte on `ready`, then waits for `release` to close. `arg` is an int[2].
int network_holder_main(void* arg);

}  // namespace kj::sandbox::detail
