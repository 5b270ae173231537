// kj-parquet: the parquet commands of kj (export, import, boostrap rows), in an executable of
// their own because they link Apache Arrow from the harness venv's pyarrow; kj runs this one.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "data/data.h"
#include "data/detail/boostrap_table.h"

namespace fs = std::filesystem;

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

std::vector<nlohmann::json> read_jsonl(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw kj::data::DataError("cannot read " + path.string());
  std::vector<nlohmann::json> rows;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      rows.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& e) {
      throw kj::data::DataError(path.string() + ":" + std::to_string(number) +
                                ": not JSON: " + e.what());
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kj-parquet — kernelbot-data and boostrap parquet files for kj"};
  app.require_subcommand(1);

  auto* write_boostrap =
      app.add_subcommand("write-boostrap", "boostrap rows (JSON lines) to a parquet file");
  std::string rows_path, out_path;
  write_boostrap->add_option("--rows", rows_path, "JSON lines, one boostrap row each")->required();
  write_boostrap->add_option("--out", out_path, "parquet file to write")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*write_boostrap) {
      kj::data::detail::write_boostrap_table(read_jsonl(rows_path), out_path);
      return 0;
    }
  } catch (const kj::data::DataError& e) {
    std::cerr << "kj: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "kj: " << e.what() << "\n";
    return kExitInternal;
  }
  return 0;
}
