#include "datasets/detail/card.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "datasets/datasets.h"

#ifndef KJ_VERSION
#define KJ_VERSION "unknown"
#endif

namespace kj::data::detail {
namespace fs = std::filesystem;

namespace {

// A YAML scalar: JSON's string syntax is YAML's double-quoted scalar.
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string pad(int indent) { return std::string(static_cast<std::size_t>(indent), ' '); }

// `datasets`' dtype of a type without children; empty for list and struct.
std::string scalar_dtype(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
      return "bool";
    case arrow::Type::INT32:
      return "int32";
    case arrow::Type::INT64:
      return "int64";
    case arrow::Type::DOUBLE:
      return "float64";
    case arrow::Type::STRING:
      return "string";
    case arrow::Type::LARGE_STRING:
      return "large_string";
    case arrow::Type::TIMESTAMP: {
      const auto& t = static_cast<const arrow::TimestampType&>(type);
      static constexpr const char* kUnits[] = {"s", "ms", "us", "ns"};
      std::string dtype = std::string("timestamp[") + kUnits[static_cast<int>(t.unit())];
      if (!t.timezone().empty()) dtype += ", tz=" + t.timezone();
      return dtype + "]";
    }
    case arrow::Type::LIST:
    case arrow::Type::STRUCT:
      return "";
    default:
      throw DataError("the dataset card has no feature type for " + type.ToString());
  }
}

void fields_yaml(std::ostringstream& out, const arrow::FieldVector& fields, int indent);

// The value of a feature after its "name:" line: `dtype: x`, `list: x` or a nested block.
void type_yaml(std::ostringstream& out, const arrow::DataType& type, int indent) {
  if (type.id() == arrow::Type::LIST) {
    const auto& value = *static_cast<const arrow::ListType&>(type).value_type();
    if (value.id() == arrow::Type::STRUCT) {
      out << pad(indent) << "list:\n";
      fields_yaml(out, value.fields(), indent);
    } else if (value.id() == arrow::Type::LIST) {
      throw DataError("the dataset card has no feature type for " + type.ToString());
    } else {
      out << pad(indent) << "list: " << quoted(scalar_dtype(value)) << "\n";
    }
  } else if (type.id() == arrow::Type::STRUCT) {
    out << pad(indent) << "struct:\n";
    fields_yaml(out, type.fields(), indent);
  } else {
    out << pad(indent) << "dtype: " << quoted(scalar_dtype(type)) << "\n";
  }
}

void fields_yaml(std::ostringstream& out, const arrow::FieldVector& fields, int indent) {
  for (const auto& field : fields) {
    out << pad(indent) << "- name: " << quoted(field->name()) << "\n";
    type_yaml(out, *field->type(), indent + 2);
  }
}

std::string front_matter(const Card& card) {
  std::ostringstream out;
  std::int64_t most_rows = 0;
  for (const auto& c : card.configs) most_rows = std::max(most_rows, c.rows);
  out << "---\n";
  out << "pretty_name: " << quoted(card.pretty_name) << "\n";
  out << "license: " << quoted(card.license) << "\n";
  out << "tags:\n";
  for (const auto& tag : card.tags) out << "- " << quoted(tag) << "\n";
  out << "task_categories:\n";
  for (const auto& t : card.task_categories) out << "- " << quoted(t) << "\n";
  out << "size_categories:\n- " << quoted(size_category(most_rows)) << "\n";
  out << "configs:\n";
  for (std::size_t i = 0; i < card.configs.size(); ++i) {
    const auto& c = card.configs[i];
    out << "- config_name: " << quoted(c.name) << "\n";
    if (i == 0) out << "  default: true\n";
    out << "  data_files:\n";
    out << "  - split: \"train\"\n";
    out << "    path: " << quoted(c.dir + "/train-*") << "\n";
  }
  out << "dataset_info:\n";
  for (const auto& c : card.configs) {
    out << "- config_name: " << quoted(c.name) << "\n";
    out << "  features:\n";
    out << features_yaml(*c.schema, 2);
    out << "  splits:\n";
    out << "  - name: \"train\"\n";
    out << "    num_examples: " << c.rows << "\n";
  }
  out << "---\n";
  return out.str();
}

std::string type_text(const arrow::DataType& type) {
  const auto dtype = scalar_dtype(type);
  return dtype.empty() ? type.ToString() : dtype;
}

std::string body(const Card& card) {
  std::ostringstream out;
  out << "# " << card.pretty_name << "\n\n" << card.summary << "\n\n";
  out << "## Configs\n\n";
  out << "| config | rows | files | load with |\n|---|---|---|---|\n";
  for (const auto& c : card.configs) {
    out << "| `" << c.name << "` | " << c.rows << " | `" << c.dir << "/train-*` (" << c.shards
        << ") | `load_dataset(\"<repo>\", \"" << c.name << "\")` |\n";
  }
  for (const auto& c : card.configs) {
    out << "\n### `" << c.name << "` columns\n\n| column | type | meaning |\n|---|---|---|\n";
    for (const auto& field : c.schema->fields()) {
      const auto doc = c.column_docs.find(field->name());
      out << "| `" << field->name() << "` | `" << type_text(*field->type()) << "` | "
          << (doc == c.column_docs.end() ? "" : doc->second) << " |\n";
    }
  }
  for (const auto& [heading, text] : card.sections) {
    out << "\n## " << heading << "\n\n" << text;
    if (!text.empty() && text.back() != '\n') out << "\n";
  }
  if (!card.plots.empty()) {
    out << "\n## Plots\n\n" << card.plots_text;
    if (!card.plots_text.empty() && card.plots_text.back() != '\n') out << "\n";
    for (const auto& plot : card.plots) {
      out << "\n![" << plot.title << "](" << kCardAssets << "/" << plot.file << ")\n";
    }
  }
  return out.str();
}

// Writes `text` to `path` through a temporary file beside it, renamed once complete.
void write_whole(const fs::path& path, const std::string& text) {
  const fs::path partial = path.parent_path() / ("." + path.filename().string() + ".partial-" +
                                                 std::to_string(std::random_device{}()));
  {
    std::ofstream file(partial, std::ios::binary);
    file << text;
    if (!file.flush()) {
      file.close();
      std::error_code ec;
      fs::remove(partial, ec);
      throw DataError("cannot write " + path.string());
    }
  }
  fs::rename(partial, path);
}

void write_plots(const std::vector<CardPlot>& plots, const fs::path& dir) {
  const fs::path assets = dir / kCardAssets;
  if (fs::is_directory(assets)) {
    for (const auto& entry : fs::directory_iterator(assets)) {
      if (entry.path().extension() == ".svg") fs::remove(entry.path());
    }
  }
  if (plots.empty()) return;
  fs::create_directories(assets);
  for (const auto& plot : plots) write_whole(assets / plot.file, plot.svg);
}

}  // namespace

std::string size_category(std::int64_t rows) {
  if (rows < 1000) return "n<1K";
  if (rows < 10000) return "1K<n<10K";
  if (rows < 100000) return "10K<n<100K";
  if (rows < 1000000) return "100K<n<1M";
  if (rows < 10000000) return "1M<n<10M";
  if (rows < 100000000) return "10M<n<100M";
  return "100M<n<1B";
}

std::string features_yaml(const arrow::Schema& schema, int indent) {
  std::ostringstream out;
  fields_yaml(out, schema.fields(), indent);
  return out.str();
}

std::string render_card(const Card& card) { return front_matter(card) + "\n" + body(card); }

void write_card(const Card& card, const fs::path& dir) {
  write_plots(card.plots, dir);
  write_whole(dir / "README.md", render_card(card));
}

std::string kj_version() { return std::string("kj ") + KJ_VERSION; }

}  // namespace kj::data::detail
