// Finding and running kj-parquet, the executable that holds the Arrow-linked half of src/datasets.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "datasets/datasets.h"

extern char** environ;

namespace kj::data {
namespace fs = std::filesystem;

namespace {

// A file removed when this goes out of scope.
class TemporaryFile {
 public:
  explicit TemporaryFile(fs::path path) : path_(std::move(path)) {}
  ~TemporaryFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

fs::path parquet_tool_path() {
  if (const char* env = std::getenv("KJ_PARQUET"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path beside = exe.parent_path() / "kj-parquet";
  if (ec || !fs::exists(beside)) {
    throw DataError("kj-parquet was not found beside " + exe.string() +
                    " (set $KJ_PARQUET): it is built with kj when the harness venv has pyarrow "
                    "(scripts/setup.sh)");
  }
  return beside;
}

namespace {

// Runs kj-parquet; its stderr goes to `stderr_file` when given.
int spawn_tool(const std::vector<std::string>& args, const fs::path* stderr_file) {
  const std::string tool = parquet_tool_path().string();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(tool.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stderr_file) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file->c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, tool.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw DataError("cannot start " + tool + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw DataError("waitpid on " + tool + " failed");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

nlohmann::json boostrap_columns(const nlohmann::json& recorded) {
  nlohmann::json picked = nlohmann::json::object();
  for (const char* column : kBoostrapColumns) {
    picked[column] = recorded.contains(column) ? recorded[column] : nlohmann::json(nullptr);
  }
  for (const char* column :
       {"triton_code", "pt_entrypoint", "triton_entrypoint", "reasoning", "tests_code", "stdout",
        "stderr", "stop_reason", "entrypoint", "tests", "verdict", "pt_code"}) {
    if (!picked[column].is_string()) picked[column] = "";
  }
  for (const char* column : {"messages", "prompt", "timings"}) {
    if (!picked[column].is_array()) picked[column] = nlohmann::json::array();
  }
  if (!picked["pt_code_runs"].is_boolean()) picked["pt_code_runs"] = false;
  return picked;
}

int run_parquet_tool(const std::vector<std::string>& args) { return spawn_tool(args, nullptr); }

void write_boostrap_parquet(const std::vector<nlohmann::json>& rows, const fs::path& out) {
  std::random_device random;
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  TemporaryFile jsonl(dir / (".boostrap-" + std::to_string(random()) + ".jsonl"));
  {
    std::ofstream file(jsonl.path(), std::ios::binary);
    if (!file) throw DataError("cannot write " + jsonl.path().string());
    for (const auto& row : rows) file << row.dump() << '\n';
    if (!file.flush()) throw DataError("cannot write " + jsonl.path().string());
  }
  TemporaryFile errors(dir / (".boostrap-" + std::to_string(random()) + ".err"));
  const int rc = spawn_tool(
      {"write-boostrap", "--rows", jsonl.path().string(), "--out", out.string()}, &errors.path());
  if (rc != 0) {
    std::ifstream in(errors.path());
    std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw DataError(message.empty()
                        ? "kj-parquet write-boostrap failed (exit " + std::to_string(rc) + ")"
                        : message);
  }
}

}  // namespace kj::data
