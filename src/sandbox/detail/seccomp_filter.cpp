#include "sandbox/detail/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sandbox/detail/fd.h"

namespace kj::sandbox::detail {
namespace {

// Syscalls that have no business in a kernel submission and act beyond the sandbox's namespaces.
constexpr const char* kKilled[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "setns",
    "unshare",
    "open_by_handle_at",
    "userfaultfd",
    "iopl",
    "ioperm",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "syslog",
    // The new mount API would otherwise bypass the mount/umount2 rules.
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "pidfd_getfd",
};

// Refused softly: callers handle ENOSYS (glibc falls back from clone3 to clone, whose flags
// can be filtered; io_uring can issue syscalls that seccomp never sees).
constexpr const char* kEnosys[] = {"clone3", "io_uring_setup", "io_uring_enter",
                                   "io_uring_register"};

constexpr unsigned long kNamespaceFlags[] = {CLONE_NEWNS,    CLONE_NEWUSER, CLONE_NEWPID,
                                             CLONE_NEWNET,   CLONE_NEWIPC,  CLONE_NEWUTS,
                                             CLONE_NEWCGROUP};

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

// What a zygote may do that its runs may not: each run gets namespaces and mounts of its own.
constexpr const char* kZygoteAllowed[] = {"mount", "umount2", "unshare"};

bool allowed_for(SeccompPolicy policy, const char* name) {
  if (policy != SeccompPolicy::zygote) return false;
  for (const char* allowed : kZygoteAllowed)
    if (std::strcmp(allowed, name) == 0) return true;
  return false;
}

}  // namespace

bool build_seccomp_filter(std::vector<sock_filter>& program, std::string& error,
                          SeccompPolicy policy) {
  // Released on every path; the filter context is a libseccomp heap object.
  std::unique_ptr<void, ContextDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) {
    error = "seccomp_init failed";
    return false;
  }
  // Foreign ABIs (i386 int 0x80) are killed outright; x32 gets the same rules as x86-64.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
#if defined(__x86_64__)
  seccomp_arch_add(ctx.get(), SCMP_ARCH_X32);
#endif
  auto add = [&](uint32_t action, const char* name, unsigned count,
                 const scmp_arg_cmp* cmp) -> bool {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return true;  // not on this architecture
    const int rc = seccomp_rule_add_array(ctx.get(), action, nr, count, cmp);
    if (rc != 0 && rc != -EEXIST) {
      error = std::string("seccomp rule for ") + name + ": " + std::strerror(-rc);
      return false;
    }
    return true;
  };
  for (const char* name : kKilled)
    if (!allowed_for(policy, name) && !add(SCMP_ACT_KILL_PROCESS, name, 0, nullptr)) return false;
  for (const char* name : kEnosys)
    if (!add(SCMP_ACT_ERRNO(ENOSYS), name, 0, nullptr)) return false;
  // Comparisons written out as {argument, op, a, b}, what SCMP_A0(op, a, b) expands to: the macros
  // are C compound literals, which clang refuses in C++ under -Wpedantic (the fuzz build).
  for (unsigned long flag : kNamespaceFlags) {
    const scmp_arg_cmp cmp{0, SCMP_CMP_MASKED_EQ, flag, flag};
    if (policy != SeccompPolicy::zygote && !add(SCMP_ACT_KILL_PROCESS, "clone", 1, &cmp))
      return false;
  }
  // Setting another process's limits (pid != 0, new limit given): the harness runs as the same
  // user, and shrinking its limits would make the trusted side fail. Reading them is harmless.
  const scmp_arg_cmp other_process[] = {{0, SCMP_CMP_NE, 0, 0}, {2, SCMP_CMP_NE, 0, 0}};
  if (!add(SCMP_ACT_KILL_PROCESS, "prlimit64", 2, other_process)) return false;

  UniqueFd memfd(::memfd_create("kj-seccomp", MFD_CLOEXEC));
  if (!memfd) {
    error = std::string("memfd_create: ") + std::strerror(errno);
    return false;
  }
  if (const int rc = seccomp_export_bpf(ctx.get(), memfd.get()); rc != 0) {
    error = std::string("seccomp_export_bpf: ") + std::strerror(-rc);
    return false;
  }
  struct stat st {};
  if (::fstat(memfd.get(), &st) != 0 || st.st_size <= 0 ||
      st.st_size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    error = "seccomp_export_bpf produced no program";
    return false;
  }
  program.resize(static_cast<std::size_t>(st.st_size) / sizeof(sock_filter));
  if (::pread(memfd.get(), program.data(), static_cast<std::size_t>(st.st_size), 0) != st.st_size) {
    error = std::string("reading the seccomp program: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace kj::sandbox::detail
