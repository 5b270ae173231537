// kj-parquet: the parquet commands of kj (export, import, boostrap rows), in an executable of
// their own because they link Apache Arrow from the harness venv's pyarrow; kj runs this one.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "datasets/datasets.h"
#include "datasets/detail/boostrap_table.h"
#include "datasets/detail/files.h"

namespace fs = std::filesystem;

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kj-parquet — kernelbot-data and boostrap parquet files for kj"};
  app.require_subcommand(1);

  auto* write_boostrap =
      app.add_subcommand("write-boostrap", "boostrap rows (JSON lines) to a parquet file");
  std::string rows_path, out_path;
  write_boostrap->add_option("--rows", rows_path, "JSON lines, one boostrap row each")->required();
  write_boostrap->add_option("--out", out_path, "parquet file to write")->required();

  auto* export_cmd = app.add_subcommand("export", "write a dataset from the store");
  export_cmd->require_subcommand(1);
  std::string db = "sqlite:kj.db";
  bool progress = false;
  auto* export_kernelbot = export_cmd->add_subcommand(
      "kernelbot", "submissions.parquet, successful_submissions.parquet, leaderboards.parquet");
  kj::data::KernelbotExport kernelbot;
  std::string layout = "submission";
  export_kernelbot->add_option("--out", kernelbot.out_dir, "directory to write")->required();
  export_kernelbot->add_option("--leaderboard", kernelbot.leaderboards,
                               "(repeatable; default: all)");
  export_kernelbot->add_option("--layout", layout, "submission (one row per submission) or run")
      ->capture_default_str()
      ->check(CLI::IsMember({"submission", "run"}));
  export_kernelbot->add_flag("--anonymize", kernelbot.anonymize, "users become user-1..user-N");
  export_kernelbot->add_flag("--force", kernelbot.force, "also leaderboards still open");
  auto* export_boostrap = export_cmd->add_subcommand(
      "boostrap", "judged Triton submissions (or a bootstrap run's rows) as boostrap rows");
  kj::data::BoostrapExport boostrap;
  std::string bootstrap_run;
  export_boostrap->add_option("--out", boostrap.out_dir, "directory to write")->required();
  export_boostrap->add_option("--bootstrap-run", bootstrap_run,
                              "a kj bootstrap output directory: export its rows.jsonl instead "
                              "of the store's submissions");
  std::int64_t shard_mb = kj::data::kMaxShardBytes / (1024 * 1024);
  std::string license = "other";
  for (auto* command : {export_kernelbot, export_boostrap}) {
    command->add_option("--license", license, "the dataset card's license (a hub license id)")
        ->capture_default_str();
    command
        ->add_option("--shard-mb", shard_mb, "start a new data file once one holds this many MiB")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  }
  auto* import_cmd = app.add_subcommand("import", "load a dataset into the store");
  import_cmd->require_subcommand(1);
  auto* import_kernelbot =
      import_cmd->add_subcommand("kernelbot", "kernelbot-data parquet files (either layout)");
  std::vector<fs::path> files;
  import_kernelbot->add_option("FILES", files, "parquet files")
      ->required()
      ->check(CLI::ExistingFile);
  for (auto* command : {export_kernelbot, export_boostrap, import_kernelbot}) {
    command->add_option("--db", db, "store URL")->capture_default_str();
    command->add_flag("--progress", progress, "progress bar on stderr even when not a terminal");
  }

  CLI11_PARSE(app, argc, argv);
  try {
    if (*write_boostrap) {
      kj::data::detail::write_boostrap_table(
          kj::data::detail::read_jsonl_objects(rows_path, "rows a kj bootstrap run wrote"),
          out_path);
      return 0;
    }
    if (*export_kernelbot) {
      kernelbot.layout =
          layout == "run" ? kj::data::KernelbotLayout::run : kj::data::KernelbotLayout::submission;
      kernelbot.progress = progress;
      kernelbot.license = license;
      kernelbot.max_shard_bytes = shard_mb * 1024 * 1024;
      auto store = kj::store::open_store(db);
      const auto counts = kj::data::export_kernelbot(*store, kernelbot);
      std::cout << "wrote " << counts.submissions << " submissions ("
                << counts.successful_submissions << " successful) and " << counts.leaderboards
                << " leaderboards to " << kernelbot.out_dir.string() << "\n";
      return 0;
    }
    if (*export_boostrap) {
      boostrap.progress = progress;
      boostrap.license = license;
      boostrap.max_shard_bytes = shard_mb * 1024 * 1024;
      std::int64_t rows = 0;
      if (bootstrap_run.empty()) {
        auto store = kj::store::open_store(db);
        rows = kj::data::export_boostrap(*store, boostrap);
      } else {
        rows = kj::data::export_boostrap_run(bootstrap_run, boostrap);
      }
      std::cout << "wrote " << rows << " boostrap rows to " << boostrap.out_dir.string() << "\n";
      return 0;
    }
    if (*import_kernelbot) {
      auto store = kj::store::open_store(db);
      const auto counts = kj::data::import_kernelbot(*store, files, progress);
      std::cout << "read " << counts.rows << " rows: " << counts.submissions_added
                << " submissions and " << counts.leaderboards_added << " leaderboards added\n";
      return 0;
    }
  } catch (const kj::store::StoreError& e) {
    std::cerr << "kj: " << e.what() << "; nothing was imported\n";
    return kExitBadInput;
  } catch (const kj::data::DataError& e) {
    std::cerr << "kj: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "kj: " << e.what() << "\n";
    return kExitInternal;
  }
  return 0;
}
