// The seccomp policy of the sandbox, compiled to a BPF program in the supervisor so that the
// child only has to install it (no allocation after clone).
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace kj::sandbox::detail {

// Default allow; kills the process on syscalls that reach outside the namespaces (ptrace,
// mount, bpf, kexec, namespace creation, ...). The zygote policy leaves out what a zygote needs
// to give each forked run namespaces and mounts of its own (unshare, mount, umount2, clone with
// namespace flags); its runs install the target policy on top. Returns false and sets `error`
// on failure.
bool build_seccomp_filter(std::vector<sock_filter>& program, std::string& error,
                          SeccompPolicy policy);

}  // namespace kj::sandbox::detail
