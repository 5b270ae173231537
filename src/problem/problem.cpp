#include "problem/problem.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace kj::problem {
namespace fs = std::filesystem;

ProblemError::ProblemError(fs::path file, int line, std::string field, const std::string& what)
    : std::runtime_error(file.string() + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                         (field.empty() ? "" : "field '" + field + "': ") + what),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

std::string to_string(RankingBy ranking) {
  switch (ranking) {
    case RankingBy::last:
      return "last";
    case RankingBy::mean:
      return "mean";
    case RankingBy::geom:
      return "geom";
  }
  return "last";
}

int Problem::gpus_needed() const {
  int needed = 1;
  if (!multi_gpu) return needed;
  for (const auto* cases : {&tests, &benchmarks}) {
    for (const auto& c : *cases) {
      if (c.contains("world_size") && c["world_size"].is_number_integer())
        needed = std::max(needed, c["world_size"].get<int>());
    }
  }
  return needed;
}

Problem Problem::on_device(std::string_view device) const {
  Problem sized = *this;
  if (device != "cpu" || cpu_benchmarks.empty()) return sized;
  sized.benchmarks = std::exchange(sized.cpu_benchmarks, {});
  sized.benchmark_work = std::exchange(sized.cpu_benchmark_work, {});
  sized.benchmark_set = "cpu_benchmarks";
  return sized;
}

const TaskFile& Problem::submission_file() const {
  for (const auto& file : files) {
    if (file.is_submission()) return file;
  }
  throw ProblemError(dir / "task.yml", 0, "files", "no file has source @SUBMISSION@");
}

namespace {

// Reads task.yml and raises errors pointing at the node that is wrong.
class TaskReader {
 public:
  explicit TaskReader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& field,
                         const std::string& what) const {
    int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    throw ProblemError(file_, line, field, what);
  }

  std::string scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(node, field, "expected a string");
    return node.as<std::string>();
  }

  std::int64_t integer(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(node, field, "expected an integer");
    try {
      return node.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      fail(node, field, "expected an integer, got '" + node.as<std::string>() + "'");
    }
  }

  bool boolean(const YAML::Node& node, const std::string& field) const {
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      fail(node, field, "expected true or false");
    }
  }

  // A YAML scalar as the JSON value a Python reader would see: int, float, bool, null or string.
  nlohmann::ordered_json scalar_value(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) {
      if (node.IsNull()) return nullptr;
      fail(node, field, "expected a scalar (number, string or boolean)");
    }
    const std::string text = node.Scalar();
    if (node.Tag() == "!") return text;  // quoted: always a string
    std::int64_t i = 0;
    if (YAML::convert<std::int64_t>::decode(node, i)) return i;
    double d = 0;
    if (YAML::convert<double>::decode(node, d)) return d;
    bool b = false;
    if (YAML::convert<bool>::decode(node, b)) return b;
    if (text == "~" || text == "null") return nullptr;
    return text;
  }

  std::vector<nlohmann::ordered_json> cases(const YAML::Node& node, const std::string& field,
                                            bool multi_gpu) const {
    std::vector<nlohmann::ordered_json> out;
    if (!node.IsDefined() || node.IsNull()) return out;
    if (!node.IsSequence()) fail(node, field, "expected a list of argument mappings");
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string name = field + "[" + std::to_string(i) + "]";
      const YAML::Node entry = node[i];
      if (!entry.IsMap() || entry.size() == 0) {
        fail(entry, name, "expected a non-empty mapping of arguments, e.g. {size: 1024, seed: 1}");
      }
      nlohmann::ordered_json args = nlohmann::ordered_json::object();
      for (const auto& kv : entry) {
        const std::string key = scalar(kv.first, name);
        if (!is_identifier(key))
          fail(kv.first, name, "argument name '" + key + "' is not an identifier");
        if (args.contains(key)) fail(kv.first, name, "argument '" + key + "' given twice");
        args[key] = scalar_value(kv.second, name + "." + key);
      }
      if (multi_gpu && !args.contains("world_size")) {
        fail(entry, name, "multi_gpu problems need world_size in every case");
      }
      out.push_back(std::move(args));
    }
    return out;
  }

  static bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    return true;
  }

 private:
  fs::path file_;
};

nlohmann::json to_json(const TaskReader& reader, const YAML::Node& node, const std::string& field) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) {
        const std::string key = reader.scalar(kv.first, field);
        out[key] = to_json(reader, kv.second, field + "." + key);
      }
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(to_json(reader, item, field));
      return out;
    }
    case YAML::NodeType::Scalar:
      return node.Scalar();
    default:
      return nullptr;
  }
}

bool safe_file_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != ".." &&
         name.find('\0') == std::string::npos;
}

// Whether `path` names a regular file; false, not an exception, for a name the system refuses
// (too long, a loop of links): task.yml names them (found by fuzzing, fuzz/task_yml.cpp).
bool regular_file(const fs::path& path) {
  std::error_code ignored;
  return fs::is_regular_file(path, ignored);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + n >= text.size()) return i;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

}  // namespace

Problem load(const fs::path& dir_in) {
  Problem problem;
  std::error_code ec;
  problem.dir = fs::weakly_canonical(fs::absolute(dir_in), ec);
  if (ec) problem.dir = fs::absolute(dir_in);
  problem.name = problem.dir.filename().string();
  const fs::path task_file = problem.dir / "task.yml";
  if (!fs::is_directory(problem.dir)) {
    throw ProblemError(problem.dir, 0, "", "not a directory");
  }
  if (!regular_file(task_file)) throw ProblemError(task_file, 0, "", "missing task.yml");

  TaskReader reader(task_file);
  // YAML is Unicode text, and the strings of task.yml reach the harness as JSON.
  std::string text;
  try {
    text = read_file(task_file);
  } catch (const std::runtime_error& error) {
    throw ProblemError(task_file, 0, "", error.what());
  }
  if (const auto bad = invalid_utf8(text); bad != std::string_view::npos) {
    throw ProblemError(
        task_file,
        1 + static_cast<int>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n')),
        "", "not UTF-8 text (byte " + std::to_string(bad) + ")");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& error) {
    throw ProblemError(task_file, error.mark.line + 1, "", "YAML syntax error: " + error.msg);
  } catch (const YAML::Exception& error) {
    throw ProblemError(task_file, 0, "", error.what());
  }
  if (!root.IsMap()) throw ProblemError(task_file, 1, "", "task.yml must be a mapping");

  static const std::set<std::string> known = {
      "files",          "lang",         "description",  "config",
      "templates",      "tests",        "benchmarks",   "ranking_by",
      "seed",           "multi_gpu",    "test_timeout", "benchmark_timeout",
      "ranked_timeout", "gpus",         "libraries",    "kernel_language",
      "cpu_benchmarks", "ranked_timing"};
  for (const auto& kv : root) {
    const std::string key = reader.scalar(kv.first, "task.yml");
    if (!known.contains(key)) {
      problem.warnings.push_back("task.yml:" + std::to_string(kv.first.Mark().line + 1) +
                                 ": unknown field '" + key + "' ignored");
    }
  }

  // files
  const YAML::Node files = root["files"];
  if (!files.IsDefined()) throw ProblemError(task_file, 0, "files", "required field is missing");
  if (!files.IsSequence() || files.size() == 0) {
    reader.fail(files, "files", "expected a non-empty list of {name, source}");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string field = "files[" + std::to_string(i) + "]";
    const YAML::Node entry = files[i];
    if (!entry.IsMap() || !entry["name"] || !entry["source"]) {
      reader.fail(entry, field, "expected {name: ..., source: ...}");
    }
    TaskFile file{reader.scalar(entry["name"], field + ".name"),
                  reader.scalar(entry["source"], field + ".source")};
    if (!safe_file_name(file.name)) {
      reader.fail(entry["name"], field + ".name", "'" + file.name + "' is not a plain file name");
    }
    if (!names.insert(file.name).second) {
      reader.fail(entry["name"], field + ".name", "file name '" + file.name + "' given twice");
    }
    if (!file.is_submission() && !regular_file(problem.dir / file.source)) {
      reader.fail(entry["source"], field + ".source",
                  "source file '" + file.source + "' does not exist");
    }
    problem.files.push_back(std::move(file));
  }
  const auto submissions = std::count_if(problem.files.begin(), problem.files.end(),
                                         [](const TaskFile& f) { return f.is_submission(); });
  if (submissions != 1) {
    reader.fail(files, "files",
                "exactly one file must have source @SUBMISSION@ (found " +
                    std::to_string(submissions) + ")");
  }

  // lang
  const YAML::Node lang = root["lang"];
  problem.lang = lang.IsDefined() ? reader.scalar(lang, "lang") : "py";
  if (problem.lang != "py" && problem.lang != "cu") {
    reader.fail(lang, "lang", "expected \"py\" or \"cu\", got \"" + problem.lang + "\"");
  }
  if (problem.lang == "py" && !names.contains("reference.py")) {
    reader.fail(files, "files", "a Python problem needs a file named reference.py");
  }

  if (root["description"]) problem.description = reader.scalar(root["description"], "description");
  if (root["config"]) {
    if (!root["config"].IsMap()) reader.fail(root["config"], "config", "expected a mapping");
    problem.config = to_json(reader, root["config"], "config");
  }
  if (const YAML::Node templates = root["templates"]; templates.IsDefined()) {
    if (!templates.IsMap()) reader.fail(templates, "templates", "expected language: file");
    static const std::set<std::string> languages = {"CUDA", "Python", "Triton", "HIP", "CuteDSL"};
    for (const auto& kv : templates) {
      const std::string language = reader.scalar(kv.first, "templates");
      const std::string path = reader.scalar(kv.second, "templates." + language);
      if (!languages.contains(language)) {
        reader.fail(kv.first, "templates." + language,
                    "unknown template language (expected CUDA, Python, Triton, HIP or CuteDSL)");
      }
      if (!regular_file(problem.dir / path)) {
        reader.fail(kv.second, "templates." + language, "file '" + path + "' does not exist");
      }
      problem.templates[language] = path;
    }
  }

  if (root["multi_gpu"]) problem.multi_gpu = reader.boolean(root["multi_gpu"], "multi_gpu");
  if (const YAML::Node language = root["kernel_language"]; language) {
    problem.kernel_language = reader.scalar(language, "kernel_language");
    if (problem.kernel_language != "any" && problem.kernel_language != "triton" &&
        problem.kernel_language != "cuda") {
      reader.fail(language, "kernel_language",
                  "expected any, triton or cuda, got \"" + problem.kernel_language + "\"");
    }
  }
  if (const YAML::Node timing = root["ranked_timing"]; timing) {
    problem.ranked_timing = reader.scalar(timing, "ranked_timing");
    if (problem.ranked_timing != "any" && problem.ranked_timing != "sealed") {
      reader.fail(timing, "ranked_timing",
                  "expected any or sealed, got \"" + problem.ranked_timing + "\"");
    }
    // Sealed replay covers one Python process's launches: a lang: cu program and a multi-rank
    // run are always timed in process, so every ranked benchmark of theirs would fail.
    if (problem.ranked_timing == "sealed" && problem.lang == "cu") {
      reader.fail(timing, "ranked_timing",
                  "sealed cannot apply to a lang: cu problem (its program is timed in its own "
                  "process)");
    }
    if (problem.ranked_timing == "sealed" && problem.multi_gpu) {
      reader.fail(timing, "ranked_timing",
                  "sealed cannot apply to a multi_gpu problem (multi-rank runs are timed in "
                  "process)");
    }
  }
  if (!root["tests"]) throw ProblemError(task_file, 0, "tests", "required field is missing");
  problem.tests = reader.cases(root["tests"], "tests", problem.multi_gpu);
  if (problem.tests.empty()) reader.fail(root["tests"], "tests", "at least one test is needed");
  // Benchmark cases: the `bytes` / `flops` keys taken out of the arguments as their work.
  const auto benchmark_cases = [&](const char* field, std::vector<nlohmann::ordered_json>& cases,
                                   std::vector<bench::Work>& works) {
    cases = reader.cases(root[field], field, problem.multi_gpu);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      auto& args = cases[i];
      bench::Work work;
      for (auto [key, target] :
           {std::pair{"bytes", &work.bytes}, std::pair{"flops", &work.flops}}) {
        if (!args.contains(key)) continue;
        if (!args[key].is_number() || args[key].get<double>() <= 0) {
          reader.fail(root[field][i], std::string(field) + "[" + std::to_string(i) + "]." + key,
                      "expected a positive number");
        }
        *target = args[key].get<double>();
        args.erase(key);
      }
      works.push_back(work);
    }
  };
  benchmark_cases("benchmarks", problem.benchmarks, problem.benchmark_work);
  benchmark_cases("cpu_benchmarks", problem.cpu_benchmarks, problem.cpu_benchmark_work);
  if (!problem.cpu_benchmarks.empty() && problem.benchmarks.empty()) {
    reader.fail(root["cpu_benchmarks"], "cpu_benchmarks",
                "stands in for `benchmarks` on a CPU; the problem has no benchmarks");
  }

  if (const YAML::Node ranking = root["ranking_by"]; ranking.IsDefined()) {
    const std::string value = reader.scalar(ranking, "ranking_by");
    if (value == "last") {
      problem.ranking_by = RankingBy::last;
    } else if (value == "mean") {
      problem.ranking_by = RankingBy::mean;
    } else if (value == "geom") {
      problem.ranking_by = RankingBy::geom;
    } else {
      reader.fail(ranking, "ranking_by", "expected last, mean or geom, got '" + value + "'");
    }
  }
  for (auto [key, target] : {std::pair{"test_timeout", &problem.test_timeout},
                             std::pair{"benchmark_timeout", &problem.benchmark_timeout},
                             std::pair{"ranked_timeout", &problem.ranked_timeout}}) {
    if (const YAML::Node node = root[key]; node.IsDefined()) {
      const std::int64_t seconds = reader.integer(node, key);
      if (seconds <= 0 || seconds > 24 * 3600) {
        reader.fail(node, key, "expected a number of seconds between 1 and 86400");
      }
      *target = std::chrono::seconds(seconds);
    }
  }
  if (root["seed"] && !root["seed"].IsNull()) problem.seed = reader.integer(root["seed"], "seed");
  if (const YAML::Node gpus = root["gpus"]; gpus.IsDefined()) {
    if (!gpus.IsSequence()) reader.fail(gpus, "gpus", "expected a list of GPU names");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      problem.gpus.push_back(reader.scalar(gpus[i], "gpus[" + std::to_string(i) + "]"));
    }
  }
  return problem;
}

std::vector<std::pair<std::string, std::string>> task_files(const Problem& problem,
                                                            std::string_view submission_source) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& file : problem.files)
    files.emplace_back(file.name, file.is_submission() ? std::string(submission_source)
                                                       : read_file(problem.dir / file.source));
  return files;
}

void materialize(const Problem& problem, std::string_view submission_source,
                 const fs::path& out_dir) {
  fs::create_directories(out_dir);
  for (const auto& [name, content] : task_files(problem, submission_source)) {
    const fs::path target = out_dir / name;
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + target.string());
  }
}

Directives parse_directives(std::string_view source) {
  // As popcorn-cli reads them (get_popcorn_directives in its src/utils/mod.rs): any line that
  // starts with the marker, anywhere in the file; the key case-insensitive; the last one wins.
  Directives directives;
  std::istringstream lines{std::string(source)};
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("#") && !line.starts_with("//")) continue;
    std::istringstream words{line};
    std::string marker, key, value;
    if (!(words >> marker >> key) || (marker != "#!POPCORN" && marker != "//!POPCORN")) continue;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (key == "leaderboard" && words >> value) {
      directives.leaderboard = value;
    } else if (key == "gpu" || key == "gpus") {
      directives.gpus.clear();
      while (words >> value) directives.gpus.push_back(value);
    }
  }
  return directives;
}

std::optional<std::string> declared_verdict(std::string_view source) {
  const std::string_view first = source.substr(0, source.find('\n'));
  const auto pos = first.find("expect:");
  if (pos == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = first.substr(0, pos);
  if (prefix.find('#') == std::string_view::npos && prefix.find("//") == std::string_view::npos) {
    return std::nullopt;
  }
  std::string value(first.substr(pos + 7));
  const auto b = value.find_first_not_of(" \t");
  const auto e = value.find_last_not_of(" \t\r");
  if (b == std::string::npos) return std::nullopt;
  return value.substr(b, e - b + 1);
}

std::string describe_args(const nlohmann::ordered_json& args) {
  std::string out;
  for (const auto& [key, value] : args.items()) {
    if (!out.empty()) out += ", ";
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

}  // namespace kj::problem
