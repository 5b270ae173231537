#include "sandbox/detail/child.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kj::sandbox::detail {
namespace {

// Mirrors the kernel's struct mount_attr; declared here so older glibc headers need not have it.
struct MountAttr {
  std::uint64_t attr_set;
  std::uint64_t attr_clr;
  std::uint64_t propagation;
  std::uint64_t userns_fd;
};

constexpr int kSetupFailedExit = 120;

// The control fd of the current process (moved in the target before exec).
int g_ctl = -1;
bool g_has_openat2 = false;
bool g_has_mount_setattr = false;

const char* err() { return strerrordesc_np(errno); }

void vsend(char type, const char* fmt, va_list args) {
  char buffer[2048];
  const int n = std::vsnprintf(buffer + 3, sizeof(buffer) - 3, fmt, args);
  std::size_t len = n < 0 ? 0 : static_cast<std::size_t>(n);
  if (len > sizeof(buffer) - 4) len = sizeof(buffer) - 4;
  buffer[0] = type;
  buffer[1] = static_cast<char>((len >> 8) & 0xff);
  buffer[2] = static_cast<char>(len & 0xff);
  // One write below PIPE_BUF is atomic, so init's and the target's messages never interleave.
  [[maybe_unused]] const ssize_t written = ::write(g_ctl, buffer, len + 3);
}

__attribute__((format(printf, 2, 3))) void send(char type, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsend(type, fmt, args);
  va_end(args);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsend(msg::error, fmt, args);
  va_end(args);
  ::_exit(kSetupFailedExit);
}

void close_range_fallback(unsigned from, unsigned to) {
  if (::syscall(SYS_close_range, from, to, 0) == 0) return;
  rlimit limit{};
  unsigned max = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    max = static_cast<unsigned>(limit.rlim_cur);
  for (unsigned fd = from; fd <= to && fd < max; ++fd) ::close(static_cast<int>(fd));
}

// Closes every fd except those in keep[0..count) (negative entries ignored).
void close_all_except(int* keep, int count) {
  for (int i = 1; i < count; ++i)  // insertion sort: at most a handful of fds
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      const int tmp = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = tmp;
    }
  unsigned from = 0;
  for (int i = 0; i < count; ++i) {
    if (keep[i] < 0) continue;
    const auto fd = static_cast<unsigned>(keep[i]);
    if (fd > from) close_range_fallback(from, fd - 1);
    if (fd + 1 > from) from = fd + 1;
  }
  close_range_fallback(from, ~0U);
}

const char* fd_path(int fd, char* buffer, std::size_t size) {
  std::snprintf(buffer, size, "/proc/self/fd/%d", fd);
  return buffer;
}

// Opens `rel` (relative to the new root) resolving symlinks as if rootfd were "/", so a link
// such as /lib64 -> /usr/lib64 recreated in the new root can never lead onto the host.
int open_in_root(int rootfd, const char* rel, int flags) {
  if (rel[0] == '\0') return ::fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
  if (g_has_openat2) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, rootfd, rel, &how, sizeof(how)));
  }
  // Without openat2: walk component by component and refuse symlinks.
  char path[PATH_MAX];
  std::snprintf(path, sizeof(path), "%s", rel);
  int dir = ::fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
  char* component = path;
  while (dir >= 0) {
    char* slash = std::strchr(component, '/');
    if (slash != nullptr) *slash = '\0';
    const bool last = slash == nullptr || slash[1] == '\0';
    const int next =
        ::openat(dir, component, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
    ::close(dir);
    if (next < 0) return -1;
    struct stat st {};
    if (::fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
      ::close(next);
      errno = ELOOP;
      return -1;
    }
    if (last) return next;
    dir = next;
    component = slash + 1;
  }
  return -1;
}

// Creates the mount point `target` (absolute, inside the new root) and returns an O_PATH fd.
int make_mount_point(int rootfd, const char* target, bool directory) {
  char path[PATH_MAX];
  while (*target == '/') ++target;
  std::snprintf(path, sizeof(path), "%s", target);
  std::size_t len = std::strlen(path);
  while (len > 0 && path[len - 1] == '/') path[--len] = '\0';
  int parent = ::fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
  std::size_t start = 0;
  while (parent >= 0) {
    std::size_t end = start;
    while (end < len && path[end] != '/') ++end;
    const bool last = end >= len;
    const char saved = path[end];
    path[end] = '\0';
    int fd = open_in_root(rootfd, path, O_PATH | (last && !directory ? 0 : O_DIRECTORY));
    if (fd < 0 && errno == ENOENT) {
      const char* name = path + start;
      if (last && !directory) {
        const int created =
            ::openat(parent, name, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (created >= 0) ::close(created);
      } else {
        ::mkdirat(parent, name, 0755);
      }
      fd = open_in_root(rootfd, path, O_PATH | (last && !directory ? 0 : O_DIRECTORY));
    }
    path[end] = saved;
    ::close(parent);
    if (fd < 0 || last) return fd;
    parent = fd;
    start = end + 1;
  }
  return -1;
}

bool exists_in_root(int rootfd, const char* target) {
  while (*target == '/') ++target;
  const int fd = open_in_root(rootfd, target, O_PATH | O_NOFOLLOW);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// Splits "/a/b/c" into a created parent dir fd for "/a/b" and the name "c".
int parent_of(int rootfd, const char* target, char* name, std::size_t name_size) {
  char parent[PATH_MAX];
  std::snprintf(parent, sizeof(parent), "%s", target);
  char* slash = std::strrchr(parent, '/');
  if (slash == nullptr) return -1;
  std::snprintf(name, name_size, "%s", slash + 1);
  *slash = '\0';
  return make_mount_point(rootfd, parent, true);
}

void bind(int rootfd, const MountStep& step) {
  const bool device = step.kind == MountKind::device;
  const int point = make_mount_point(rootfd, step.target.c_str(), step.directory);
  if (point < 0) fail("mount point %s for %s: %s", step.target.c_str(), step.source.c_str(), err());
  char buffer[64];
  // Recursive only when every submount can be made read-only too (mount_setattr).
  const unsigned long rec = g_has_mount_setattr ? MS_REC : 0;
  if (::mount(step.source.c_str(), fd_path(point, buffer, sizeof(buffer)), nullptr, MS_BIND | rec,
              nullptr) != 0)
    fail("bind %s -> %s: %s", step.source.c_str(), step.target.c_str(), err());
  ::close(point);
  const char* rel = step.target.c_str();
  while (*rel == '/') ++rel;
  const int top = open_in_root(rootfd, rel, O_PATH);  // the new mount, not the covered dir
  if (top < 0) fail("reopen %s: %s", step.target.c_str(), err());
  if (g_has_mount_setattr) {
    MountAttr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | (device ? MOUNT_ATTR_NOEXEC : MOUNT_ATTR_NODEV) |
                    (step.writable ? 0 : MOUNT_ATTR_RDONLY);
    if (::syscall(SYS_mount_setattr, top, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) !=
        0)
      fail("make %s read-only: %s", step.target.c_str(), err());
  } else {
    // Flags locked by the source mount must be repeated or the remount fails in a user ns.
    struct statvfs vfs {};
    unsigned long keep = 0;
    if (::statvfs(step.source.c_str(), &vfs) == 0) {
      if (vfs.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
      if (vfs.f_flag & ST_NODEV) keep |= MS_NODEV;
      if (vfs.f_flag & ST_NOATIME) keep |= MS_NOATIME;
      if (vfs.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
      if (vfs.f_flag & ST_RELATIME) keep |= MS_RELATIME;
    }
    const unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | keep |
                                (device ? MS_NOEXEC : MS_NODEV) | (step.writable ? 0 : MS_RDONLY);
    if (::mount(nullptr, fd_path(top, buffer, sizeof(buffer)), nullptr, flags, nullptr) != 0)
      fail("make %s read-only: %s", step.target.c_str(), err());
  }
  ::close(top);
}

void run_step(int rootfd, const MountStep& step) {
  char buffer[64];
  if (step.skip_if_exists && exists_in_root(rootfd, step.target.c_str())) return;
  switch (step.kind) {
    case MountKind::tmpfs: {
      const int point = make_mount_point(rootfd, step.target.c_str(), true);
      if (point < 0) fail("mount point %s: %s", step.target.c_str(), err());
      if (::mount("tmpfs", fd_path(point, buffer, sizeof(buffer)), "tmpfs", step.flags,
                  step.options.c_str()) != 0)
        fail("tmpfs on %s (%s): %s", step.target.c_str(), step.options.c_str(), err());
      ::close(point);
      return;
    }
    case MountKind::proc: {
      const int point = make_mount_point(rootfd, step.target.c_str(), true);
      if (point < 0) fail("mount point %s: %s", step.target.c_str(), err());
      if (::mount("proc", fd_path(point, buffer, sizeof(buffer)), "proc",
                  MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
        send(msg::warning, "cannot mount a fresh /proc (%s): the sandbox has no /proc", err());
      ::close(point);
      return;
    }
    case MountKind::bind:
    case MountKind::device:
      bind(rootfd, step);
      return;
    case MountKind::symlink: {
      char name[NAME_MAX + 1];
      const int parent = parent_of(rootfd, step.target.c_str(), name, sizeof(name));
      if (parent < 0) fail("directory for %s: %s", step.target.c_str(), err());
      if (::symlinkat(step.source.c_str(), parent, name) != 0 && errno != EEXIST)
        fail("symlink %s -> %s: %s", step.target.c_str(), step.source.c_str(), err());
      ::close(parent);
      return;
    }
    case MountKind::readonly: {
      const char* rel = step.target.c_str();
      while (*rel == '/') ++rel;
      const int top = open_in_root(rootfd, rel, O_PATH | O_DIRECTORY);
      if (top < 0) fail("open %s: %s", step.target.c_str(), err());
      if (::mount(nullptr, fd_path(top, buffer, sizeof(buffer)), nullptr,
                  MS_REMOUNT | MS_BIND | MS_RDONLY | step.flags, nullptr) != 0)
        fail("make %s read-only: %s", step.target.c_str(), err());
      ::close(top);
      return;
    }
    case MountKind::file: {
      char name[NAME_MAX + 1];
      const int parent = parent_of(rootfd, step.target.c_str(), name, sizeof(name));
      if (parent < 0) fail("directory for %s: %s", step.target.c_str(), err());
      const int fd =
          ::openat(parent, name, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 || ::write(fd, step.source.data(), step.source.size()) !=
                        static_cast<ssize_t>(step.source.size()))
        fail("write %s: %s", step.target.c_str(), err());
      ::close(fd);
      ::close(parent);
      return;
    }
  }
}

// Builds the new root on a tmpfs and makes it the process's "/"; host mounts are detached.
void build_root(const ChildPlan& plan) {
  g_has_openat2 = ::syscall(SYS_openat2, -1, "", nullptr, 0) != 0 && errno != ENOSYS;
  g_has_mount_setattr = ::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0) != 0 && errno != ENOSYS;
  if (!g_has_mount_setattr)
    send(msg::warning,
         "mount_setattr unavailable: binds are not recursive (submounts of binds are hidden)");
  // Nothing mounted from here on may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    fail("make / private: %s", err());
  if (::mount("tmpfs", plan.root_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
              "mode=0755,size=16m") != 0)
    fail("tmpfs for the new root on %s: %s", plan.root_dir.c_str(), err());
  const int rootfd = ::open(plan.root_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) fail("open new root: %s", err());
  for (const MountStep& step : plan.steps) run_step(rootfd, step);

  if (::fchdir(rootfd) != 0) fail("chdir new root: %s", err());
  if (::syscall(SYS_pivot_root, ".", ".") == 0) {
    if (::umount2(".", MNT_DETACH) != 0) fail("detach the old root: %s", err());
  } else {
    const int saved = errno;
    if (::chroot(".") != 0) fail("pivot_root (%s) and chroot: %s", strerrordesc_np(saved), err());
    send(msg::warning, "pivot_root failed (%s): fell back to chroot, host mounts stay attached",
         strerrordesc_np(saved));
  }
  if (::chdir("/") != 0) fail("chdir /: %s", err());
  ::close(rootfd);
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr) != 0)
    fail("make the new root read-only: %s", err());
}

void drop_bounding_set() {
  for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
}

void drop_all_capabilities() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) != 0) fail("drop capabilities: %s", err());
}

char read_go(const ChildPlan& plan) {
  char byte = 0;
  for (;;) {
    const ssize_t n = ::read(plan.go_read, &byte, 1);
    if (n == 1) return byte;
    if (n < 0 && errno == EINTR) continue;
    ::_exit(kSetupFailedExit);  // the supervisor is gone
  }
}

// Raw syscalls: glibc's setresuid would signal the supervisor's other threads, which were
// copied into this process as bookkeeping only, and wait for them forever.
bool set_ids(unsigned uid, unsigned gid) {
  return ::syscall(SYS_setresgid, gid, gid, gid) == 0 &&
         ::syscall(SYS_setresuid, uid, uid, uid) == 0;
}

void switch_user(const ChildPlan& plan) {
  const gid_t gid = plan.inside_id;
  const uid_t uid = plan.inside_id;
  if (!plan.real_root) {
    // Already in the user namespace made by clone(); the supervisor wrote the maps.
    drop_bounding_set();
    if (!set_ids(uid, gid)) fail("setresuid %u in the user namespace: %s", uid, err());
    drop_all_capabilities();
    return;
  }
  // Supplementary groups of the host root must go while we still may change them.
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) fail("setgroups: %s", err());
  if (::unshare(CLONE_NEWUSER) == 0) {
    send(msg::need_idmap, "%d", 0);
    if (read_go(plan) != kGo) fail("the supervisor could not write the user namespace id maps");
    drop_bounding_set();
    if (!set_ids(uid, gid)) fail("setresuid %u in the user namespace: %s", uid, err());
    // A mount namespace owned by the new user namespace locks every inherited mount.
    if (::unshare(CLONE_NEWNS) != 0)
      send(msg::warning, "cannot lock mounts with a nested mount namespace: %s", err());
    drop_all_capabilities();
    return;
  }
  send(msg::warning, "user namespace unavailable (%s): running as uid %u on the host", err(),
       plan.fallback_id);
  drop_bounding_set();
  if (!set_ids(plan.fallback_id, plan.fallback_id))
    fail("setresuid %u: %s", plan.fallback_id, err());
  drop_all_capabilities();
}

void set_limit(int resource, rlim_t soft, rlim_t hard, const char* name) {
  const rlimit limit{soft, hard};
  if (::setrlimit(resource, &limit) == 0) return;
  rlimit current{};
  ::getrlimit(resource, &current);
  const rlimit clamped{soft < current.rlim_max ? soft : current.rlim_max, current.rlim_max};
  if (::setrlimit(resource, &clamped) != 0) fail("setrlimit %s: %s", name, err());
  send(msg::warning, "%s limit clamped to the hard limit %llu", name,
       static_cast<unsigned long long>(current.rlim_max));
}

void set_limits(const ChildPlan& plan) {
  set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
  set_limit(RLIMIT_FSIZE, plan.file_size, plan.file_size, "RLIMIT_FSIZE");
  set_limit(RLIMIT_NOFILE, plan.open_files, plan.open_files, "RLIMIT_NOFILE");
  // SIGXCPU at the soft limit, SIGKILL one second later if it is caught.
  set_limit(RLIMIT_CPU, plan.cpu_seconds, plan.cpu_seconds + 1, "RLIMIT_CPU");
  if (plan.processes > 0) set_limit(RLIMIT_NPROC, plan.processes, plan.processes, "RLIMIT_NPROC");
}

// Hides the supervisor's command line and environment, which init's memory still holds.
void scrub_own_cmdline() {
  char stat[1024];
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = ::read(fd, stat, sizeof(stat) - 1);
  ::close(fd);
  if (n <= 0) return;
  stat[n] = '\0';
  char* p = std::strrchr(stat, ')');
  if (p == nullptr) return;
  // Fields after ")": state is field 3; arg_start..env_end are fields 48..51.
  unsigned long long values[4] = {};
  int field = 2;
  for (char* token = p + 1; *token != '\0' && field < 51;) {
    while (*token == ' ') ++token;
    ++field;
    if (field >= 48) values[field - 48] = std::strtoull(token, nullptr, 10);
    while (*token != ' ' && *token != '\0') ++token;
  }
  for (int range = 0; range < 2; ++range) {
    const auto start = values[range * 2];
    const auto end = values[range * 2 + 1];
    if (start == 0 || end <= start) continue;
    std::memset(reinterpret_cast<void*>(start), 0, end - start);
  }
  if (values[1] > values[0] + 8) std::memcpy(reinterpret_cast<void*>(values[0]), "kj-init", 8);
  ::prctl(PR_SET_NAME, "kj-init", 0, 0, 0);
}

int move_above(int fd, int floor) {
  if (fd < 0) return -1;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0) fail("dup fd: %s", err());
  return moved;
}

[[noreturn]] void target_main(const ChildPlan& plan) {
  // Dispositions ignored by the supervisor (e.g. SIGPIPE) would survive execve otherwise.
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &action, nullptr);
  ::setsid();

  int floor = (plan.result_fd > 16 ? plan.result_fd : 16) + 1;
  if (plan.passed_fd_target >= floor) floor = plan.passed_fd_target + 1;
  const int in = move_above(plan.stdin_read, floor);
  const int out = move_above(plan.stdout_write, floor);
  const int errfd = move_above(plan.stderr_write, floor);
  const int result = move_above(plan.result_write, floor);
  const int passed = move_above(plan.passed_fd, floor);
  g_ctl = move_above(g_ctl, floor);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(errfd, 2) < 0)
    fail("dup2 stdio: %s", err());
  if (plan.result_fd >= 0 && ::dup2(result, plan.result_fd) < 0)
    fail("dup2 result fd %d: %s", plan.result_fd, err());
  if (passed >= 0 && ::dup2(passed, plan.passed_fd_target) < 0)
    fail("dup2 passed fd %d: %s", plan.passed_fd_target, err());
  int keep[] = {0, 1, 2, plan.result_fd, passed >= 0 ? plan.passed_fd_target : -1, g_ctl};
  close_all_except(keep, 6);

  if (::chdir(plan.workdir.c_str()) != 0) fail("chdir %s: %s", plan.workdir.c_str(), err());
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS: %s", err());
  sock_fprog program{static_cast<unsigned short>(plan.seccomp.size()),
                     const_cast<sock_filter*>(plan.seccomp.data())};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0)
    send(msg::warning, "seccomp filter not installed (%s): syscalls are not filtered", err());
  send(msg::exec_start, "%d", 0);
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  fail("execve %s: %s", plan.argv[0], err());
}

}  // namespace

int sandbox_init_main(void* arg) {
  const ChildPlan& plan = *static_cast<const ChildPlan*>(arg);
  g_ctl = plan.ctl_write;
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int keep[] = {plan.ctl_write,    plan.go_read,      plan.stdin_read, plan.stdout_write,
                plan.stderr_write, plan.result_write, plan.netns_fd,   plan.passed_fd};
  close_all_except(keep, 8);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (read_go(plan) != kGo) ::_exit(kSetupFailedExit);  // cgroups attached (or given up)
  if (plan.netns_fd >= 0) {
    // Before any user namespace of ours exists: only the host's root may enter it.
    if (::setns(plan.netns_fd, CLONE_NEWNET) != 0)
      fail("join the shared network namespace: %s", err());
    ::close(plan.netns_fd);
  }

  scrub_own_cmdline();
  build_root(plan);
  if (plan.new_uts && ::sethostname(plan.hostname.data(), plan.hostname.size()) != 0)
    send(msg::warning, "sethostname: %s", err());
  set_limits(plan);
  switch_user(plan);
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);  // credential changes cleared it

  // A raw fork: glibc's fork would run atfork handlers on locks copied from other threads.
  const long target = ::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (target < 0) fail("fork the target: %s", err());
  if (target == 0) target_main(plan);

  for (int fd : {plan.go_read, plan.stdin_read, plan.stdout_write, plan.stderr_write,
                 plan.result_write, plan.passed_fd})
    if (fd >= 0) ::close(fd);
  int target_status = 0;
  int any_sigsys = 0;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) any_sigsys = 1;
    if (pid == target) {
      target_status = status;
      break;
    }
  }
  send(msg::status, "%d %d", target_status, any_sigsys);
  // Exiting kills whatever the target left behind: the kernel empties the pid namespace.
  ::_exit(WIFEXITED(target_status)
              ? WEXITSTATUS(target_status)
              : 128 + (WIFSIGNALED(target_status) ? WTERMSIG(target_status) : 0));
}

int network_holder_main(void* arg) {
  const int* fds = static_cast<const int*>(arg);
  const int ready = fds[0];
  const int release = fds[1];
  int keep[] = {ready, release};
  close_all_except(keep, 2);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  char status = '0';
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock >= 0) {
    ifreq request{};
    std::memcpy(request.ifr_name, "lo", 3);
    if (::ioctl(sock, SIOCGIFFLAGS, &request) == 0) {
      request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
      if (::ioctl(sock, SIOCSIFFLAGS, &request) == 0) status = '1';
    }
    ::close(sock);
  }
  [[maybe_unused]] ssize_t n = ::write(ready, &status, 1);
  ::close(ready);
  char byte = 0;
  while (::read(release, &byte, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

}  // namespace kj::sandbox::detail
