// The compile cache's store: what a run reported comes back to the same scope's next run, byte
// and time exact; nothing reaches another scope; malformed reports are refused, not written.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>

#include "judge/compile_cache.h"
#include "judge/detail/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using kj::judge::CompileCache;

std::string base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

nlohmann::json file(const std::string& path, const std::string& data, std::int64_t mtime_ns,
                    bool executable = false) {
  return {
      {"path", path}, {"data", base64(data)}, {"mtime_ns", mtime_ns}, {"executable", executable}};
}

nlohmann::json event(nlohmann::json files) {
  return {{"event", "compile_cache"}, {"files", files}};
}

// Every regular file under root, relative, but the scopes' lock files.
std::set<std::string> tree(const fs::path& root) {
  std::set<std::string> files;
  for (const auto& item : fs::recursive_directory_iterator(root)) {
    if (item.is_regular_file() && item.path().filename() != ".lock")
      files.insert(fs::relative(item.path(), root).string());
  }
  return files;
}

TEST(CompileCache, AStoredBuildComesBackToTheSameScopeExactly) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path());
  const std::int64_t when = 1'700'000'000'123'456'789;
  const std::string binary(
      "\x7f"
      "ELF\0\x01\x02",
      7);
  const auto stored =
      cache.store("user 1\nsource abc",
                  event({file("torch_extensions/vadd/vadd.so", binary, when, true),
                         file("torch_extensions/vadd/.ninja_log", "# ninja log v5\n", when - 5),
                         file("triton/KEY123/add_kernel.cubin", "cubin", when)}));
  EXPECT_EQ(stored["stored"], 3);
  EXPECT_EQ(stored["refused"], 0);

  const auto given = nlohmann::json::parse(cache.entries_for("user 1\nsource abc"));
  ASSERT_EQ(given["files"].size(), 3u);
  bool saw_so = false;
  for (const auto& f : given["files"]) {
    if (f["path"] == "torch_extensions/vadd/vadd.so") {
      saw_so = true;
      EXPECT_EQ(f["data"], base64(binary));
      EXPECT_EQ(f["mtime_ns"], when);  // ninja compares these: they must come back exactly
      EXPECT_EQ(f["executable"], true);
    }
    if (f["path"] == "torch_extensions/vadd/.ninja_log") {
      EXPECT_EQ(f["mtime_ns"], when - 5);
    }
  }
  EXPECT_TRUE(saw_so);
}

TEST(CompileCache, AnotherScopeGetsNothing) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path());
  cache.store("user 1\nsource abc", event({file("triton/K/k.cubin", "planted", 1)}));
  for (const char* other : {"user 2\nsource abc", "user 1\nsource abd", ""}) {
    const auto given = nlohmann::json::parse(cache.entries_for(other));
    EXPECT_TRUE(given["files"].empty()) << other;
  }
}

TEST(CompileCache, MalformedFilesAreRefusedAndNothingLandsOutsideTheScope) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path());
  nlohmann::json files = nlohmann::json::array();
  for (const char* path :
       {"../escape/a/b", "triton/../../escape", "/etc/passwd", "triton/a", "other/a/b", "triton//b",
        "triton/a/b c", "triton/./b", "torch_extensions/a/b/c/d/e/f/g/h/i/j/k/l"}) {
    files.push_back(file(path, "x", 1));
  }
  files.push_back({{"path", "triton/a/bad_base64"}, {"data", "!!!!"}, {"mtime_ns", 1}});
  files.push_back({{"path", "triton/a/no_time"}, {"data", base64("x")}});
  files.push_back(file("triton/a/negative_time", "x", -1));
  files.push_back({{"path", "triton/a/string_flag"},
                   {"data", base64("x")},
                   {"mtime_ns", 1},
                   {"executable", "yes"}});  // not a boolean: not executable, still stored
  files.push_back(42);
  files.push_back(nlohmann::json::array());
  const auto stored = cache.store("scope", event(files));
  EXPECT_EQ(stored["stored"], 1);
  EXPECT_EQ(stored["refused"], files.size() - 1);
  const auto written = tree(root.path());
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written.begin()->ends_with("/triton/a/string_flag")) << *written.begin();
  struct stat st {};
  ASSERT_EQ(::stat((root.path() / *written.begin()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0111, 0u);
  EXPECT_FALSE(fs::exists(root.path().parent_path() / "escape"));
}

TEST(CompileCache, AReportOfTheWrongShapeStoresNothingAndDoesNotThrow) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path());
  for (const auto& bad : {nlohmann::json::object(), nlohmann::json{{"files", "x"}},
                          nlohmann::json{{"files", nlohmann::json::object()}},
                          nlohmann::json{{"files", nlohmann::json::array()}}}) {
    const auto stored = cache.store("scope", bad);
    EXPECT_EQ(stored["stored"], 0) << bad.dump();
  }
  EXPECT_TRUE(tree(root.path()).empty());
}

TEST(CompileCache, TheLeastRecentlyUsedScopesGoFirstBeyondTheCachesSize) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path(), 250);  // room for two scopes of 100 bytes
  const std::string hundred(100, 'x');
  cache.store("old", event({file("triton/K/k.bin", hundred, 1)}));
  cache.store("used", event({file("triton/K/k.bin", hundred, 1)}));
  // "old" is given to a run now: it is the most recently used, "used" the least.
  EXPECT_EQ(nlohmann::json::parse(cache.entries_for("old"))["files"].size(), 1u);
  cache.store("new", event({file("triton/K/k.bin", hundred, 1)}));
  EXPECT_EQ(nlohmann::json::parse(cache.entries_for("old"))["files"].size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(cache.entries_for("new"))["files"].size(), 1u);
  EXPECT_TRUE(nlohmann::json::parse(cache.entries_for("used"))["files"].empty());
}

TEST(CompileCache, AFileStoredAgainReplacesTheOldOne) {
  kj::judge::detail::TempDir root("kj-compile-cache-");
  const CompileCache cache(root.path());
  cache.store("s", event({file("torch_extensions/e/e.so", "first", 10)}));
  cache.store("s", event({file("torch_extensions/e/e.so", "second", 20)}));
  const auto given = nlohmann::json::parse(cache.entries_for("s"));
  ASSERT_EQ(given["files"].size(), 1u);
  EXPECT_EQ(given["files"][0]["data"], base64("second"));
  EXPECT_EQ(given["files"][0]["mtime_ns"], 20);
}

}  // namespace
