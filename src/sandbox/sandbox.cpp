#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <future>
#include <set>
#include <stdexcept>
#include <utility>

#include "sandbox/detail/cgroup.h"
#include "sandbox/detail/child.h"
#include "sandbox/detail/fd.h"
#include "sandbox/detail/seccomp_filter.h"

namespace kj::sandbox {
namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

constexpr auto kSetupTimeout = std::chrono::seconds(30);
constexpr auto kCpuPollInterval = std::chrono::milliseconds(50);
constexpr unsigned kInsideId = 1000;
constexpr unsigned kOutsideId = 65534;  // "nobody": owns nothing the sandbox could reach
constexpr std::size_t kInitStackBytes = 1 << 20;

constexpr const char* kDefaultDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                           "/dev/urandom"};
// What dynamically linked programs, gcc (via alternatives) and Python read from /etc.
constexpr const char* kEtcWhitelist[] = {"ld.so.cache",   "ld.so.conf", "ld.so.conf.d",
                                         "nsswitch.conf", "hosts",      "localtime",
                                         "alternatives",  "os-release"};

std::string errno_text(int error = errno) { return std::strerror(error); }

// Blocks SIGPIPE in this thread while the run writes stdin, so a child that closes its stdin
// cannot kill the judge; a SIGPIPE left pending is consumed before the mask is restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SigpipeBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    const timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_;
};

// The namespace init of a run; killed and reaped on destruction so no run leaks a process tree.
// Either our own clone (waited for) or, for a run forked by a Zygote, a process we did not create:
// watched and killed through a pidfd, its end known from the pidfd only (no exit status, no
// rusage: such runs report from their init's status message and their cgroups).
class InitProcess {
 public:
  explicit InitProcess(pid_t pid) : pid_(pid) {}
  InitProcess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)), foreign_(true) {}
  ~InitProcess() {
    if (pid_ <= 0 || reaped_) return;
    send_kill();
    if (foreign_) {
      pollfd fd{pidfd_.get(), POLLIN, 0};
      while (::poll(&fd, 1, 5000) < 0 && errno == EINTR) {
      }
      return;
    }
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  InitProcess(const InitProcess&) = delete;
  InitProcess& operator=(const InitProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }
  void kill() {
    if (!reaped_ && !killed_) send_kill();
    killed_ = true;
  }
  bool killed() const { return killed_; }
  // Non-blocking reap; true once the init (and so the whole namespace) is gone.
  bool try_reap() {
    if (reaped_) return true;
    if (foreign_) {
      pollfd fd{pidfd_.get(), POLLIN, 0};
      if (::poll(&fd, 1, 0) == 1) {
        reaped_ = true;
        status_ = SIGKILL;  // a wait status "killed by SIGKILL": it ended without reporting
      }
      return reaped_;
    }
    const pid_t rc = ::wait4(pid_, &status_, WNOHANG, &usage_);
    if (rc == pid_) reaped_ = true;
    return reaped_;
  }
  int status() const { return status_; }
  const rusage& usage() const { return usage_; }

 private:
  void send_kill() {
    if (foreign_)
      ::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
    else
      ::kill(pid_, SIGKILL);
  }

  pid_t pid_;
  UniqueFd pidfd_;
  bool foreign_ = false;
  bool reaped_ = false;
  bool killed_ = false;
  int status_ = 0;
  rusage usage_{};
};

// Lexically normalizes an absolute path; empty when relative or when it contains "..".
std::string normalize(const std::string& path) {
  if (path.empty() || path[0] != '/') return {};
  std::string out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    const std::string part = path.substr(i, j - i);
    i = j;
    if (part.empty() || part == ".") continue;
    if (part == "..") return {};
    out += "/" + part;
  }
  return out.empty() ? "/" : out;
}

std::size_t depth(const std::string& path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

bool is_under(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

std::optional<std::string> read_link(const std::string& path) {
  std::vector<char> buffer(PATH_MAX + 1);
  const ssize_t n = ::readlink(path.c_str(), buffer.data(), buffer.size() - 1);
  if (n < 0) return std::nullopt;
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

std::optional<std::string> real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

// Turns Spec::binds, devices and the fixed mounts into the ordered steps the child executes.
bool plan_mounts(const Spec& spec, ChildPlan& plan, Outcome& out) {
  auto& steps = plan.steps;
  const auto& limits = spec.limits;
  steps.push_back(
      {MountKind::tmpfs, "/dev", "", "mode=0755,size=1m", MS_NOSUID | MS_NODEV | MS_NOEXEC});

  std::vector<std::string> devices(std::begin(kDefaultDevices), std::end(kDefaultDevices));
  for (const auto& device : spec.devices)
    if (std::find(devices.begin(), devices.end(), device) == devices.end())
      devices.push_back(device);
  for (const auto& device : devices) {
    const std::string path = normalize(device);
    struct stat st {};
    if (path.empty() || !is_under(path, "/dev") || path == "/dev") {
      out.setup_error = "device path must be under /dev: " + device;
      return false;
    }
    if (::stat(path.c_str(), &st) != 0) {
      out.warnings.push_back("device " + path + " does not exist on the host: not exposed");
      continue;
    }
    MountStep step{MountKind::device, path, path};
    step.directory = S_ISDIR(st.st_mode);
    steps.push_back(step);
  }
  for (const auto& [name, target] : {std::pair<const char*, const char*>{"fd", "/proc/self/fd"},
                                     {"stdin", "/proc/self/fd/0"},
                                     {"stdout", "/proc/self/fd/1"},
                                     {"stderr", "/proc/self/fd/2"}})
    steps.push_back({MountKind::symlink, std::string("/dev/") + name, target});
  steps.push_back(
      {MountKind::tmpfs, "/dev/shm", "", "mode=1777,size=64m", MS_NOSUID | MS_NODEV | MS_NOEXEC});
  // In a user namespace the /dev tmpfs belongs to the sandbox user: freeze it once populated.
  steps.push_back({MountKind::readonly, "/dev", "", "", MS_NOSUID | MS_NODEV | MS_NOEXEC});
  steps.push_back({MountKind::proc, "/proc", "", "", 0});
  const std::uint64_t scratch = std::max<std::uint64_t>(limits.scratch_bytes, 4096);
  steps.push_back({MountKind::tmpfs, "/tmp", "", "mode=1777,size=" + std::to_string(scratch),
                   MS_NOSUID | MS_NODEV});

  // User binds, parents before children so nested mount points land on the right mount.
  std::vector<MountStep> binds;
  std::vector<std::string> identity;  // host dirs visible at their own path
  for (const Bind& bind : spec.binds) {
    const std::string source = normalize(bind.source);
    const std::string target = bind.target.empty() ? source : normalize(bind.target);
    if (source.empty() || target.empty() || target == "/") {
      out.setup_error = "bind paths must be absolute, without '..', not '/': " + bind.source +
                        " -> " + bind.target;
      return false;
    }
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0) {
      if (bind.optional) continue;
      out.setup_error = "bind source " + source + ": " + errno_text();
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      const auto resolved = real_path(source);
      if (!resolved || ::stat(resolved->c_str(), &st) != 0) {
        if (bind.optional) continue;
        out.setup_error = "bind source " + source + " is a dangling symlink";
        return false;
      }
      if (target == source) {
        // /bin -> usr/bin: the same link in the new root, and its destination bound as itself.
        binds.push_back({MountKind::symlink, target, read_link(source).value_or(*resolved)});
        MountStep real{MountKind::bind, *resolved, *resolved};
        real.writable = bind.writable;
        real.directory = S_ISDIR(st.st_mode);
        binds.push_back(real);
        if (real.directory) identity.push_back(*resolved);
        continue;
      }
      MountStep step{MountKind::bind, target, *resolved};
      step.writable = bind.writable;
      step.directory = S_ISDIR(st.st_mode);
      binds.push_back(step);
      continue;
    }
    MountStep step{MountKind::bind, target, source};
    step.writable = bind.writable;
    step.directory = S_ISDIR(st.st_mode);
    if (step.directory && source == target && !bind.writable) identity.push_back(source);
    binds.push_back(step);
  }
  // Drop a resolved symlink destination that an identity bind already shows (e.g. /usr/bin
  // under /usr), so the common /bin, /lib on Debian cost no extra mounts.
  std::vector<MountStep> kept;
  for (const auto& step : binds) {
    bool redundant = false;
    if (step.kind == MountKind::bind && step.source == step.target && !step.writable)
      for (const auto& dir : identity)
        if (dir != step.target && is_under(step.target, dir)) redundant = true;
    bool duplicate = false;
    for (const auto& other : kept)
      if (other.target == step.target && other.kind == step.kind && other.source == step.source)
        duplicate = true;
    if (!redundant && !duplicate) kept.push_back(step);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const MountStep& a, const MountStep& b) {
    return depth(a.target) < depth(b.target);
  });
  bool etc_bound = false;
  for (const auto& step : kept) {
    if (step.target == "/etc") etc_bound = true;
    steps.push_back(step);
  }

  if (!etc_bound) {
    for (const char* name : kEtcWhitelist) {
      const std::string path = std::string("/etc/") + name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) continue;
      MountStep step;
      if (S_ISLNK(st.st_mode)) {
        step = {MountKind::symlink, path, read_link(path).value_or("")};
      } else {
        step = {MountKind::bind, path, path};
        step.directory = S_ISDIR(st.st_mode);
      }
      step.skip_if_exists = true;
      steps.push_back(step);
    }
    MountStep passwd{MountKind::file, "/etc/passwd",
                     "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                     "kj:x:1000:1000:kj:/tmp:/bin/sh\n"
                     "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"};
    passwd.skip_if_exists = true;
    steps.push_back(passwd);
    MountStep group{MountKind::file, "/etc/group", "root:x:0:\nkj:x:1000:\nnogroup:x:65534:\n"};
    group.skip_if_exists = true;
    steps.push_back(group);
  }
  return true;
}

bool write_text(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Maps one inside id to `outer_uid`/`outer_gid` for the user namespace of `pid`.
bool write_id_maps(pid_t pid, unsigned outer_uid, unsigned outer_gid, std::string& error) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/";
  if (!write_text(dir + "setgroups", "deny") && errno != ENOENT) {
    error = "setgroups deny: " + errno_text();
    return false;
  }
  if (!write_text(dir + "uid_map",
                  std::to_string(kInsideId) + " " + std::to_string(outer_uid) + " 1\n")) {
    error = "uid_map: " + errno_text();
    return false;
  }
  if (!write_text(dir + "gid_map",
                  std::to_string(kInsideId) + " " + std::to_string(outer_gid) + " 1\n")) {
    error = "gid_map: " + errno_text();
    return false;
  }
  return true;
}

// One captured pipe (stdout, stderr, result) with its cap.
struct Capture {
  UniqueFd fd;
  std::string* data = nullptr;
  bool* truncated = nullptr;
  std::size_t cap = 0;
  bool output_limit = false;  // exceeding the cap ends the run (stdout, stderr)
  bool eof() const { return !fd; }
};

// Reads what is available; returns true when the cap was exceeded for the first time.
bool drain(Capture& capture) {
  char buffer[65536];
  bool overflow = false;
  while (capture.fd) {
    const ssize_t n = ::read(capture.fd.get(), buffer, sizeof(buffer));
    if (n > 0) {
      const std::size_t size = static_cast<std::size_t>(n);
      const std::size_t room =
          capture.data->size() < capture.cap ? capture.cap - capture.data->size() : 0;
      capture.data->append(buffer, std::min(room, size));
      if (size > room && !*capture.truncated) {
        *capture.truncated = true;
        overflow = true;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    capture.fd.reset();  // EOF or error
  }
  return overflow;
}

}  // namespace

std::string to_string(LimitHit limit) {
  switch (limit) {
    case LimitHit::none:
      return "none";
    case LimitHit::wall_time:
      return "wall_time";
    case LimitHit::cpu_time:
      return "cpu_time";
    case LimitHit::memory:
      return "memory";
    case LimitHit::output:
      return "output";
    case LimitHit::processes:
      return "processes";
    case LimitHit::file_size:
      return "file_size";
  }
  return "unknown";
}

StdinFeed::StdinFeed() : event_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StdinFeed::~StdinFeed() {
  if (event_fd_ >= 0) ::close(event_fd_);
}

void StdinFeed::signal() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(event_fd_, &one, sizeof(one));
}

void StdinFeed::send(std::string data, std::chrono::milliseconds wall) {
  {
    std::lock_guard lock(mutex_);
    if (delivery_) return;
    delivery_ = Delivery{false, std::move(data), wall};
  }
  signal();
}

void StdinFeed::abandon() {
  {
    std::lock_guard lock(mutex_);
    if (delivery_) return;
    delivery_ = Delivery{true, {}, {}};
  }
  signal();
}

Cancel::Cancel() : event_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Cancel::~Cancel() {
  if (event_fd_ >= 0) ::close(event_fd_);
}

void Cancel::cancel() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(event_fd_, &one, sizeof(one));
}

bool Cancel::cancelled() const {
  pollfd fd{event_fd_, POLLIN, 0};
  return ::poll(&fd, 1, 0) == 1;
}

SharedNetwork::SharedNetwork() {
  Pipe ready, release;
  if (!make_pipe(ready) || !make_pipe(release))
    throw std::runtime_error("shared network: pipe: " + errno_text());
  int fds[2] = {ready.write.get(), release.read.get()};
  StackMapping stack(kInitStackBytes);
  if (!stack.ok()) throw std::runtime_error("shared network: mmap: " + errno_text());
  const pid_t pid = ::clone(network_holder_main, stack.top(), CLONE_NEWNET | SIGCHLD, fds);
  if (pid < 0)
    throw std::runtime_error("shared network: clone with a new network namespace: " + errno_text() +
                             " (a multi-rank run needs a supervisor running as root)");
  holder_ = pid;
  release_fd_ = release.write.release();
  ready.write.reset();
  release.read.reset();
  char status = 0;
  ssize_t n = 0;
  do {
    n = ::read(ready.read.get(), &status, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1 || status != '1') {
    close_and_reap();
    throw std::runtime_error("shared network: the loopback interface could not be brought up");
  }
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
  ns_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd_ < 0) {
    const std::string error = errno_text();
    close_and_reap();
    throw std::runtime_error("shared network: open " + path + ": " + error);
  }
}

SharedNetwork::~SharedNetwork() { close_and_reap(); }

void SharedNetwork::close_and_reap() {
  if (ns_fd_ >= 0) ::close(std::exchange(ns_fd_, -1));
  if (release_fd_ >= 0) ::close(std::exchange(release_fd_, -1));
  if (holder_ > 0) {
    int status = 0;
    while (::waitpid(holder_, &status, 0) < 0 && errno == EINTR) {
    }
    holder_ = -1;
  }
}

std::optional<StdinFeed::Delivery> StdinFeed::take() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(event_fd_, &count, sizeof(count));
  std::lock_guard lock(mutex_);
  if (!delivery_ || taken_) return std::nullopt;
  taken_ = true;
  return std::move(delivery_);
}

namespace {

// A spec the child cannot run: the reason, else empty.
std::string spec_error(const Spec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/')
    return "argv[0] must be an absolute path inside the sandbox";
  if (spec.result_fd >= 0 && spec.result_fd <= 2)
    return "result_fd must be -1 or >= 3, not " + std::to_string(spec.result_fd);
  if (spec.passed_fd >= 0 &&
      (spec.passed_fd_target <= 2 || spec.passed_fd_target == spec.result_fd))
    return "passed_fd_target must be >= 3 and not the result fd, not " +
           std::to_string(spec.passed_fd_target);
  return {};
}

// What the child does, from the spec: ids, rlimits, command, environment, mounts, seccomp.
bool plan_child(const Spec& spec, bool real_root, ChildPlan& plan, Outcome& out) {
  const auto& limits = spec.limits;
  plan.real_root = real_root;
  plan.inside_id = kInsideId;
  plan.fallback_id = kOutsideId;
  plan.workdir = spec.workdir.empty() ? "/tmp" : spec.workdir;
  plan.hostname = spec.hostname;
  plan.cpu_seconds = static_cast<rlim_t>(std::max<long long>(limits.cpu.count(), 1));
  plan.file_size = static_cast<rlim_t>(limits.file_size_bytes);
  plan.open_files = static_cast<rlim_t>(std::max(limits.open_files, 16));
  plan.result_fd = spec.result_fd;
  plan.netns_fd = spec.network_namespace_fd;
  plan.passed_fd = spec.passed_fd;
  plan.passed_fd_target = spec.passed_fd >= 0 ? spec.passed_fd_target : -1;
  for (const auto& arg : spec.argv) plan.argv.push_back(const_cast<char*>(arg.c_str()));
  plan.argv.push_back(nullptr);
  for (const auto& var : spec.env) plan.envp.push_back(const_cast<char*>(var.c_str()));
  plan.envp.push_back(nullptr);
  if (!plan_mounts(spec, plan, out)) return false;

  std::string seccomp_error;
  if (!build_seccomp_filter(plan.seccomp, seccomp_error, spec.seccomp)) {
    plan.seccomp.clear();
    out.warnings.push_back("seccomp filter unavailable (" + seccomp_error +
                           "): syscalls are not filtered");
  }
  return true;
}

// The pipes between the supervisor and the child: control messages, the go byte, stdin,
// stdout, stderr and the result fd (when the spec asks for one).
struct RunPipes {
  Pipe ctl, go, in, stdout_pipe, stderr_pipe, result;

  bool open(const Spec& spec, ChildPlan& plan) {
    if (!make_pipe(ctl) || !make_pipe(go) || !make_pipe(in) || !make_pipe(stdout_pipe) ||
        !make_pipe(stderr_pipe) || (spec.result_fd >= 0 && !make_pipe(result))) {
      return false;
    }
    plan.ctl_write = ctl.write.get();
    plan.go_read = go.read.get();
    plan.stdin_read = in.read.get();
    plan.stdout_write = stdout_pipe.write.get();
    plan.stderr_write = stderr_pipe.write.get();
    plan.result_write = result.write.get();
    return true;
  }
  // Once the child holds them: the supervisor keeps only its own ends.
  void close_child_ends() {
    ctl.write.reset();
    go.read.reset();
    in.read.reset();
    stdout_pipe.write.reset();
    stderr_pipe.write.reset();
    result.write.reset();
  }
};

// Clones the sandbox init into new namespaces. Mount and pid namespaces are required; the
// others degrade with a warning. -1 with out.setup_error set when no clone worked.
pid_t clone_init(const Spec& spec, bool real_root, ChildPlan& plan, StackMapping& stack,
                 Outcome& out) {
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
  if (!spec.network && spec.network_namespace_fd < 0) flags |= CLONE_NEWNET;
  if (!real_root) flags |= CLONE_NEWUSER;
  plan.new_uts = true;
  pid_t pid = ::clone(sandbox_init_main, stack.top(), flags, &plan);
  if (pid >= 0) return pid;
  const int first_error = errno;
  flags &= ~(CLONE_NEWIPC | CLONE_NEWUTS);
  plan.new_uts = false;
  pid = ::clone(sandbox_init_main, stack.top(), flags, &plan);
  if (pid >= 0)
    out.warnings.push_back("ipc/uts namespaces unavailable (" + errno_text(first_error) +
                           "): System V IPC and hostname are shared with the host");
  if (pid < 0 && (flags & CLONE_NEWNET) != 0) {
    flags &= ~CLONE_NEWNET;
    pid = ::clone(sandbox_init_main, stack.top(), flags, &plan);
    if (pid >= 0)
      out.warnings.push_back("network namespace unavailable (" + errno_text(first_error) +
                             "): the sandbox shares the host network");
  }
  if (pid < 0) {
    out.setup_error = std::string("clone with new ") + (real_root ? "" : "user, ") +
                      "mount and pid namespaces: " + errno_text(first_error) +
                      (real_root ? "" : " (not root and no user namespaces: cannot isolate)");
  }
  return pid;
}

// How the target ended, as the supervision saw it.
struct TargetEnd {
  bool started = false;      // the target was exec'd
  bool have_status = false;  // the init reported the target's wait status
  int status = 0;
  bool any_sigsys = false;  // some process of the tree was killed by SIGSYS
  Clock::time_point clone_start;
  Clock::time_point start, end;  // the wall clock's span, once started
};

// Watches one run from the go byte until the tree is gone: control messages, output captures,
// stdin (given or fed later), cancellation, and the setup, wall and CPU limits.
class Supervision {
 public:
  Supervision(const Spec& spec, RunPipes& pipes, InitProcess& init, RunCgroups& cgroups,
              Clock::time_point clone_start, Outcome& out)
      : spec_(spec),
        limits_(spec.limits),
        out_(out),
        init_(init),
        cgroups_(cgroups),
        ctl_(std::move(pipes.ctl.read)),
        go_(std::move(pipes.go.write)),
        stdin_fd_(std::move(pipes.in.write)),
        feed_(spec.stdin_feed.get()),
        setup_deadline_(clone_start + kSetupTimeout),
        next_cpu_check_(clone_start),
        cpu_limit_ns_(
            static_cast<std::uint64_t>(std::chrono::nanoseconds(spec.limits.cpu).count())) {
    end_.clone_start = end_.start = end_.end = clone_start;
    captures_[0] = {std::move(pipes.stdout_pipe.read), &out.stdout_data, &out.stdout_truncated,
                    limits_.output_bytes, true};
    captures_[1] = {std::move(pipes.stderr_pipe.read), &out.stderr_data, &out.stderr_truncated,
                    limits_.output_bytes, true};
    captures_[2] = {std::move(pipes.result.read), &out.result_data, &out.result_truncated,
                    limits_.result_bytes, false};
    for (auto& capture : captures_)
      if (capture.fd) set_nonblocking(capture.fd.get());
    set_nonblocking(ctl_.get());
    set_nonblocking(stdin_fd_.get());
    awaiting_feed_ = feed_ != nullptr && feed_->wait_fd() >= 0;
    stdin_data_ = feed_ != nullptr ? std::string() : spec.stdin_data;
    if (stdin_data_.empty() && !awaiting_feed_) stdin_fd_.reset();
  }

  void send_go(char byte) { [[maybe_unused]] const ssize_t n = ::write(go_.get(), &byte, 1); }

  // Runs until the init is reaped and every pipe closed; the tree is gone when it returns.
  TargetEnd wait() {
    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, init_.pid(), 0)));
    for (;;) {
      if (!init_.reaped()) enforce_limits(Clock::now());
      if (init_.try_reap() && !reaped_at_) {
        reaped_at_ = Clock::now();
        end_.end = *reaped_at_;
      }
      if (tree_gone()) break;
      std::vector<pollfd> fds = poll_set();
      const int rc = ::poll(fds.data(), fds.size(), poll_timeout_ms());
      if (rc < 0 && errno != EINTR) break;
      serve();
    }
    if (!init_.reaped()) {  // poll failed: do not leave the tree behind
      init_.kill();
      while (!init_.try_reap()) ::usleep(1000);
      end_.end = Clock::now();
    }
    return end_;
  }

 private:
  void kill_tree(LimitHit reason) {
    if (out_.limit == LimitHit::none && reason != LimitHit::none) out_.limit = reason;
    init_.kill();
  }

  void enforce_limits(Clock::time_point now) {
    if (end_.started && now >= wall_deadline_) kill_tree(LimitHit::wall_time);
    if (!end_.started && now >= setup_deadline_ && out_.setup_error.empty()) {
      out_.setup_error = "sandbox setup did not finish within 30 s";
      init_.kill();
    }
    if (end_.started && now >= next_cpu_check_) {
      next_cpu_check_ = now + kCpuPollInterval;
      if (auto cpu = cgroups_.cpu_ns(); cpu && *cpu > cpu_limit_ns_) kill_tree(LimitHit::cpu_time);
    }
  }

  // Once init is gone every writer is gone; a brief grace covers concurrent clones that hold
  // copies of our pipes for an instant.
  bool tree_gone() const {
    if (!reaped_at_) return false;
    bool all_closed = !ctl_;
    for (const auto& capture : captures_) all_closed = all_closed && capture.eof();
    return all_closed || Clock::now() - *reaped_at_ > std::chrono::seconds(2);
  }

  std::vector<pollfd> poll_set() const {
    std::vector<pollfd> fds;
    if (ctl_) fds.push_back({ctl_.get(), POLLIN, 0});
    for (const auto& capture : captures_)
      if (capture.fd) fds.push_back({capture.fd.get(), POLLIN, 0});
    if (stdin_fd_ && !awaiting_feed_) fds.push_back({stdin_fd_.get(), POLLOUT, 0});
    if (awaiting_feed_) fds.push_back({feed_->wait_fd(), POLLIN, 0});
    if (spec_.cancel && !out_.cancelled) fds.push_back({spec_.cancel->wait_fd(), POLLIN, 0});
    if (pidfd_ && !init_.reaped()) fds.push_back({pidfd_.get(), POLLIN, 0});
    return fds;
  }

  // Until the next deadline; without a pidfd, short polls notice the init's exit.
  int poll_timeout_ms() const {
    auto wake = Clock::now() + std::chrono::milliseconds(pidfd_ ? 1000 : 10);
    if (!init_.reaped()) {
      wake = std::min(wake, end_.started ? wall_deadline_ : setup_deadline_);
      if (end_.started) wake = std::min(wake, next_cpu_check_);
    } else {
      wake = std::min(wake, Clock::now() + std::chrono::milliseconds(10));
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
                             wake - Clock::now() + std::chrono::microseconds(999))
                             .count();
    return static_cast<int>(std::clamp<long long>(timeout, 0, INT_MAX));
  }

  // Everything that may be ready after a poll.
  void serve() {
    if (ctl_) read_ctl();
    if (spec_.cancel && !out_.cancelled && !init_.reaped() && spec_.cancel->cancelled()) {
      out_.cancelled = true;
      kill_tree(LimitHit::none);
    }
    for (auto& capture : captures_)
      if (drain(capture) && capture.output_limit) kill_tree(LimitHit::output);
    if (awaiting_feed_) take_feed();
    if (stdin_fd_ && !awaiting_feed_ && !out_.abandoned) write_stdin();
  }

  void read_ctl() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(ctl_.get(), buffer, sizeof(buffer));
      if (n > 0) {
        ctl_buffer_.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) ctl_.reset();
      break;
    }
    while (ctl_buffer_.size() >= 3) {
      const std::size_t len = (static_cast<unsigned char>(ctl_buffer_[1]) << 8) |
                              static_cast<unsigned char>(ctl_buffer_[2]);
      if (ctl_buffer_.size() < 3 + len) break;
      const char type = ctl_buffer_[0];
      const std::string text = ctl_buffer_.substr(3, len);
      ctl_buffer_.erase(0, 3 + len);
      handle_message(type, text);
    }
  }

  void handle_message(char type, const std::string& text) {
    switch (type) {
      case msg::warning:
        out_.warnings.push_back(text);
        break;
      case msg::error:
        if (out_.setup_error.empty()) out_.setup_error = "sandbox setup: " + text;
        init_.kill();
        break;
      case msg::need_idmap: {
        std::string error;
        if (write_id_maps(init_.pid(), kOutsideId, kOutsideId, error)) {
          send_go(kGo);
        } else {
          out_.setup_error = "user namespace maps: " + error;
          send_go(kIdmapFailed);
        }
        break;
      }
      case msg::exec_start:
        end_.started = true;
        // A warm start's wall clock starts with its input, not here.
        if (feed_ == nullptr) start_wall_clock(limits_.wall);
        break;
      case msg::status: {
        int sigsys = 0;
        if (std::sscanf(text.c_str(), "%d %d", &end_.status, &sigsys) == 2) {
          end_.have_status = true;
          end_.any_sigsys = sigsys != 0;
        }
        break;
      }
      default:
        break;
    }
  }

  void start_wall_clock(std::chrono::milliseconds wall) {
    end_.start = Clock::now();
    wall_deadline_ = end_.start + wall;
  }

  void take_feed() {
    auto delivery = feed_->take();
    if (!delivery) return;
    awaiting_feed_ = false;
    if (delivery->abandoned) {
      out_.abandoned = true;
      kill_tree(LimitHit::none);  // stdin stays open: EOF must not reach the target first
      return;
    }
    stdin_data_ = std::move(delivery->data);
    start_wall_clock(delivery->wall);
    if (stdin_data_.empty()) stdin_fd_.reset();
  }

  void write_stdin() {
    while (stdin_offset_ < stdin_data_.size()) {
      const ssize_t n = ::write(stdin_fd_.get(), stdin_data_.data() + stdin_offset_,
                                stdin_data_.size() - stdin_offset_);
      if (n > 0) {
        stdin_offset_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      stdin_offset_ = stdin_data_.size();  // EPIPE: the child closed its stdin
    }
    if (stdin_offset_ >= stdin_data_.size()) stdin_fd_.reset();
  }

  const Spec& spec_;
  const Limits& limits_;
  Outcome& out_;
  InitProcess& init_;
  RunCgroups& cgroups_;
  UniqueFd ctl_;
  UniqueFd go_;
  UniqueFd stdin_fd_;
  UniqueFd pidfd_;
  Capture captures_[3];
  StdinFeed* const feed_;
  bool awaiting_feed_ = false;
  std::string stdin_data_;
  std::size_t stdin_offset_ = 0;
  std::string ctl_buffer_;
  TargetEnd end_;
  Clock::time_point wall_deadline_ = Clock::time_point::max();
  const Clock::time_point setup_deadline_;
  Clock::time_point next_cpu_check_;
  const std::uint64_t cpu_limit_ns_;
  std::optional<Clock::time_point> reaped_at_;
};

// The outcome's measurements and limit from how the target ended, the init's rusage and the
// run's cgroups.
void collect_outcome(const TargetEnd& end, const InitProcess& init, RunCgroups& cgroups,
                     const Limits& limits, Outcome& out) {
  out.started = out.setup_error.empty() && end.started;
  if (out.setup_error.empty() && !end.started)
    out.setup_error = "the sandbox init exited before starting the target (status " +
                      std::to_string(init.status()) + ")";
  out.wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
      end.end - (end.started ? end.start : end.clone_start));

  const rusage& usage = init.usage();
  if (auto cpu = cgroups.cpu_ns()) {
    out.cpu = std::chrono::nanoseconds(*cpu);
  } else {
    out.cpu = std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
              std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }
  if (auto peak = cgroups.peak_memory())
    out.peak_memory_bytes = *peak;
  else
    out.peak_memory_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;

  if (end.have_status) {
    if (WIFEXITED(end.status)) out.exit_code = WEXITSTATUS(end.status);
    if (WIFSIGNALED(end.status)) out.signal = WTERMSIG(end.status);
  } else if (WIFSIGNALED(init.status())) {
    out.signal = WTERMSIG(init.status());  // the tree died with its init (our kill or the OOM)
  } else if (WIFEXITED(init.status())) {
    out.exit_code = WEXITSTATUS(init.status());
  }
  out.seccomp_violation = (out.signal && *out.signal == SIGSYS) || end.any_sigsys;
  out.memory_cap_reached = cgroups.memory_limit_reached() || cgroups.oom_killed();

  if (out.limit == LimitHit::none && out.started) {
    const bool killed = out.signal.has_value();
    if (cgroups.oom_killed() ||
        (killed && *out.signal == SIGKILL && cgroups.memory_limit_reached() && !init.killed()))
      out.limit = LimitHit::memory;
    else if (killed &&
             (*out.signal == SIGXCPU ||
              (*out.signal == SIGKILL && out.cpu >= std::chrono::nanoseconds(limits.cpu))))
      out.limit = LimitHit::cpu_time;
    else if (killed && *out.signal == SIGXFSZ)
      out.limit = LimitHit::file_size;
    else if (cgroups.process_limit_reached())
      out.limit = LimitHit::processes;
  }
}

}  // namespace

Outcome run(const Spec& spec) {
  Outcome out;
  out.setup_error = spec_error(spec);
  if (!out.setup_error.empty()) return out;
  const bool real_root = ::geteuid() == 0;
  ChildPlan plan;
  if (!plan_child(spec, real_root, plan, out)) return out;

  const char* tmp_base = std::getenv("TMPDIR");
  TempDir root_dir(tmp_base != nullptr && tmp_base[0] == '/' ? tmp_base : "/tmp", "kj-root-");
  if (root_dir.path().empty()) {
    out.setup_error = "cannot create the mount point of the new root: " + errno_text();
    return out;
  }
  plan.root_dir = root_dir.path();

  RunCgroups cgroups(spec.limits.memory_bytes, spec.limits.max_processes, out.warnings);
  if (!cgroups.caps_processes()) {
    plan.processes = static_cast<rlim_t>(std::max(spec.limits.max_processes, 1));
    out.warnings.push_back(
        "process count capped with RLIMIT_NPROC only (per uid, not per run): no pids cgroup");
  }
  RunPipes pipes;
  if (!pipes.open(spec, plan)) {
    out.setup_error = "pipe: " + errno_text();
    return out;
  }
  StackMapping stack(kInitStackBytes);
  if (!stack.ok()) {
    out.setup_error = "mmap init stack: " + errno_text();
    return out;
  }
  SigpipeBlock sigpipe_block;

  const auto clone_start = Clock::now();
  const pid_t pid = clone_init(spec, real_root, plan, stack, out);
  if (pid < 0) return out;
  InitProcess init(pid);
  pipes.close_child_ends();
  cgroups.attach(pid, out.warnings);
  if (!real_root) {
    std::string error;
    if (!write_id_maps(pid, ::getuid(), ::getgid(), error)) {
      out.setup_error = "user namespace maps: " + error;
      return out;  // InitProcess kills the child
    }
  }
  Supervision supervision(spec, pipes, init, cgroups, clone_start, out);
  supervision.send_go(kGo);
  const TargetEnd end = supervision.wait();
  collect_outcome(end, init, cgroups, spec.limits, out);
  if (!out.warnings.empty())
    spdlog::debug("sandbox run of {} degraded: {}", spec.argv[0], out.warnings.front());
  return out;
}

HostSupport probe_host() {
  HostSupport support;
  // A throwaway child tries the namespace the sandbox needs most.
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid)
    support.user_namespaces = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!support.user_namespaces)
    support.notes.push_back(::geteuid() == 0
                                ? "no user namespaces: sandboxes run as uid 65534 on the host"
                                : "no user namespaces and not root: the sandbox cannot run");

  const CgroupLayout layout = detect_cgroups();
  support.cgroup_version = layout.version;
  auto writable = [](const std::string& parent) {
    if (parent.empty()) return false;
    const std::string probe = parent + "/kj-probe-" + std::to_string(::getpid());
    if (::mkdir(probe.c_str(), 0755) != 0) return false;
    ::rmdir(probe.c_str());
    return true;
  };
  if (layout.version == "v2") {
    const bool can_create = writable(layout.v2_parent);
    auto has = [&](const char* name) {
      return std::find(layout.v2_controllers.begin(), layout.v2_controllers.end(), name) !=
             layout.v2_controllers.end();
    };
    support.cgroup_memory = can_create && has("memory");
    support.cgroup_pids = can_create && has("pids");
  } else if (layout.version == "v1") {
    support.cgroup_memory = writable(layout.v1_memory);
    support.cgroup_pids = writable(layout.v1_pids);
  }
  if (!support.cgroup_memory) support.notes.push_back("memory is not capped: no writable cgroup");
  if (!support.cgroup_pids)
    support.notes.push_back("process count falls back to RLIMIT_NPROC: no writable pids cgroup");
  if (::syscall(SYS_openat2, -1, "", nullptr, 0) != 0 && errno == ENOSYS)
    support.notes.push_back("no openat2: bind targets must not cross symlinks");
  if (::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0) != 0 && errno == ENOSYS)
    support.notes.push_back("no mount_setattr: binds are not recursive");
  if (UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0))); !pidfd)
    support.notes.push_back("no pidfd_open: the supervisor polls for the child's exit");
  return support;
}

// ---- Zygote -------------------------------------------------------------------------------

namespace {

constexpr auto kZygoteLifetime = std::chrono::hours(24 * 365);
constexpr std::size_t kZygoteMaxFds = 8;

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The files of a forked run, written at the head of its stdin for its init: one line with the
// length of a JSON header {"dirs": [{"target": T, "files": [[name, size], ...]}]}, the header,
// then every file's bytes in that order.
std::string file_archive(const std::vector<FileSet>& sets) {
  std::string header = "{\"dirs\": [";
  std::string contents;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    header += (i ? ", " : "") + std::string("{\"target\": ") + json_string(sets[i].target) +
              ", \"files\": [";
    for (std::size_t j = 0; j < sets[i].files.size(); ++j) {
      const auto& [name, content] = sets[i].files[j];
      header += (j ? ", [" : "[") + json_string(name) + ", " + std::to_string(content.size()) + "]";
      contents += content;
    }
    header += "]}";
  }
  header += "]}";
  return std::to_string(header.size()) + "\n" + header + contents;
}

// What the zygote needs to set up one run, besides its fds: the header (JSON) and the target
// seccomp program after a NUL byte.
std::string fork_request(const ForkSpec& spec, const std::vector<sock_filter>& seccomp) {
  const auto& limits = spec.limits;
  std::string request =
      "{\"cpu_seconds\": " + std::to_string(std::max<long long>(limits.cpu.count(), 1)) +
      ", \"file_size\": " + std::to_string(limits.file_size_bytes) +
      ", \"open_files\": " + std::to_string(std::max(limits.open_files, 16)) +
      ", \"scratch_bytes\": " +
      std::to_string(std::max<std::uint64_t>(limits.scratch_bytes, 4096)) +
      ", \"result_fd\": " + std::to_string(spec.result_fd) +
      ", \"workdir\": " + json_string(spec.workdir.empty() ? "/tmp" : spec.workdir) +
      ", \"hostname\": " + json_string(spec.hostname) + "}";
  request += '\0';
  request.append(reinterpret_cast<const char*>(seccomp.data()),
                 seccomp.size() * sizeof(sock_filter));
  return request;
}

bool send_with_fds(int socket, const std::string& data, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kZygoteMaxFds)]{};
  message.msg_control = control;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  ssize_t n = 0;
  do {
    n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(data.size());
}

// One record of a SOCK_SEQPACKET socket, with the sender's pid (host numbering) when it sent
// SCM_CREDENTIALS. Empty text and no pid at EOF; nullopt on an error.
struct Record {
  std::string text;
  std::optional<pid_t> pid;
};
std::optional<Record> receive_record(int socket) {
  char buffer[4096];
  iovec iov{buffer, sizeof(buffer)};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))]{};
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return std::nullopt;
  Record record{std::string(buffer, static_cast<std::size_t>(n)), std::nullopt};
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_CREDENTIALS) {
      ucred credentials{};
      std::memcpy(&credentials, CMSG_DATA(header), sizeof(credentials));
      record.pid = credentials.pid;
    }
  }
  return record;
}

bool make_seqpacket_pair(UniqueFd& ours, UniqueFd& theirs) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return false;
  ours.reset(fds[0]);
  theirs.reset(fds[1]);
  const int on = 1;
  return ::setsockopt(ours.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0;
}

// The last line of a dead zygote's stderr, for the failure message.
std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  const auto newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

}  // namespace

struct Zygote::State {
  Spec spec;
  UniqueFd control;  // our end of the zygote's control socket
  std::shared_ptr<Cancel> cancel = std::make_shared<Cancel>();
  std::future<Outcome> outcome;
  std::vector<sock_filter> seccomp;  // the target policy, installed by every run
  mutable std::mutex mutex;          // one run at a time; guards what follows
  bool ready = false;
  std::string failure;
  pid_t pid = -1;

  void fail(std::string why) {
    if (failure.empty()) failure = std::move(why);
  }
  // The zygote's sandbox ended: why, from its outcome.
  void note_exit() {
    const Outcome ended = outcome.get();
    std::string why = "the zygote exited";
    if (!ended.setup_error.empty()) why += " (" + ended.setup_error + ")";
    if (ended.exit_code) why += " with code " + std::to_string(*ended.exit_code);
    if (ended.signal) why += " by signal " + std::to_string(*ended.signal);
    if (const auto line = last_line(ended.stderr_data); !line.empty()) why += ": " + line;
    fail(why);
  }
  bool exited() const {
    return outcome.valid() &&
           outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  // With the mutex held.
  bool wait_ready(std::chrono::milliseconds timeout);
};

bool Zygote::State::wait_ready(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!ready && failure.empty()) {
    if (exited()) {
      note_exit();
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;  // not ready yet; not a failure
    pollfd fd{control.get(), POLLIN, 0};
    const int rc = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (rc <= 0) continue;
    const auto record = receive_record(control.get());
    if (!record || record->text.empty()) {
      if (outcome.valid()) outcome.wait_for(std::chrono::seconds(5));
      if (exited()) note_exit();
      fail("the zygote closed its control socket");
      break;
    }
    if (record->text.rfind("ready", 0) == 0 && record->pid) {
      pid = *record->pid;
      ready = true;
    } else {
      fail("the zygote cannot fork: " + record->text);
    }
  }
  return ready && failure.empty();
}

Zygote::Zygote(Spec spec) : state_(std::make_unique<State>()) {
  State& state = *state_;
  std::string error;
  if (!build_seccomp_filter(state.seccomp, error, SeccompPolicy::target)) {
    state.fail("no seccomp program for the runs: " + error);
    return;
  }
  UniqueFd theirs;
  if (!make_seqpacket_pair(state.control, theirs)) {
    state.fail("control socket: " + errno_text());
    return;
  }
  spec.seccomp = SeccompPolicy::zygote;
  spec.passed_fd = theirs.get();
  spec.passed_fd_target = kControlFd;
  spec.result_fd = -1;
  spec.stdin_data.clear();
  spec.stdin_feed.reset();
  spec.limits.wall = kZygoteLifetime;
  spec.cancel = state.cancel;
  state.spec = std::move(spec);
  state.outcome = std::async(std::launch::async, [&state, theirs = std::move(theirs)]() mutable {
    Outcome ended = sandbox::run(state.spec);
    theirs.reset();  // our end then reads EOF: the zygote is gone
    return ended;
  });
}

Zygote::~Zygote() {
  if (!state_) return;
  state_->control.reset();  // the zygote ends at EOF; the cancel ends it at once
  state_->cancel->cancel();
  if (state_->outcome.valid()) state_->outcome.wait();
}

bool Zygote::wait_ready(std::chrono::milliseconds timeout) {
  std::lock_guard lock(state_->mutex);
  return state_->wait_ready(timeout);
}

bool Zygote::failed() const {
  std::lock_guard lock(state_->mutex);
  return !state_->failure.empty();
}

std::string Zygote::failure() const {
  std::lock_guard lock(state_->mutex);
  return state_->failure;
}

int Zygote::pid() const {
  std::lock_guard lock(state_->mutex);
  return state_->pid;
}

namespace {

// Waits for the forked run's init to say hello (its host pid) or for the run or the zygote to
// report an error. Sets out.setup_error on failure; `zygote_fault` when the zygote is to blame.
std::optional<pid_t> await_hello(int ctl, int control, Outcome& out, bool& zygote_fault) {
  const auto deadline = Clock::now() + kSetupTimeout;
  zygote_fault = true;
  while (Clock::now() < deadline) {
    pollfd fds[2] = {{ctl, POLLIN, 0}, {control, POLLIN, 0}};
    const int rc = ::poll(fds, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      const auto record = receive_record(ctl);
      if (!record || record->text.size() < 3) {
        out.setup_error = "zygote: the run ended before its setup";
        return std::nullopt;
      }
      const std::string text = record->text.substr(3);
      if (record->text[0] == msg::hello && record->pid) return *record->pid;
      if (record->text[0] == msg::warning) {
        out.warnings.push_back(text);
        continue;
      }
      out.setup_error = "zygote: run setup: " + text;
      return std::nullopt;
    }
    if (fds[1].revents != 0) {
      const auto record = receive_record(control);
      out.setup_error = "zygote: " + (record && !record->text.empty()
                                          ? record->text
                                          : std::string("the zygote closed its control socket"));
      return std::nullopt;
    }
  }
  out.setup_error = "zygote: the run did not start within 30 s";
  return std::nullopt;
}

}  // namespace

Outcome Zygote::run(const ForkSpec& fork) {
  Outcome out;
  State& state = *state_;
  std::lock_guard lock(state.mutex);
  if (state.ready && state.failure.empty() && state.exited()) state.note_exit();
  if (!state.wait_ready(kSetupTimeout)) {
    // Still importing on a loaded host is no failure: this run goes elsewhere, the next may not.
    out.setup_error =
        "zygote: " + (state.failure.empty() ? std::string("not ready within 30 s") : state.failure);
    return out;
  }
  if (fork.result_fd >= 0 && fork.result_fd <= 2) {
    out.setup_error = "result_fd must be -1 or >= 3, not " + std::to_string(fork.result_fd);
    return out;
  }
  RunCgroups cgroups(fork.limits.memory_bytes, fork.limits.max_processes, out.warnings);
  if (!cgroups.caps_memory() || !cgroups.caps_processes() || !cgroups.cpu_ns()) {
    // Without them a forked run would have no cap and no CPU time of its own: not this path.
    state.fail("runs forked from a zygote need a memory, pids and cpu cgroup of their own" +
               (out.warnings.empty() ? std::string() : " (" + out.warnings.front() + ")"));
    out.setup_error = "zygote: " + state.failure;
    return out;
  }
  RunPipes pipes;
  UniqueFd ctl_child;
  if (!make_seqpacket_pair(pipes.ctl.read, ctl_child) || !make_pipe(pipes.go) ||
      !make_pipe(pipes.in) || !make_pipe(pipes.stdout_pipe) || !make_pipe(pipes.stderr_pipe) ||
      (fork.result_fd >= 0 && !make_pipe(pipes.result))) {
    out.setup_error = "pipe: " + errno_text();
    return out;
  }
  std::vector<int> fds = {ctl_child.get(), pipes.go.read.get(), pipes.in.read.get(),
                          pipes.stdout_pipe.write.get(), pipes.stderr_pipe.write.get()};
  if (pipes.result.write) fds.push_back(pipes.result.write.get());
  SigpipeBlock sigpipe_block;
  const auto start = Clock::now();
  if (!send_with_fds(state.control.get(), fork_request(fork, state.seccomp), fds)) {
    state.fail("cannot send it a run: " + errno_text());
    out.setup_error = "zygote: " + state.failure;
    return out;
  }
  ctl_child.reset();
  pipes.close_child_ends();
  bool zygote_fault = false;
  const auto pid = await_hello(pipes.ctl.read.get(), state.control.get(), out, zygote_fault);
  if (!pid) {
    if (zygote_fault) state.fail(out.setup_error.substr(std::strlen("zygote: ")));
    return out;
  }
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
  if (!pidfd) {
    state.fail("pidfd_open of a run: " + errno_text());
    out.setup_error = "zygote: " + state.failure;
    return out;
  }
  InitProcess init(*pid, std::move(pidfd));
  cgroups.attach(*pid, out.warnings);
  if (!cgroups.caps_memory() || !cgroups.caps_processes()) {
    out.setup_error = "zygote: the run could not be moved into its cgroups";
    return out;  // InitProcess kills it
  }
  Spec run_spec;
  run_spec.stdin_data = file_archive(fork.files) + fork.stdin_data;
  run_spec.limits = fork.limits;
  run_spec.cancel = fork.cancel;
  run_spec.result_fd = fork.result_fd;
  Supervision supervision(run_spec, pipes, init, cgroups, start, out);
  supervision.send_go(kGo);
  const TargetEnd end = supervision.wait();
  collect_outcome(end, init, cgroups, fork.limits, out);
  if (!out.started) {
    // Only trusted code runs before the target starts: the zygote's path is at fault.
    if (const auto line = last_line(out.stderr_data); !line.empty())
      out.setup_error += " (stderr: " + line + ")";
    state.fail(out.setup_error);
    out.setup_error = "zygote: " + out.setup_error;
  }
  return out;
}

}  // namespace kj::sandbox
