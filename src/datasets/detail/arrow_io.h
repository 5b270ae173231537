// Reading and writing parquet tables through Arrow, with the column checks every reader shares.
#pragma once

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>

#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parquet::arrow {
class FileReader;
}  // namespace parquet::arrow

namespace kj::data::detail {

// Throws DataError with `what` and Arrow's message when `status` is not OK.
void check(const arrow::Status& status, const std::string& what);
template <typename T>
T value_or_throw(arrow::Result<T> result, const std::string& what) {
  check(result.status(), what);
  return std::move(result).ValueUnsafe();
}

// Rows per row group of every file kj writes: small enough for the Hugging Face dataset viewer,
// which reads whole row groups and refuses files whose groups exceed its scan limit (a row of
// kernelbot-data is a few kB of code, so a group is a few MB).
inline constexpr std::int64_t kRowGroupRows = 1000;

// A parquet file written record batch by record batch (snappy-compressed, row groups of
// kRowGroupRows, with a page index), so that an export holds one batch in memory, not the whole
// table. It is written beside `out` and renamed to `out` by close(); destroyed before close(),
// it leaves nothing behind.
class ParquetFileWriter {
 public:
  ParquetFileWriter(std::shared_ptr<arrow::Schema> schema, std::filesystem::path out);
  ~ParquetFileWriter();
  ParquetFileWriter(const ParquetFileWriter&) = delete;
  ParquetFileWriter& operator=(const ParquetFileWriter&) = delete;
  void write(const arrow::RecordBatch& batch);
  void write(const arrow::Table& table);
  // `batch` as one row group of its own, written out before this returns (at most
  // kRowGroupRows rows).
  void write_row_group(const arrow::RecordBatch& batch);
  // Bytes of the row groups written so far.
  std::int64_t bytes_written() const;
  void close();

 private:
  std::filesystem::path out_, partial_;
  std::shared_ptr<arrow::io::FileOutputStream> file_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
};

// Writes `table` as above, replacing `out` only once it is complete.
void write_parquet(const arrow::Table& table, const std::filesystem::path& out);

// One split of a dataset as the Hugging Face hub lays it out: `dir`/train-00000-of-0000N.parquet
// and so on, a new shard begun once one holds `max_shard_bytes` (checked between row groups:
// each batch is written as row groups of kRowGroupRows, so pass batches of a multiple of it).
// close() names the shards (their count is known only then) and removes shards of an earlier export
// left in `dir`; destroyed before close(), it leaves nothing behind.
class ShardedParquetWriter {
 public:
  ShardedParquetWriter(std::shared_ptr<arrow::Schema> schema, std::filesystem::path dir,
                       std::int64_t max_shard_bytes);
  ~ShardedParquetWriter();
  ShardedParquetWriter(const ShardedParquetWriter&) = delete;
  ShardedParquetWriter& operator=(const ShardedParquetWriter&) = delete;
  void write(const arrow::RecordBatch& batch);
  void write(const arrow::Table& table);
  // The shards written, in order.
  std::vector<std::filesystem::path> close();

 private:
  std::filesystem::path shard_path(std::size_t i) const;
  std::shared_ptr<arrow::Schema> schema_;
  std::filesystem::path dir_;
  std::int64_t max_shard_bytes_;
  std::unique_ptr<ParquetFileWriter> current_;
  std::vector<std::filesystem::path> done_;  // closed shards, under their temporary names
  std::int64_t tag_;                         // of the temporary names
};
// Reads a whole file (a column may come in several chunks: ColumnReader joins the ones it reads).
// DataError when it is not parquet.
std::shared_ptr<arrow::Table> read_parquet(const std::filesystem::path& path);

// A parquet file opened for reading (its footer read): all of it or all but one column as a
// table, and one column batch by batch. DataError when it is not parquet.
class ParquetFile {
 public:
  explicit ParquetFile(const std::filesystem::path& path);
  ~ParquetFile();
  ParquetFile(const ParquetFile&) = delete;
  ParquetFile& operator=(const ParquetFile&) = delete;
  std::shared_ptr<arrow::Schema> schema() const;
  // Every column but `except` (none when empty).
  std::shared_ptr<arrow::Table> read(std::string_view except = {});
  // Column `name` alone, as a table of one column.
  std::shared_ptr<arrow::Table> read_only(std::string_view name);
  // Column `name` in record batches of up to `batch_rows` rows, in row order. The reader must
  // not outlive this object.
  std::unique_ptr<arrow::RecordBatchReader> stream(std::string_view name, std::int64_t batch_rows);
  const std::string& file() const { return file_; }

 private:
  std::vector<int> leaves(std::string_view except_or_only, bool only) const;
  std::string file_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
};

// The strings of one column of a ParquetFile, decoded batch by batch as its rows are asked for
// in increasing order, so that two batches are in memory, not the whole column: the one read
// and the next, decoded ahead on a thread of its own.
class StreamedStrings {
 public:
  StreamedStrings(ParquetFile& file, std::string_view name, std::int64_t batch_rows);
  ~StreamedStrings();
  StreamedStrings(const StreamedStrings&) = delete;
  StreamedStrings& operator=(const StreamedStrings&) = delete;
  // Row `i`, valid until the next call; `i` never below the row of the previous call.
  std::string_view at(std::int64_t i);

 private:
  void read_ahead();
  std::string file_, name_;
  std::unique_ptr<arrow::RecordBatchReader> reader_;
  std::future<std::shared_ptr<arrow::RecordBatch>> next_;  // the batch after batch_
  std::shared_ptr<arrow::Array> batch_;
  std::int64_t begin_ = 0, end_ = 0;  // the rows of batch_
};

// A column of a table read from `file`, checked against the type the reader needs; the messages
// name the file, the column, the type found and the type expected.
class ColumnReader {
 public:
  ColumnReader(std::shared_ptr<arrow::Table> table, std::string file)
      : table_(std::move(table)), file_(std::move(file)) {}
  bool has(std::string_view name) const;
  // string or large_string
  std::shared_ptr<arrow::Array> strings(std::string_view name) const;
  // int64 or int32
  std::shared_ptr<arrow::Array> integers(std::string_view name) const;
  std::shared_ptr<arrow::DoubleArray> doubles(std::string_view name) const;
  std::shared_ptr<arrow::BooleanArray> booleans(std::string_view name) const;
  // timestamp of any unit
  std::shared_ptr<arrow::TimestampArray> timestamps(std::string_view name) const;
  // list<string>
  std::shared_ptr<arrow::ListArray> string_lists(std::string_view name) const;
  std::int64_t rows() const { return table_->num_rows(); }
  const std::string& file() const { return file_; }

 private:
  std::shared_ptr<arrow::Array> column(std::string_view name, std::string_view expected) const;
  [[noreturn]] void mistyped(std::string_view name, const arrow::DataType& found,
                             std::string_view expected) const;
  std::shared_ptr<arrow::Table> table_;
  std::string file_;
};

// Values of the arrays ColumnReader returns (null: empty / 0 / nullopt as the caller decides).
std::string_view string_at(const arrow::Array& array, std::int64_t i);
std::int64_t integer_at(const arrow::Array& array, std::int64_t i);
// Microseconds since the epoch.
std::int64_t micros_at(const arrow::TimestampArray& array, std::int64_t i);

}  // namespace kj::data::detail
