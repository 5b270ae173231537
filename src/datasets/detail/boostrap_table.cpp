#include "datasets/detail/boostrap_table.h"

#include <arrow/api.h>

#include <set>

#include "datasets/datasets.h"
#include "datasets/detail/arrow_io.h"

namespace kj::data::detail {
namespace {

std::shared_ptr<arrow::DataType> chat_type() {
  return arrow::list(arrow::struct_(
      {arrow::field("content", arrow::utf8()), arrow::field("role", arrow::utf8())}));
}

std::shared_ptr<arrow::DataType> timings_type() {
  return arrow::list(arrow::struct_({arrow::field("spec", arrow::utf8()),
                                     arrow::field("median_ns", arrow::float64()),
                                     arrow::field("reference_median_ns", arrow::float64())}));
}

enum class Kind { string, boolean, chat, number, timings };

Kind kind_of(std::string_view column) {
  if (column == "pt_code_runs") return Kind::boolean;
  if (column == "messages" || column == "prompt") return Kind::chat;
  if (column == "max_error" || column == "speedup") return Kind::number;
  if (column == "timings") return Kind::timings;
  return Kind::string;
}

std::shared_ptr<arrow::DataType> arrow_type(Kind kind) {
  switch (kind) {
    case Kind::string:
      return arrow::utf8();
    case Kind::boolean:
      return arrow::boolean();
    case Kind::chat:
      return chat_type();
    case Kind::number:
      return arrow::float64();
    case Kind::timings:
      return timings_type();
  }
  return arrow::utf8();
}

[[noreturn]] void bad(std::size_t row, std::string_view column, const std::string& why) {
  throw DataError("boostrap row " + std::to_string(row) + ", column '" + std::string(column) +
                  "': " + why);
}

bool is_number_or_null(const nlohmann::json& v) { return v.is_null() || v.is_number(); }

// Checks one value; the writer then trusts it.
void check_value(std::size_t row, std::string_view column, Kind kind, const nlohmann::json& v) {
  switch (kind) {
    case Kind::string:
      if (!v.is_string()) bad(row, column, "expected a string, got " + std::string(v.type_name()));
      return;
    case Kind::boolean:
      if (!v.is_boolean()) bad(row, column, "expected a bool, got " + std::string(v.type_name()));
      return;
    case Kind::number:
      if (!is_number_or_null(v)) {
        bad(row, column, "expected a number or null, got " + std::string(v.type_name()));
      }
      return;
    case Kind::chat:
      if (!v.is_array()) bad(row, column, "expected a list of {content, role}");
      for (const auto& m : v) {
        if (!m.is_object() || m.size() != 2 || !m.contains("content") || !m.contains("role") ||
            !m["content"].is_string() || !m["role"].is_string()) {
          bad(row, column, "each message must be {\"content\": string, \"role\": string}");
        }
      }
      return;
    case Kind::timings:
      if (!v.is_array())
        bad(row, column, "expected a list of {spec, median_ns, reference_median_ns}");
      for (const auto& t : v) {
        if (!t.is_object() || t.size() != 3 || !t.contains("spec") || !t["spec"].is_string() ||
            !t.contains("median_ns") || !is_number_or_null(t["median_ns"]) ||
            !t.contains("reference_median_ns") || !is_number_or_null(t["reference_median_ns"])) {
          bad(row, column,
              "each timing must be {\"spec\": string, \"median_ns\": number|null, "
              "\"reference_median_ns\": number|null}");
        }
      }
      return;
  }
}

void append_double(arrow::DoubleBuilder& builder, const nlohmann::json& v) {
  check(v.is_null() ? builder.AppendNull() : builder.Append(v.get<double>()), "boostrap");
}

void append_value(arrow::ArrayBuilder& builder, Kind kind, const nlohmann::json& v) {
  const std::string what = "boostrap";
  switch (kind) {
    case Kind::string:
      check(static_cast<arrow::StringBuilder&>(builder).Append(v.get_ref<const std::string&>()),
            what);
      return;
    case Kind::boolean:
      check(static_cast<arrow::BooleanBuilder&>(builder).Append(v.get<bool>()), what);
      return;
    case Kind::number:
      append_double(static_cast<arrow::DoubleBuilder&>(builder), v);
      return;
    case Kind::chat: {
      auto& list = static_cast<arrow::ListBuilder&>(builder);
      auto& item = static_cast<arrow::StructBuilder&>(*list.value_builder());
      auto& content = static_cast<arrow::StringBuilder&>(*item.field_builder(0));
      auto& role = static_cast<arrow::StringBuilder&>(*item.field_builder(1));
      check(list.Append(), what);
      for (const auto& m : v) {
        check(item.Append(), what);
        check(content.Append(m["content"].get_ref<const std::string&>()), what);
        check(role.Append(m["role"].get_ref<const std::string&>()), what);
      }
      return;
    }
    case Kind::timings: {
      auto& list = static_cast<arrow::ListBuilder&>(builder);
      auto& item = static_cast<arrow::StructBuilder&>(*list.value_builder());
      auto& spec = static_cast<arrow::StringBuilder&>(*item.field_builder(0));
      auto& median = static_cast<arrow::DoubleBuilder&>(*item.field_builder(1));
      auto& reference = static_cast<arrow::DoubleBuilder&>(*item.field_builder(2));
      check(list.Append(), what);
      for (const auto& t : v) {
        check(item.Append(), what);
        check(spec.Append(t["spec"].get_ref<const std::string&>()), what);
        append_double(median, t["median_ns"]);
        append_double(reference, t["reference_median_ns"]);
      }
      return;
    }
  }
}

}  // namespace

std::shared_ptr<arrow::Table> boostrap_table(const std::vector<nlohmann::json>& rows) {
  const std::set<std::string> expected(std::begin(kBoostrapColumns), std::end(kBoostrapColumns));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (!row.is_object())
      throw DataError("boostrap row " + std::to_string(r) + " is not an object");
    for (const auto& [key, value] : row.items()) {
      if (!expected.contains(key)) {
        throw DataError("boostrap row " + std::to_string(r) + " has a column '" + key +
                        "' that is not a boostrap column");
      }
    }
    for (const char* column : kBoostrapColumns) {
      if (!row.contains(column)) bad(r, column, "missing");
      check_value(r, column, kind_of(column), row[column]);
    }
  }
  arrow::FieldVector fields;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders;
  for (const char* column : kBoostrapColumns) {
    auto type = arrow_type(kind_of(column));
    fields.push_back(arrow::field(column, type));
    builders.push_back(value_or_throw(arrow::MakeBuilder(type), "boostrap"));
  }
  for (const auto& row : rows) {
    std::size_t c = 0;
    for (const char* column : kBoostrapColumns) {
      append_value(*builders[c++], kind_of(column), row[column]);
    }
  }
  arrow::ArrayVector arrays;
  for (auto& builder : builders) arrays.push_back(value_or_throw(builder->Finish(), "boostrap"));
  return arrow::Table::Make(arrow::schema(fields), arrays, static_cast<std::int64_t>(rows.size()));
}

void write_boostrap_table(const std::vector<nlohmann::json>& rows,
                          const std::filesystem::path& out) {
  write_parquet(*boostrap_table(rows), out);
}

}  // namespace kj::data::detail
