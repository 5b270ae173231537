// Reading the files the dataset tools take: whole files and JSON Lines.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/datasets.h"

namespace kj::data::detail {

// The file's bytes, or "" when it cannot be read.
inline std::string read_file_or_empty(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One JSON object a line (blank lines skipped). DataError names the file, or the line that is
// not a JSON object; `what` says what the file should have been.
inline std::vector<nlohmann::json> read_jsonl_objects(const std::filesystem::path& path,
                                                      const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot read " + path.string() + " (" + what + ")");
  std::vector<nlohmann::json> rows;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded() || !row.is_object()) {
      throw DataError(path.string() + ":" + std::to_string(number) + ": not a JSON row");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kj::data::detail
