// The Hugging Face dataset card (README.md) every export writes beside its data: YAML front matter
// the hub and `datasets.load_dataset` read (configs, data_files, features, license, tags, size
// category) and a body for people, generated from the data written.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kj::data::detail {

// One config of the dataset: one table, its train split in `dir` (relative to the card).
struct CardConfig {
  std::string name;
  std::string dir;  // e.g. "data/submissions"; the split's files are dir/train-*
  std::shared_ptr<arrow::Schema> schema;
  std::int64_t rows = 0;
  std::int64_t shards = 0;
  std::map<std::string, std::string> column_docs;  // column -> what it holds
};

// A chart the card shows: written to assets/<file> beside README.md and linked from its body.
struct CardPlot {
  std::string file;  // e.g. "best-nvfp4_gemv-B200.svg"
  std::string title;
  std::string svg;
};

struct Card {
  std::string pretty_name;
  std::string license;  // a hub license id ("other" when the operator chose none)
  std::vector<std::string> tags;
  std::vector<std::string> task_categories;
  std::vector<CardConfig> configs;
  std::string summary;                                        // the first paragraph
  std::vector<std::pair<std::string, std::string>> sections;  // heading, markdown
  std::string plots_text;                                     // above the plots
  std::vector<CardPlot> plots;                                // after the sections, under "Plots"
};

// The directory of a card's plots, relative to the card.
inline constexpr const char* kCardAssets = "assets";

// The hub's size category of a dataset with `rows` rows ("n<1K", "1K<n<10K", ...).
std::string size_category(std::int64_t rows);

// The features of `schema` as the hub's dataset_info lists them (`datasets`' YAML form).
std::string features_yaml(const arrow::Schema& schema, int indent);

// The whole README.md.
std::string render_card(const Card& card);

// Writes the plots to `dir`/assets/ (the .svg files of an earlier export there are removed) and
// render_card(card) to `dir`/README.md (replacing it only once complete).
void write_card(const Card& card, const std::filesystem::path& dir);

// "kj <version>", the version kj was built as.
std::string kj_version();

}  // namespace kj::data::detail
