// The boostrap_triton table (the Arrow half of write_boostrap_parquet).
#pragma once

#include <arrow/api.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace kj::data::detail {

// Checks every row against kBoostrapColumns (DataError naming the row and column) and builds the
// table.
std::shared_ptr<arrow::Table> boostrap_table(const std::vector<nlohmann::json>& rows);

// Checks every row against kBoostrapColumns, then writes the file (nothing when a row is bad).
void write_boostrap_table(const std::vector<nlohmann::json>& rows,
                          const std::filesystem::path& out);

}  // namespace kj::data::detail
