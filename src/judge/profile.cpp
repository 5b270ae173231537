// Profile mode: the problem's first benchmark case, checked, warmed up and called once inside
// the NVTX range `kj_profile` under Nsight Compute (`--clock-control none`: the GPU's clocks are
// never changed), then the report summarised: duration, memory and SM throughput as % of peak,
// the top warp stall reasons. The raw report is kept for the Nsight Compute GUI.
#include "judge/detail/profile.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

#include "judge/detail/not_started.h"
#include "judge/detail/temp_dir.h"

namespace kj::judge::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kOutMount = "/kj/profile";
constexpr uid_t kSandboxUid = 65534;

bool executable(const fs::path& path) { return access(path.c_str(), X_OK) == 0; }

struct PipeCloser {
  void operator()(FILE* f) const {
    if (f != nullptr) pclose(f);
  }
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// stdout and stderr of a trusted command, and whether it succeeded.
std::pair<bool, std::string> run_command(const std::string& command) {
  std::unique_ptr<FILE, PipeCloser> pipe(popen((command + " 2>&1").c_str(), "r"));
  if (!pipe) return {false, "cannot run " + command};
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  return {pclose(pipe.release()) == 0, out};
}

// One CSV record (quoted fields, as ncu writes them).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

std::optional<double> number(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  try {
    std::size_t used = 0;
    const double value = std::stod(digits, &used);
    if (used == 0) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double to_ns(double value, const std::string& unit) {
  if (unit == "usecond" || unit == "us") return value * 1e3;
  if (unit == "msecond" || unit == "ms") return value * 1e6;
  if (unit == "second" || unit == "s") return value * 1e9;
  return value;  // nsecond
}

fs::path profiles_dir() { return cache_dir("KJ_PROFILE_DIR", "profiles", "kj-profiles"); }

EvalResult not_profiled(const EvalRequest& request, const Environment& environment,
                        std::string why) {
  EvalResult result = not_started(request, environment, Verdict::internal_error, why);
  result.profile = {{"available", false}, {"message", std::move(why)}};
  return result;
}

// The folder of the host's libcuda.so.1, as `ldconfig -p` lists it (else the usual folders).
// Given to Triton as TRITON_LIBCUDA_PATH so that it does not run ldconfig itself under ncu.
std::optional<fs::path> libcuda_dir() {
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    if (!executable(ldconfig)) continue;
    const auto [ok, listing] = run_command(std::string(ldconfig) + " -p");
    if (!ok) continue;
    if (auto dir = libcuda_dir_in(listing)) return dir;
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64",
                          "/usr/lib/aarch64-linux-gnu"}) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "libcuda.so.1", ec)) return fs::path(dir);
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> libcuda_dir_in(const std::string& ldconfig_listing) {
  std::istringstream lines(ldconfig_listing);
  for (std::string line; std::getline(lines, line);) {
    const auto arrow = line.find("=> ");
    if (line.find("libcuda.so.1 ") == std::string::npos || arrow == std::string::npos) continue;
    if (line.find("x86-64") == std::string::npos && line.find("AArch64") == std::string::npos)
      continue;  // a 32-bit libcuda (libc6, no architecture) is not the harness's
    std::string target = line.substr(arrow + 3);
    while (!target.empty() && std::isspace(static_cast<unsigned char>(target.back())))
      target.pop_back();
    if (!target.empty()) return fs::path(target).parent_path();
  }
  return std::nullopt;
}

std::optional<fs::path> find_ncu() {
  if (const char* env = std::getenv("KJ_NCU"); env != nullptr && *env != '\0') {
    return executable(env) ? std::optional(fs::absolute(env)) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && executable(fs::path(dir) / "ncu")) return fs::path(dir) / "ncu";
  }
  if (executable("/usr/local/cuda/bin/ncu")) return fs::path("/usr/local/cuda/bin/ncu");
  std::vector<fs::path> found;
  std::error_code ec;
  // Nsight Compute's own installs: /opt/nvidia/nsight-compute/<version>/ncu and
  // /usr/local/cuda/nsight-compute-<version>/ncu.
  for (const auto& entry : fs::directory_iterator("/opt/nvidia/nsight-compute", ec)) {
    if (executable(entry.path() / "ncu")) found.push_back(entry.path() / "ncu");
  }
  for (const auto& entry : fs::directory_iterator("/usr/local/cuda", ec)) {
    if (entry.path().filename().string().starts_with("nsight-compute") &&
        executable(entry.path() / "ncu")) {
      found.push_back(entry.path() / "ncu");
    }
  }
  std::sort(found.begin(), found.end());  // the newest version last
  if (!found.empty()) return found.back();
  return std::nullopt;
}

std::vector<std::string> ncu_wrapper(const fs::path& ncu, const std::string& report) {
  return {ncu.string(),
          "--clock-control",
          "none",
          "--target-processes",
          "all",
          "--nvtx",
          "--nvtx-include",
          "kj_profile/",
          "--section",
          "SpeedOfLight",
          "--section",
          "WarpStateStats",
          "--section",
          "LaunchStats",
          "--force-overwrite",
          "--export",
          report};
}

nlohmann::json summarize_ncu_csv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '"') continue;  // ncu's own notes (==PROF== ...) are not CSV
    rows.push_back(csv_fields(line));
  }
  nlohmann::json kernels = nlohmann::json::array();
  if (rows.size() < 3) return kernels;
  const auto& header = rows[0];
  const auto& units = rows[1];
  auto column = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::regex stall(
      R"(^smsp__average_warps?_(?:latency_)?issue_stalled_([a-z_]+?)_per_(?:issue_active|warp_active)\.(?:ratio|pct)$)");
  for (std::size_t r = 2; r < rows.size(); ++r) {
    const auto& row = rows[r];
    auto value = [&](const std::string& name) -> std::optional<double> {
      const auto c = column(name);
      if (!c || *c >= row.size()) return std::nullopt;
      return number(row[*c]);
    };
    nlohmann::json kernel;
    if (const auto c = column("Kernel Name"); c && *c < row.size()) kernel["name"] = row[*c];
    if (const auto d = value("gpu__time_duration.sum")) {
      kernel["duration_ns"] = to_ns(*d, units[*column("gpu__time_duration.sum")]);
    }
    if (const auto m = value("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")) {
      kernel["memory_throughput_pct"] = *m;
    }
    if (const auto s = value("sm__throughput.avg.pct_of_peak_sustained_elapsed")) {
      kernel["sm_throughput_pct"] = *s;
    }
    std::vector<std::pair<double, std::string>> stalls;
    for (std::size_t c = 0; c < header.size() && c < row.size(); ++c) {
      std::smatch match;
      if (!std::regex_match(header[c], match, stall)) continue;
      const auto v = number(row[c]);
      if (v && *v > 0) stalls.emplace_back(*v, match[1].str());
    }
    std::sort(stalls.rbegin(), stalls.rend());
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < stalls.size() && i < 3; ++i) {
      top.push_back({{"reason", stalls[i].second}, {"cycles_per_instruction", stalls[i].first}});
    }
    kernel["top_stalls"] = top;
    kernels.push_back(kernel);
  }
  return kernels;
}

EvalResult evaluate_profile(const EvalRequest& request, const Environment& environment) {
  const problem::Problem& problem = *request.problem;
  // On the CPU there are no kernels for Nsight Compute to capture; an ncu named by $KJ_NCU is
  // run all the same (a stand-in profiler: how the report's way to the server is tested).
  const char* named = std::getenv("KJ_NCU");
  if (environment.device == "cpu" && (named == nullptr || *named == '\0')) {
    return not_profiled(request, environment,
                        "profile mode needs a GPU and Nsight Compute; this run is on the CPU");
  }
  const auto ncu = find_ncu();
  if (!ncu) {
    return not_profiled(request, environment,
                        "Nsight Compute (ncu) is not installed on this machine (looked at $KJ_NCU, "
                        "PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute): no profile");
  }
  if (problem.benchmarks.empty()) {
    return not_profiled(request, environment, "the problem has no benchmark case to profile");
  }
  // A host folder the sandbox writes the report into.
  std::string pattern = (fs::temp_directory_path() / "kj-profile-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return not_profiled(request, environment, "cannot create a folder for the report");
  }
  const fs::path out = pattern;
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove{out};
  if (geteuid() == 0 && lchown(out.c_str(), kSandboxUid, kSandboxUid) != 0) {
    return not_profiled(request, environment, "cannot hand the report folder to the sandbox");
  }

  problem::Problem one = problem;
  one.benchmarks = {problem.benchmarks.front()};
  if (!problem.benchmark_work.empty()) one.benchmark_work = {problem.benchmark_work.front()};
  EvalRequest run = request;
  run.problem = &one;
  run.mode = Mode::benchmark;
  run.time_reference = false;
  run.timing["max_samples"] = 1;
  run.timing["min_samples"] = 1;
  run.timing["graph_below_ns"] = 0;  // the one profiled call is a plain call, never a graph
  Environment wrapped = environment;
  wrapped.wrapper = ncu_wrapper(*ncu, std::string(kOutMount) + "/profile");
  wrapped.binds.push_back({out.string(), kOutMount, true, false});
  std::error_code ec;
  // ncu's own install tree, where it lies outside the system folders. The toolkit's `ncu` is a
  // launcher that looks for nsight-compute-<version>/ beside its bin/ folder, or /opt/nvidia.
  const fs::path ncu_bin = fs::canonical(*ncu, ec).parent_path();
  wrapped.binds.push_back({ncu_bin.string(), "", false, true});
  for (const fs::path& root : {ncu_bin.parent_path(), fs::path("/opt/nvidia")}) {
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      if (entry.is_directory(ec) &&
          entry.path().filename().string().starts_with("nsight-compute")) {
        wrapped.binds.push_back({entry.path().string(), "", false, true});
      }
    }
  }
  wrapped.env.emplace_back("KJ_PROFILE=1");
  // No recording shim under ncu: its own injection hooks the driver, and the one profiled call
  // is not a ranked time (the harness then times in process).
  wrapped.record_shim.clear();
  std::erase_if(wrapped.env, [](const std::string& variable) {
    return variable.starts_with("LD_PRELOAD=") || variable.starts_with("KJ_RECORD_SHIM=");
  });
  // Under ncu's process tracking, a child process started from the runner was seen stuck before
  // its exec (Triton's `ldconfig -p`, looking for libcuda). Where libcuda is, Triton is told.
  const bool libcuda_given = std::any_of(wrapped.env.begin(), wrapped.env.end(), [](const auto& e) {
    return e.starts_with("TRITON_LIBCUDA_PATH=");
  });
  if (!libcuda_given) {
    if (const auto dir = libcuda_dir())
      wrapped.env.push_back("TRITON_LIBCUDA_PATH=" + dir->string());
  }
  EvalResult result = evaluate(run, wrapped);
  result.mode = Mode::profile;

  const fs::path report = out / "profile.ncu-rep";
  nlohmann::json profile = {{"available", true}, {"tool", ncu->string()}};
  if (!fs::is_regular_file(report)) {
    profile["message"] =
        "ncu wrote no report (see stderr: profiling may be restricted on this "
        "machine, e.g. ERR_NVGPUCTRPERM)";
    result.profile = profile;
    return result;
  }
  const fs::path keep_dir = profiles_dir();
  fs::create_directories(keep_dir, ec);
  const auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const fs::path kept = keep_dir / (problem.name + "-" + std::to_string(stamp) + ".ncu-rep");
  fs::copy_file(report, kept, fs::copy_options::overwrite_existing, ec);
  profile["report"] = ec ? report.string() : kept.string();
  const auto [ok, csv] = run_command(shell_quote(ncu->string()) + " --import " +
                                     shell_quote(kept.string()) + " --page raw --csv");
  profile["kernels"] = summarize_ncu_csv(csv);
  if (!ok || profile["kernels"].empty()) {
    profile["message"] = "could not read the report: " + csv.substr(0, 500);
  }
  result.profile = profile;
  return result;
}

}  // namespace kj::judge::detail
