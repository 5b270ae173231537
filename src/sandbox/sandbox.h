// Starting one process isolated from the host: namespaces, a whitelisted read-only filesystem
// view, a size-capped scratch tmpfs, seccomp, rlimits, cgroup caps, wall/CPU limits with a
// whole-tree kill, capped stdout/stderr and a result pipe. Knows nothing about kernels.
// The outcome contract is documented in docs/sandbox.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kj::sandbox {

// A host path made visible inside the sandbox at `target` (same path when empty).
struct Bind {
  std::string source;
  std::string target;
  bool writable = false;
  bool optional = false;  // skip silently when the source does not exist
};

struct Limits {
  std::chrono::milliseconds wall{std::chrono::seconds(60)};
  std::chrono::seconds cpu{std::chrono::seconds(600)};  // RLIMIT_CPU, whole-process CPU time
  std::uint64_t memory_bytes = 8ULL << 30;              // cgroup memory cap (host RAM)
  int max_processes = 512;                              // cgroup pids.max, else RLIMIT_NPROC
  std::uint64_t file_size_bytes = 1ULL << 30;           // RLIMIT_FSIZE
  int open_files = 4096;                                // RLIMIT_NOFILE
  std::uint64_t scratch_bytes = 2ULL << 30;             // size of the /tmp tmpfs
  std::size_t output_bytes = 1 << 20;                   // per stream (stdout, stderr)
  std::size_t result_bytes = 64 << 20;                  // bytes accepted from the result pipe
};

// The stdin of a run started before its input exists (a warm start): the process is set up and
// runs, with no wall clock counting, until send(); the wall limit counts from then. abandon()
// before send() ends the run (its outcome then says so). One send per feed; thread-safe.
class StdinFeed {
 public:
  StdinFeed();
  ~StdinFeed();
  StdinFeed(const StdinFeed&) = delete;
  StdinFeed& operator=(const StdinFeed&) = delete;

  void send(std::string data, std::chrono::milliseconds wall);
  void abandon();

  // For the run: an fd that polls readable once send() or abandon() was called.
  int wait_fd() const { return event_fd_; }
  struct Delivery {
    bool abandoned = false;
    std::string data;
    std::chrono::milliseconds wall{0};
  };
  std::optional<Delivery> take();

 private:
  void signal();
  int event_fd_ = -1;
  std::mutex mutex_;
  std::optional<Delivery> delivery_;
  bool taken_ = false;
};

// Ends a run from another thread: the tree is killed and Outcome::cancelled is set. Used to end
// the other ranks of a multi-rank run once one of them failed. Thread-safe; cancel() is sticky.
class Cancel {
 public:
  Cancel();
  ~Cancel();
  Cancel(const Cancel&) = delete;
  Cancel& operator=(const Cancel&) = delete;
  void cancel();
  bool cancelled() const;
  int wait_fd() const { return event_fd_; }  // polls readable once cancel() was called

 private:
  int event_fd_ = -1;
};

// A network namespace with only the loopback interface, up, shared by the runs of one group
// (the ranks of a multi-rank evaluation talk to each other over 127.0.0.1 and nothing else).
// Owns a holder process that keeps the namespace alive; killed and reaped on destruction.
// Joining it needs a supervisor running as root (setns into a namespace the run's own user
// namespace does not own is refused); runs that try otherwise fail with a setup error.
class SharedNetwork {
 public:
  SharedNetwork();  // throws std::runtime_error when the namespace cannot be made
  ~SharedNetwork();
  SharedNetwork(const SharedNetwork&) = delete;
  SharedNetwork& operator=(const SharedNetwork&) = delete;
  int fd() const { return ns_fd_; }  // an open /proc/<holder>/ns/net

 private:
  void close_and_reap();
  int holder_ = -1;
  int release_fd_ = -1;  // the holder exits when this pipe closes
  int ns_fd_ = -1;
};

// Which seccomp filter the target gets (docs/sandbox.md, "Seccomp policy"): `target` for
// everything that runs submitted code; `zygote` for a Zygote, which must give each run it forks
// namespaces and mounts of its own (its runs install the target policy on top of it).
enum class SeccompPolicy { target, zygote };

struct Spec {
  std::vector<std::string> argv;     // argv[0] is an absolute path inside the sandbox
  std::vector<std::string> env;      // complete environment, "KEY=VALUE"; nothing is inherited
  std::vector<Bind> binds;           // whitelist; everything else of the host is invisible
  std::vector<std::string> devices;  // device nodes to expose, e.g. /dev/nvidia0, /dev/nvidiactl
  std::string workdir = "/tmp";      // cwd inside; /tmp is the scratch tmpfs
  std::string stdin_data;            // written to the child's stdin, then closed
  std::shared_ptr<StdinFeed> stdin_feed;  // instead of stdin_data: the input arrives later
  Limits limits;
  bool network = false;  // false: empty network namespace (loopback down)
  // Join this network namespace (SharedNetwork::fd) instead of a new empty one; -1: none.
  int network_namespace_fd = -1;
  std::shared_ptr<Cancel> cancel;  // cancel->cancel() ends the run (Outcome::cancelled)
  int result_fd = 3;               // child fd number of the write end of the result pipe; -1: none
  std::string hostname = "kj-sandbox";
  SeccompPolicy seccomp = SeccompPolicy::target;
  // An open fd of the caller handed to the target as fd `passed_fd_target` (a Zygote's control
  // socket); -1: none. Must differ from 0, 1, 2 and result_fd.
  int passed_fd = -1;
  int passed_fd_target = -1;
};

enum class LimitHit { none, wall_time, cpu_time, memory, output, processes, file_size };

struct Outcome {
  bool started = false;                 // false: the sandbox could not be set up (see setup_error)
  std::string setup_error;              // infrastructure failure: never the submission's fault
  std::optional<int> exit_code;         // set when the main process exited normally
  std::optional<int> signal;            // set when it was killed by a signal
  bool seccomp_violation = false;       // killed by SIGSYS from the seccomp filter
  LimitHit limit = LimitHit::none;      // the first limit that ended or capped the run
  std::chrono::nanoseconds wall{0};     // from exec (or from the feed's send on a warm start)
  bool abandoned = false;               // a warm start whose feed was abandoned before any input
  bool cancelled = false;               // Spec::cancel ended the run (the tree was killed)
  std::chrono::nanoseconds cpu{0};      // user+sys of the whole tree
  std::uint64_t peak_memory_bytes = 0;  // cgroup peak when available, else max RSS of children
  // The memory cap was reached at least once (cgroup), whatever ended the run: a run killed by
  // the wall clock may have spent its time reclaiming memory at the cap.
  bool memory_cap_reached = false;
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::string result_data;  // everything read from the result pipe (capped at result_bytes)
  bool result_truncated = false;
  std::vector<std::string> warnings;  // isolation that degraded (e.g. no writable cgroup)
};

// Runs one process per the spec and waits for the whole tree to end. Thread-safe; each call is
// independent. Never throws for the child's behaviour; setup failures come back in the outcome.
Outcome run(const Spec& spec);

// Files shown in a forked run as a fresh read-only tmpfs at `target` (an existing directory of
// the zygote's view, which it covers): each (name, content), names without '/'.
struct FileSet {
  std::string target;
  std::vector<std::pair<std::string, std::string>> files;
};

// One run forked from a Zygote. The program, environment, binds and devices are the zygote's;
// what differs per run is here. The outcome contract is sandbox::run's.
struct ForkSpec {
  std::vector<FileSet> files;
  std::string workdir = "/tmp";
  std::string stdin_data;  // written to the run's stdin, then closed
  Limits limits;
  std::shared_ptr<Cancel> cancel;
  int result_fd = 3;  // -1: none
  std::string hostname = "kj-sandbox";
};

// A process started in a sandbox (sandbox::run, SeccompPolicy::zygote) that has done the costly
// part of a start (a Python interpreter importing torch) once, and then forks one run per
// request: each run gets new user, mount, pid, network, ipc and uts namespaces, fresh tmpfs
// scratch (/tmp, /dev/shm) and /proc, its own stdio and result pipes, rlimits, no capabilities,
// no_new_privs, the target seccomp policy and a cgroup of its own (docs/sandbox.md, "Zygote").
// The zygote's program speaks the protocol described there (harness/kj_harness/zygote.py).
// Thread-safe; runs are served one at a time.
class Zygote {
 public:
  // Starts `spec` (argv, env, binds, devices; its limits are the zygote's own, its wall limit
  // its lifetime). The control socket is given to it as fd `kControlFd`.
  explicit Zygote(Spec spec);
  ~Zygote();  // the zygote's sandbox is killed and reaped
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  static constexpr int kControlFd = 3;

  // Waits until the zygote said it is ready to fork, up to `timeout`. False once it failed (it
  // exited, said it cannot fork, or broke the protocol): failure() says why, and it stays so.
  bool wait_ready(std::chrono::milliseconds timeout);
  bool failed() const;
  std::string failure() const;
  // Host pid of the zygote sandbox's init (killing it ends the zygote); -1 before it started.
  int pid() const;

  // One run. A run the zygote could not start comes back with started = false and a
  // setup_error beginning "zygote: "; the zygote then counts as failed when it is at fault.
  Outcome run(const ForkSpec& spec);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// Which isolation features this host offers (for `kj doctor`-style reports and test skips).
struct HostSupport {
  bool user_namespaces = false;
  bool cgroup_memory = false;
  bool cgroup_pids = false;
  std::string cgroup_version;  // "v1", "v2" or "none"
  std::vector<std::string> notes;
};
HostSupport probe_host();

std::string to_string(LimitHit limit);

}  // namespace kj::sandbox
