// Static screening of Python submissions before they run: a tripwire for the known ways to fake
// a result or a time. The runtime defences do not depend on it (names can be built at run time);
// it rejects what is plainly an attack and flags what deserves a look.
#include <algorithm>
#include <regex>
#include <sstream>

#include "judge/detail/text.h"
#include "judge/judge.h"
#include "problem/linear_regex.h"

namespace kj::judge {

namespace {

struct Rule {
  const char* id;
  bool reject;
  const char* pattern;
  const char* reason;
};

// Each rule has a hostile case in tests/corpus (rejects) or tests/unit/judge_test.cpp, and the
// bundled honest solutions must pass them all.
constexpr Rule kRules[] = {
    {"harness-internals", true, R"(\bkj_harness\b|\bPOPCORN_FD\b|\bPOPCORN_SEED\b)",
     "reaches into the judge's harness"},
    {"gc-walk", true, R"(\bgc\s*\.\s*(get_objects|get_referrers|get_referents)\b)",
     "walks the garbage collector, where the reference's data and outputs live"},
    {"frame-walk", true,
     R"(\bsys\s*\.\s*_getframe\b|\.f_back\b|\.f_globals\b|\.f_locals\b|\binspect\s*\.\s*(stack|currentframe|getouterframes)\b)",
     "inspects its callers' frames"},
    {"timer-patch", true,
     R"(\b(torch\s*\.\s*cuda\s*\.\s*(Event|synchronize|Stream|graph|CUDAGraph|_sleep|current_stream)|time\s*\.\s*(perf_counter|perf_counter_ns|monotonic|monotonic_ns|time|time_ns))\s*=[^=])",
     "replaces a timing function"},
    {"checker-patch", true,
     R"(\b(check_implementation|ref_kernel|generate_input|verbose_allclose|match_reference|make_match_reference)\s*=[^=]|\b(reference|utils)\s*\.\s*\w+\s*=[^=]|\bsetattr\s*\(\s*(torch|reference|utils|time|builtins)\b)",
     "replaces the checker, the reference or the input generator"},
    {"builtins-patch", true, R"(\bbuiltins\s*\.\s*\w+\s*=[^=]|\b__builtins__\b)",
     "changes Python's builtins"},
    {"other-stream", false, R"(\bcuda\s*\.\s*(Stream|stream|ExternalStream)\s*\(|cudaStreamCreate)",
     "runs work on another stream (timed until the device is idle)"},
    {"threads-or-processes", false,
     R"(\bthreading\b|\bconcurrent\s*\.\s*futures\b|\bmultiprocessing\b|\bos\s*\.\s*fork\b|\bsubprocess\b)",
     "starts threads or processes"},
    {"pointer-or-identity-keys", false, R"(\bdata_ptr\s*\(|\bid\s*\()",
     "keys on tensor addresses or object identity (caching results?)"},
    {"persisting-l2", false, R"(accessPolicyWindow|cudaAccessProperty|[Pp]ersisting[A-Z_a-z]*L2)",
     "sets an L2 persistence window (reset before every timed call)"},
    {"explicit-nan", false,
     R"(float\s*\(\s*['"][-+]?nan['"]\s*\)|\b(torch|math|numpy|np)\s*\.\s*nan\b)",
     "produces NaN explicitly"},
    {"dynamic-code", false, R"((^|[^.\w])(exec|eval|compile)\s*\(|\b__import__\s*\(|\bimportlib\b)",
     "runs code built at run time, which this screen cannot see"},
    {"ctypes", false, R"(\bctypes\b)", "calls native code through ctypes"},
    {"environment-or-proc", false, R"(\bos\s*\.\s*environ\b|/proc/)",
     "reads the environment or /proc"},
};

// The line without its comment (a # outside string literals); strings stay, since names hidden
// in them are part of what the rules look for.
std::string strip_comment(const std::string& line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

}  // namespace

std::vector<ScreenFinding> screen_python(std::string_view source) {
  static const std::vector<std::regex> patterns = [] {
    std::vector<std::regex> out;
    for (const auto& rule : kRules) out.emplace_back(rule.pattern, kLinearRegex);
    return out;
  }();
  std::vector<ScreenFinding> findings;
  std::istringstream lines{std::string(source)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string code = strip_comment(line);
    for (std::size_t r = 0; r < std::size(kRules); ++r) {
      if (!std::regex_search(code, patterns[r])) continue;
      const bool seen = std::any_of(findings.begin(), findings.end(),
                                    [&](const ScreenFinding& f) { return f.rule == kRules[r].id; });
      if (seen) continue;  // one finding per rule: the first line that trips it
      std::string excerpt = line.substr(
          line.find_first_not_of(" \t") == std::string::npos ? 0 : line.find_first_not_of(" \t"));
      findings.push_back(
          {kRules[r].id, kRules[r].reject, number, detail::cut(excerpt, 120), kRules[r].reason});
    }
  }
  return findings;
}

std::optional<ScreenFinding> screen_kernel_language(std::string_view source,
                                                    std::string_view language) {
  if (language == "any") return std::nullopt;
  static const std::regex uses_reference(
      R"(\bref_kernel\b|^\s*(from|import)\s+reference\b|['"]reference['"])", kLinearRegex);
  static const std::regex triton_kernel(R"(@\s*(triton\s*\.\s*)?jit\b|\btriton\s*\.\s*jit\s*\()",
                                        kLinearRegex);
  static const std::regex cuda_kernel(
      R"(\bload_inline\b|\bcpp_extension\b|__global__|\bRawKernel\b|\bcuda\s*\.\s*jit\b)",
      kLinearRegex);
  const std::regex& kernel = language == "triton" ? triton_kernel : cuda_kernel;
  const std::string rule = "kernel-language (" + std::string(language) + ")";
  bool has_kernel = false;
  std::istringstream lines{std::string(source)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string code = strip_comment(line);
    if (std::regex_search(code, uses_reference)) {
      return ScreenFinding{rule, true, number, detail::cut(code, 120),
                           "uses the problem's reference, which a kernel_language problem forbids"};
    }
    has_kernel = has_kernel || std::regex_search(code, kernel);
  }
  if (has_kernel) return std::nullopt;
  return ScreenFinding{rule, true, 0, "",
                       language == "triton"
                           ? "the problem requires a Triton kernel and the submission defines no "
                             "@triton.jit function"
                           : "the problem requires a CUDA kernel and the submission builds none "
                             "(load_inline, cpp_extension, __global__)"};
}

}  // namespace kj::judge
