// Parquet files given to `kj import kernelbot`: the fuzzer's bytes as one such file, read through
// Arrow and imported into an in-memory store as kj-parquet does, beside a valid
// leaderboards.parquet (run-level files name their leaderboards by id only, so without it their
// rows stop at the first). DataError (a foreign or corrupt file) and StoreError are the documented
// outcomes.
#include <arrow/api.h>

#include "datasets/datasets.h"
#include "datasets/detail/arrow_io.h"
#include "fuzz/fuzz_files.h"

namespace {

namespace detail = kj::data::detail;

// leaderboards.parquet naming the ids of the seed files (fuzz/seeds/parquet_files.py).
void write_leaderboards(const std::filesystem::path& out) {
  arrow::Int64Builder id;
  arrow::LargeStringBuilder name, lang, description, reference;
  arrow::TimestampBuilder deadline(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                                   arrow::default_memory_pool());
  auto gpu_values = std::make_shared<arrow::StringBuilder>();
  arrow::ListBuilder gpus(arrow::default_memory_pool(), gpu_values);
  for (const std::int64_t lb : {595, 596, 763}) {
    detail::check(id.Append(lb), "fuzz leaderboards");
    detail::check(name.Append("lb" + std::to_string(lb)), "fuzz leaderboards");
    detail::check(deadline.Append(1'760'000'000'000'000), "fuzz leaderboards");
    detail::check(lang.Append("py"), "fuzz leaderboards");
    detail::check(description.Append("d"), "fuzz leaderboards");
    detail::check(reference.Append("def ref_kernel(data):\n    return data\n"),
                  "fuzz leaderboards");
    detail::check(gpus.Append(), "fuzz leaderboards");
    detail::check(gpu_values->Append("B200"), "fuzz leaderboards");
  }
  auto finish = [](arrow::ArrayBuilder& builder) {
    return detail::value_or_throw(builder.Finish(), "fuzz leaderboards");
  };
  const auto schema = arrow::schema(
      {arrow::field("id", arrow::int64()), arrow::field("name", arrow::large_utf8()),
       arrow::field("deadline", deadline.type()), arrow::field("lang", arrow::large_utf8()),
       arrow::field("description", arrow::large_utf8()),
       arrow::field("reference", arrow::large_utf8()),
       arrow::field("gpu_types", arrow::list(arrow::utf8()))});
  const auto table =
      arrow::Table::Make(schema, {finish(id), finish(name), finish(deadline), finish(lang),
                                  finish(description), finish(reference), finish(gpus)});
  detail::write_parquet(*table, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kj::fuzz::ScratchDir scratch;
  static const std::filesystem::path leaderboards = [] {
    const auto path = scratch.path() / "leaderboards.parquet";
    write_leaderboards(path);
    return path;
  }();
  static std::unique_ptr<kj::store::Store> store = kj::store::open_store("sqlite::memory:");
  const std::filesystem::path file = scratch.path() / "fuzzed.parquet";
  kj::fuzz::write_file(file, kj::fuzz::as_text(data, size));
  const std::filesystem::path files[] = {leaderboards, file};
  try {
    const auto counts = kj::data::import_kernelbot(*store, files, false);
    // Imported submissions stay in a store; a fresh one keeps every input's work the same.
    if (counts.submissions_added > 0) {
      store = kj::store::open_store("sqlite::memory:");
    }
  } catch (const kj::data::DataError&) {
  } catch (const kj::store::StoreError&) {
  }
  return 0;
}
