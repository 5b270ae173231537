// The GPU lease (judge.h): one run per GPU at a time across every kj process on the host.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

#include "judge/judge.h"

namespace kj::judge {
namespace fs = std::filesystem;

namespace {

fs::path lease_path(std::string_view device) {
  const char* dir = std::getenv("KJ_LOCK_DIR");
  return fs::path(dir != nullptr && *dir != '\0' ? dir : "/tmp") /
         ("kerneljudge-gpu" + std::string(device.substr(5)) + ".lock");
}

[[noreturn]] void fail(const fs::path& path, const char* what) {
  throw std::runtime_error(std::string("cannot ") + what + " the GPU lease file " + path.string() +
                           ": " + std::strerror(errno));
}

// Read-only is enough for flock, so a file another user created (mode 0644) serves every user.
// Opened without O_CREAT first: with fs.protected_regular, a world-writable sticky directory such
// as /tmp refuses O_CREAT on an existing file that another user owns.
int open_lease_file(const fs::path& path) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno != ENOENT) fail(path, "open");
    fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) fail(path, "create");
  }
  fail(path, "open");
}

}  // namespace

GpuLease::GpuLease(std::string_view device) {
  if (!device.starts_with("cuda:")) return;
  const fs::path path = lease_path(device);
  fd_ = open_lease_file(path);
  const auto start = std::chrono::steady_clock::now();
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd_);
    errno = error;
    fail(path, "lock");
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  waited_s_ =
      static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()) /
      1000;
}

GpuLease::~GpuLease() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the open file drops the lock
}

GpuLease::GpuLease(GpuLease&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), waited_s_(other.waited_s_) {}

}  // namespace kj::judge
