#include "datasets/detail/arrow_io.h"

#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <cstdio>
#include <random>

#include "datasets/datasets.h"

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
                        ->max_row_group_length(kRowGroupRows)
                        ->enable_write_page_index()
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

void ParquetFileWriter::write_row_group(const arrow::RecordBatch& batch) {
  const auto table = value_or_throw(arrow::Table::FromRecordBatches({batch.Slice(0)}),
                                    "cannot write " + out_.string());
  check(writer_->WriteTable(*table, kRowGroupRows), "cannot write " + out_.string());
}

std::int64_t ParquetFileWriter::bytes_written() const {
  return value_or_throw(file_->Tell(), "cannot write " + out_.string());
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

ShardedParquetWriter::ShardedParquetWriter(std::shared_ptr<arrow::Schema> schema, fs::path dir,
                                           std::int64_t max_shard_bytes)
    : schema_(std::move(schema)),
      dir_(std::move(dir)),
      max_shard_bytes_(max_shard_bytes),
      tag_(static_cast<std::int64_t>(std::random_device{}())) {
  fs::create_directories(dir_);
}

ShardedParquetWriter::~ShardedParquetWriter() {
  current_.reset();
  std::error_code ec;
  for (const auto& path : done_) fs::remove(path, ec);
}

fs::path ShardedParquetWriter::shard_path(std::size_t i) const {
  return dir_ / (".shard-" + std::to_string(tag_) + "-" + std::to_string(i) + ".parquet");
}

void ShardedParquetWriter::write(const arrow::RecordBatch& batch) {
  for (std::int64_t at = 0; at < batch.num_rows(); at += kRowGroupRows) {
    if (current_ && current_->bytes_written() >= max_shard_bytes_) {
      current_->close();
      current_.reset();
    }
    if (!current_) {
      done_.push_back(shard_path(done_.size()));
      current_ = std::make_unique<ParquetFileWriter>(schema_, done_.back());
    }
    current_->write_row_group(*batch.Slice(at, kRowGroupRows));
  }
}

void ShardedParquetWriter::write(const arrow::Table& table) {
  arrow::TableBatchReader batches(table);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    check(batches.ReadNext(&batch), "cannot write " + dir_.string());
    if (!batch) break;
    write(*batch);
  }
}

namespace {

std::string shard_name(std::size_t i, std::size_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "train-%05zu-of-%05zu.parquet", i, n);
  return name;
}

}  // namespace

std::vector<fs::path> ShardedParquetWriter::close() {
  if (!current_) {  // no rows: one empty shard, so that the split exists
    done_.push_back(shard_path(0));
    current_ = std::make_unique<ParquetFileWriter>(schema_, done_.back());
  }
  current_->close();
  current_.reset();
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("train-") && name.ends_with(".parquet")) fs::remove(entry.path());
  }
  std::vector<fs::path> shards;
  for (std::size_t i = 0; i < done_.size(); ++i) {
    shards.push_back(dir_ / shard_name(i, done_.size()));
    fs::rename(done_[i], shards.back());
  }
  done_.clear();
  return shards;
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

ParquetFile::ParquetFile(const fs::path& path) : file_(path.string()) {
  auto file = value_or_throw(arrow::io::ReadableFile::Open(file_), "cannot open " + file_);
  try {
    parquet::ArrowReaderProperties properties;
    properties.set_use_threads(true);
    parquet::arrow::FileReaderBuilder builder;
    check(builder.Open(file), file_ + " is not a parquet file");
    builder.properties(properties);
    reader_ = value_or_throw(builder.Build(), file_ + " is not a parquet file");
  } catch (const parquet::ParquetException& e) {
    throw DataError(file_ + " is not a readable parquet file: " + e.what());
  }
}

ParquetFile::~ParquetFile() = default;

std::shared_ptr<arrow::Schema> ParquetFile::schema() const {
  std::shared_ptr<arrow::Schema> schema;
  check(reader_->GetSchema(&schema), "cannot read " + file_);
  return schema;
}

// The leaf columns of every top-level field but `name` (only == false) or of `name` alone.
std::vector<int> ParquetFile::leaves(std::string_view name, bool only) const {
  std::vector<int> out;
  const auto collect = [&](const parquet::arrow::SchemaField& field, auto& self) -> void {
    if (field.column_index >= 0) out.push_back(field.column_index);
    for (const auto& child : field.children) self(child, self);
  };
  for (const auto& field : reader_->manifest().schema_fields) {
    if ((field.field->name() == name) == only) collect(field, collect);
  }
  return out;
}

std::shared_ptr<arrow::Table> ParquetFile::read(std::string_view except) {
  try {
    std::shared_ptr<arrow::Table> table;
    if (except.empty()) {
      check(reader_->ReadTable(&table), "cannot read " + file_);
    } else {
      check(reader_->ReadTable(leaves(except, false), &table), "cannot read " + file_);
    }
    return table;
  } catch (const parquet::ParquetException& e) {
    throw DataError(file_ + " is not a readable parquet file: " + e.what());
  }
}

std::shared_ptr<arrow::Table> ParquetFile::read_only(std::string_view name) {
  try {
    std::shared_ptr<arrow::Table> table;
    check(reader_->ReadTable(leaves(name, true), &table), "cannot read " + file_);
    return table;
  } catch (const parquet::ParquetException& e) {
    throw DataError(file_ + " is not a readable parquet file: " + e.what());
  }
}

std::unique_ptr<arrow::RecordBatchReader> ParquetFile::stream(std::string_view name,
                                                              std::int64_t batch_rows) {
  try {
    reader_->set_batch_size(batch_rows);
    std::vector<int> row_groups(static_cast<std::size_t>(reader_->num_row_groups()));
    for (std::size_t i = 0; i < row_groups.size(); ++i) row_groups[i] = static_cast<int>(i);
    return value_or_throw(reader_->GetRecordBatchReader(row_groups, leaves(name, true)),
                          "cannot read " + file_);
  } catch (const parquet::ParquetException& e) {
    throw DataError(file_ + " is not a readable parquet file: " + e.what());
  }
}

StreamedStrings::StreamedStrings(ParquetFile& file, std::string_view name, std::int64_t batch_rows)
    : file_(file.file()), name_(name), reader_(file.stream(name, batch_rows)) {
  read_ahead();
}

// Waits for the batch being decoded, if any (its error, if any, is dropped with it).
StreamedStrings::~StreamedStrings() {
  if (next_.valid()) next_.wait();
}

void StreamedStrings::read_ahead() {
  next_ = std::async(std::launch::async, [this] {
    std::shared_ptr<arrow::RecordBatch> batch;
    try {
      check(reader_->ReadNext(&batch), "cannot read column '" + name_ + "' of " + file_);
    } catch (const parquet::ParquetException& e) {
      throw DataError(file_ + " is not a readable parquet file: " + e.what());
    }
    return batch;
  });
}

std::string_view StreamedStrings::at(std::int64_t i) {
  while (i >= end_) {
    if (!next_.valid()) {
      throw DataError(file_ + ": column '" + name_ + "' ends before row " + std::to_string(i));
    }
    const auto batch = next_.get();  // rethrows the reader's error
    if (!batch) {
      throw DataError(file_ + ": column '" + name_ + "' ends before row " + std::to_string(i));
    }
    batch_ = batch->column(0);
    begin_ = end_;
    end_ += batch->num_rows();
    read_ahead();
  }
  return string_at(*batch_, i - begin_);
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
