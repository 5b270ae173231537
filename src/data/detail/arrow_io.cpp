#include "data/detail/arrow_io.h"

#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <random>

#include "data/data.h"

namespace kj::data::detail {
namespace fs = std::filesystem;

void check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw DataError(what + ": " + status.ToString());
}

ParquetFileWriter::ParquetFileWriter(std::shared_ptr<arrow::Schema> schema, fs::path out)
    : out_(std::move(out)) {
  std::random_device random;
  partial_ = out_.string() + ".partial-" + std::to_string(random());
  file_ = value_or_throw(arrow::io::FileOutputStream::Open(partial_.string()),
                         "cannot create " + partial_.string());
  auto properties = parquet::WriterProperties::Builder()
                        .compression(parquet::Compression::SNAPPY)
                        ->max_row_group_length(64 * 1024)
                        ->build();
  auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  auto writer = parquet::arrow::FileWriter::Open(*schema, arrow::default_memory_pool(), file_,
                                                 properties, arrow_properties);
  if (!writer.ok()) {
    (void)file_->Close();
    std::error_code ec;
    fs::remove(partial_, ec);
    check(writer.status(), "cannot write " + out_.string());
  }
  writer_ = std::move(writer).ValueUnsafe();
}

ParquetFileWriter::~ParquetFileWriter() {
  if (!writer_) return;
  (void)file_->Close();
  std::error_code ec;
  fs::remove(partial_, ec);
}

void ParquetFileWriter::write(const arrow::RecordBatch& batch) {
  check(writer_->WriteRecordBatch(batch), "cannot write " + out_.string());
}

void ParquetFileWriter::write(const arrow::Table& table) {
  arrow::TableBatchReader batches(table);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    check(batches.ReadNext(&batch), "cannot write " + out_.string());
    if (!batch) break;
    write(*batch);
  }
}

void ParquetFileWriter::close() {
  check(writer_->Close(), "cannot write " + out_.string());
  check(file_->Close(), "cannot write " + out_.string());
  fs::rename(partial_, out_);
  writer_.reset();
}

void write_parquet(const arrow::Table& table, const fs::path& out) {
  ParquetFileWriter writer(table.schema(), out);
  writer.write(table);
  writer.close();
}

std::shared_ptr<arrow::Table> read_parquet(const fs::path& path) {
  auto file =
      value_or_throw(arrow::io::ReadableFile::Open(path.string()), "cannot open " + path.string());
  try {
    parquet::ArrowReaderProperties properties;
    properties.set_use_threads(true);
    parquet::arrow::FileReaderBuilder builder;
    check(builder.Open(file), path.string() + " is not a parquet file");
    builder.properties(properties);
    auto reader = value_or_throw(builder.Build(), path.string() + " is not a parquet file");
    std::shared_ptr<arrow::Table> table;
    check(reader->ReadTable(&table), "cannot read " + path.string());
    return table;
  } catch (const parquet::ParquetException& e) {
    throw DataError(path.string() + " is not a readable parquet file: " + e.what());
  }
}

bool ColumnReader::has(std::string_view name) const {
  return table_->schema()->GetFieldIndex(std::string(name)) >= 0;
}

void ColumnReader::mistyped(std::string_view name, const arrow::DataType& found,
                            std::string_view expected) const {
  throw DataError(file_ + ": column '" + std::string(name) + "' has type " + found.ToString() +
                  ", expected " + std::string(expected));
}

std::shared_ptr<arrow::Array> ColumnReader::column(std::string_view name,
                                                   std::string_view expected) const {
  auto chunked = table_->GetColumnByName(std::string(name));
  if (!chunked) {
    throw DataError(file_ + ": column '" + std::string(name) + "' (" + std::string(expected) +
                    ") is missing");
  }
  if (chunked->num_chunks() == 1) return chunked->chunk(0);
  return value_or_throw(arrow::Concatenate(chunked->chunks()), file_);
}

std::shared_ptr<arrow::Array> ColumnReader::strings(std::string_view name) const {
  auto array = column(name, "string");
  const auto id = array->type_id();
  if (id != arrow::Type::STRING && id != arrow::Type::LARGE_STRING) {
    mistyped(name, *array->type(), "string");
  }
  return array;
}

std::shared_ptr<arrow::Array> ColumnReader::integers(std::string_view name) const {
  auto array = column(name, "int64");
  const auto id = array->type_id();
  if (id != arrow::Type::INT64 && id != arrow::Type::INT32) mistyped(name, *array->type(), "int64");
  return array;
}

std::shared_ptr<arrow::DoubleArray> ColumnReader::doubles(std::string_view name) const {
  auto array = column(name, "double");
  if (array->type_id() != arrow::Type::DOUBLE) mistyped(name, *array->type(), "double");
  return std::static_pointer_cast<arrow::DoubleArray>(array);
}

std::shared_ptr<arrow::BooleanArray> ColumnReader::booleans(std::string_view name) const {
  auto array = column(name, "bool");
  if (array->type_id() != arrow::Type::BOOL) mistyped(name, *array->type(), "bool");
  return std::static_pointer_cast<arrow::BooleanArray>(array);
}

std::shared_ptr<arrow::TimestampArray> ColumnReader::timestamps(std::string_view name) const {
  auto array = column(name, "timestamp[us, tz=UTC]");
  if (array->type_id() != arrow::Type::TIMESTAMP) {
    mistyped(name, *array->type(), "timestamp[us, tz=UTC]");
  }
  return std::static_pointer_cast<arrow::TimestampArray>(array);
}

std::shared_ptr<arrow::ListArray> ColumnReader::string_lists(std::string_view name) const {
  auto array = column(name, "list<string>");
  if (array->type_id() != arrow::Type::LIST ||
      static_cast<const arrow::ListType&>(*array->type()).value_type()->id() !=
          arrow::Type::STRING) {
    mistyped(name, *array->type(), "list<string>");
  }
  return std::static_pointer_cast<arrow::ListArray>(array);
}

std::string_view string_at(const arrow::Array& array, std::int64_t i) {
  if (array.IsNull(i)) return {};
  if (array.type_id() == arrow::Type::LARGE_STRING) {
    return static_cast<const arrow::LargeStringArray&>(array).GetView(i);
  }
  return static_cast<const arrow::StringArray&>(array).GetView(i);
}

std::int64_t integer_at(const arrow::Array& array, std::int64_t i) {
  if (array.IsNull(i)) return 0;
  if (array.type_id() == arrow::Type::INT32) {
    return static_cast<const arrow::Int32Array&>(array).Value(i);
  }
  return static_cast<const arrow::Int64Array&>(array).Value(i);
}

std::int64_t micros_at(const arrow::TimestampArray& array, std::int64_t i) {
  const std::int64_t v = array.Value(i);
  switch (static_cast<const arrow::TimestampType&>(*array.type()).unit()) {
    case arrow::TimeUnit::SECOND:
      return v * 1000000;
    case arrow::TimeUnit::MILLI:
      return v * 1000;
    case arrow::TimeUnit::MICRO:
      return v;
    case arrow::TimeUnit::NANO:
      return v / 1000;
  }
  return v;
}

}  // namespace kj::data::detail
