// Owning wrappers for the OS resources of one run: file descriptors, pipes, temp dirs, stacks.
#pragma once

#include <string>
#include <utility>

namespace kj::sandbox::detail {

// Owns one file descriptor; closing it twice or leaking it into the next run are both bugs.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Both ends of a pipe, created close-on-exec so a concurrent run never inherits them.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
// Returns false (errno set) when the pipe cannot be created.
bool make_pipe(Pipe& pipe);
bool set_nonblocking(int fd);

// A host directory removed (rmdir) on destruction; used as the mount point of the new root.
class TempDir {
 public:
  TempDir() = default;
  // Creates `<base>/<prefix>XXXXXX`; empty path() on failure.
  TempDir(const std::string& base, const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An anonymous mapping used as the stack of the cloned sandbox init.
class StackMapping {
 public:
  explicit StackMapping(std::size_t size);
  ~StackMapping();
  StackMapping(const StackMapping&) = delete;
  StackMapping& operator=(const StackMapping&) = delete;
  bool ok() const { return base_ != nullptr; }
  void* top() const { return static_cast<char*>(base_) + size_; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kj::sandbox::detail
