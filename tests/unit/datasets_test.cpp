// kj import kernelbot on foreign files (src/datasets, built with Arrow): what a file holds that
// the importer cannot use is a DataError naming the file and the row, and nothing is stored.
#include "datasets/datasets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(KJ_SOURCE_DIR) / "tests" / "unit" / "data";

// The DataError of importing leaderboards.parquet (leaderboard 763) with `file`.
std::string import_error(const std::string& file) {
  auto store = kj::store::open_store("sqlite::memory:");
  const std::vector<fs::path> files = {kData / "kernelbot_leaderboards.parquet", kData / file};
  try {
    kj::data::import_kernelbot(*store, files, false);
  } catch (const kj::data::DataError& e) {
    EXPECT_TRUE(store->list_leaderboards(true).empty()) << "something was stored";
    return e.what();
  }
  ADD_FAILURE() << file << " was imported";
  return "";
}

}  // namespace

// run_meta of the run layout is read with json's value(), which threw type_error out of the
// import for a run_meta that is JSON but not an object ([1]) or whose runner is not a string.
TEST(ImportKernelbot, RunMetaOfTheWrongShapeIsADataError) {
  auto error = import_error("kernelbot_run_meta_array.parquet");
  EXPECT_NE(error.find("row 0: run_meta is not a JSON object"), std::string::npos) << error;
  error = import_error("kernelbot_run_meta_runner_number.parquet");
  EXPECT_NE(error.find("row 0: run_meta's runner is not a string"), std::string::npos) << error;
}
