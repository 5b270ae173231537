// The compile cache: one directory per scope, written only here (compile_cache.h).
#include "judge/compile_cache.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "judge/detail/digest.h"
#include "judge/detail/temp_dir.h"

namespace kj::judge {
namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 2> kCaches = {"triton", "torch_extensions"};
constexpr std::size_t kMaxDepth = 12;
constexpr std::size_t kMaxComponent = 200;

// Holds an exclusive lock on a scope's directory: runs of one scope on several workers (or kj
// processes) read and write it one at a time, and eviction skips a scope in use.
class ScopeLock {
 public:
  ScopeLock(const fs::path& dir, bool wait) {
    fs::create_directories(dir);
    fd_ = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~ScopeLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
  }
  ScopeLock(const ScopeLock&) = delete;
  ScopeLock& operator=(const ScopeLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

bool valid_component(std::string_view part) {
  if (part.empty() || part == "." || part == ".." || part.size() > kMaxComponent) return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '+';
  });
}

// "cache/entry/.../file" split into its components, if it has the shape of a cache file.
std::optional<std::vector<std::string>> cache_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash - start);
    if (!valid_component(part)) return std::nullopt;
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 3 || parts.size() > kMaxDepth) return std::nullopt;
  if (std::find(kCaches.begin(), kCaches.end(), parts[0]) == kCaches.end()) return std::nullopt;
  return parts;
}

std::optional<std::string> decode_base64(const std::string& text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '=' && size > 0; --i) --size;
  out.resize(size);
  return out;
}

std::string encode_base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// A file's modification time in nanoseconds and whether anyone may execute it.
struct FileFacts {
  std::int64_t mtime_ns = 0;
  bool executable = false;
};

FileFacts facts_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
          (st.st_mode & 0111) != 0};
}

// Sets a file's times to `ns`, or to now. Now is read from the clock, not the kernel's
// UTIME_NOW, whose time is coarse (a tick): two uses within a tick must still be ordered.
void set_mtime(const fs::path& path, std::optional<std::int64_t> ns) {
  const std::int64_t when = ns ? *ns
                               : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  const timespec time{static_cast<time_t>(when / 1'000'000'000),
                      static_cast<long>(when % 1'000'000'000)};
  const std::array<timespec, 2> times{time, time};
  ::utimensat(AT_FDCWD, path.c_str(), times.data(), 0);
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One kernel's or one extension's files in a scope, with when it was last given or stored.
struct Entry {
  fs::path dir;
  std::string name;  // "<cache>/<entry>"
  std::int64_t used_ns = 0;
  std::uintmax_t bytes = 0;
};

std::vector<Entry> list_entries(const fs::path& scope_dir) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (std::string_view cache : kCaches) {
    const fs::path cache_dir = scope_dir / cache;
    if (!fs::is_directory(cache_dir, ec)) continue;
    for (const auto& item : fs::directory_iterator(cache_dir, ec)) {
      if (!item.is_directory(ec) || item.is_symlink(ec)) continue;
      Entry entry{item.path(), std::string(cache) + "/" + item.path().filename().string(),
                  facts_of(item.path()).mtime_ns, 0};
      for (const auto& file : fs::recursive_directory_iterator(item.path(), ec)) {
        if (file.is_regular_file(ec) && !file.is_symlink(ec)) entry.bytes += file.file_size(ec);
      }
      entries.push_back(std::move(entry));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used_ns > b.used_ns; });
  return entries;
}

// Writes one file through a temporary name in its directory, so a reader never sees half.
bool write_file(const fs::path& target, const std::string& data, bool executable,
                std::int64_t modified_ns) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec || fs::is_directory(target, ec)) return false;
  std::string pattern = (target.parent_path() / ".kj-tmp-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) return false;
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool ok = written == data.size() && ::fchmod(fd, executable ? 0755 : 0644) == 0;
  ::close(fd);
  if (ok) set_mtime(pattern, modified_ns);
  if (!ok || ::rename(pattern.c_str(), target.c_str()) != 0) {
    ::unlink(pattern.c_str());
    return false;
  }
  return true;
}

}  // namespace

CompileCache::CompileCache(fs::path root, std::uintmax_t total_bytes)
    : root_(std::move(root)), total_bytes_(total_bytes) {}

fs::path CompileCache::default_root() {
  return detail::cache_dir("KJ_COMPILE_CACHE", "compile", "kj-compile-cache");
}

fs::path CompileCache::scope_dir(const std::string& scope) const {
  return root_ / detail::sha256_hex(scope).substr(0, 32);
}

std::string CompileCache::entries_for(const std::string& scope) const {
  nlohmann::json out = {{"files", nlohmann::json::array()}};
  const fs::path dir = scope_dir(scope);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out.dump();
  ScopeLock lock(dir, true);
  set_mtime(dir, std::nullopt);  // used now: the last scope to be evicted
  std::uintmax_t total = 0;
  for (const Entry& entry : list_entries(dir)) {
    if (total + entry.bytes > kCompileCacheRunBytes) continue;
    total += entry.bytes;
    for (const auto& file : fs::recursive_directory_iterator(entry.dir, ec)) {
      if (!file.is_regular_file(ec) || file.is_symlink(ec)) continue;
      const std::string name = file.path().filename().string();
      if (name.starts_with(".kj-tmp-")) continue;
      const FileFacts facts = facts_of(file.path());
      out["files"].push_back(
          {{"path", entry.name + "/" + fs::relative(file.path(), entry.dir).string()},
           {"mtime_ns", facts.mtime_ns},
           {"executable", facts.executable},
           {"data", encode_base64(read_all(file.path()))}});
    }
  }
  return out.dump();
}

nlohmann::json CompileCache::store(const std::string& scope, const nlohmann::json& event) const {
  int stored = 0;
  int refused = 0;
  const auto files = event.find("files");
  if (files == event.end() || !files->is_array() || files->empty()) {
    return {{"stored", 0}, {"refused", 0}};
  }
  const fs::path dir = scope_dir(scope);
  try {
    {
      ScopeLock lock(dir, true);
      std::uintmax_t total = 0;
      for (const auto& item : *files) {
        const auto path = item.is_object() && item.contains("path") && item["path"].is_string()
                              ? cache_path(item["path"].get<std::string>())
                              : std::nullopt;
        const auto data = path && item.contains("data") && item["data"].is_string()
                              ? decode_base64(item["data"].get<std::string>())
                              : std::nullopt;
        const auto modified = item.is_object() ? item.find("mtime_ns") : item.end();
        const bool modified_ok = item.is_object() && modified != item.end() &&
                                 modified->is_number_integer() &&
                                 modified->get<std::int64_t>() >= 0;
        if (!data || !modified_ok || data->size() > kCompileCacheFileBytes ||
            total + data->size() > kCompileCacheRunBytes) {
          ++refused;
          continue;
        }
        fs::path target = dir;
        for (const auto& part : *path) target /= part;
        const auto flag = item.find("executable");
        const bool executable = flag != item.end() && flag->is_boolean() && flag->get<bool>();
        if (!write_file(target, *data, executable, modified->get<std::int64_t>())) {
          ++refused;
          continue;
        }
        total += data->size();
        ++stored;
      }
      set_mtime(dir, std::nullopt);
    }
    evict();
  } catch (const std::exception&) {
    // A cache that cannot be written (disk full, permissions) never changes a verdict.
    return {{"stored", stored}, {"refused", refused}, {"error", "the cache could not be written"}};
  }
  return {{"stored", stored}, {"refused", refused}};
}

void CompileCache::evict() const {
  struct Scope {
    fs::path dir;
    std::int64_t used_ns = 0;
    std::uintmax_t bytes = 0;
  };
  std::vector<Scope> scopes;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(root_, ec)) {
    if (!item.is_directory(ec) || item.is_symlink(ec)) continue;
    Scope scope{item.path(), facts_of(item.path()).mtime_ns, 0};
    for (const Entry& entry : list_entries(item.path())) scope.bytes += entry.bytes;
    scopes.push_back(std::move(scope));
  }
  std::sort(scopes.begin(), scopes.end(),
            [](const Scope& a, const Scope& b) { return a.used_ns > b.used_ns; });
  std::uintmax_t total = 0;
  for (const Scope& scope : scopes) {
    total += scope.bytes;
    if (total <= total_bytes_) continue;
    ScopeLock lock(scope.dir, false);  // in use elsewhere: left for a later eviction
    if (lock.held()) fs::remove_all(scope.dir, ec);
  }
}

}  // namespace kj::judge
