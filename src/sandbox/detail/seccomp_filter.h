// The seccomp policy of the sandbox, compiled to a BPF program in the supervisor so that the
// child only has to install it (no allocation after clone).
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

namespace kj::sandbox::detail {

// Default allow; kills the process on syscalls that reach outside the namespaces (ptrace,
// mount, bpf, kexec, namespace creation, ...). Returns false and sets `error` on failure.
bool build_seccomp_filter(std::vector<sock_filter>& program, std::string& error);

}  // namespace kj::sandbox::detail
