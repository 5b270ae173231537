// The bootstrap pipeline: PyTorch programs -> Triton translations proposed by a model -> rows
// verified by the judge, in the boostrap_triton schema plus our columns (docs/bootstrap.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "judge/judge.h"

namespace kj::bootstrap {

// One PyTorch program of the corpus. kind "function": pt_code defines the function
// `entrypoint`, called by tests_code (or fed by get_inputs()); kind "module": a KernelBench-style
// file (class Model, get_inputs, get_init_inputs).
struct CorpusRow {
  std::string row_id;  // the row's `id` column, else a hash of its code (stable across runs)
  std::string origin;  // where it came from: "corpus.jsonl:7", "level1/19_ReLU.py"
  std::string pt_code;
  std::string entrypoint;
  std::string tests_code;
  std::string kind = "function";
  std::string parse_error;  // non-empty: the row could not be read; it is recorded, not run
};

// Reads a JSONL file (one object a line: pt_code, entrypoint or pt_entrypoint, optional
// tests_code and id) or a directory of KernelBench-style .py files (sorted by name). A row that
// does not parse comes back with parse_error set. Throws std::runtime_error when `path` cannot
// be read at all, or is a parquet file (convert it to JSONL first; docs/bootstrap.md).
std::vector<CorpusRow> load_corpus(const std::filesystem::path& path);

struct ChatMessage {
  std::string role;  // user or assistant
  std::string content;
};

struct TranslatorReply {
  std::string content;
  std::string reasoning;      // the reply's reasoning part, when the endpoint returns one
  std::string finish_reason;  // stop, length, ...
};

// A translator failed for good (after its retries): the row is not finished and a rerun retries.
class TranslatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Proposes a reply to a conversation. Implementations are safe to call from several threads.
class Translator {
 public:
  virtual ~Translator() = default;
  virtual TranslatorReply complete(const std::vector<ChatMessage>& messages) = 0;
};

// An OpenAI-compatible chat-completions endpoint: POST {base_url}/chat/completions.
struct ChatEndpoint {
  std::string base_url;  // http://host:port/v1 (plain HTTP in this build)
  std::string model;
  std::string api_key_env;  // name of the environment variable holding the key; empty: none
  double temperature = 0.0;
  int max_tokens = 8192;
  std::chrono::seconds timeout{600};        // per request
  int retries = 5;                          // more attempts on 429, 5xx and connection errors
  std::chrono::milliseconds backoff{2000};  // first wait; doubles each retry, Retry-After wins
};
std::unique_ptr<Translator> make_chat_translator(const ChatEndpoint& endpoint);

// Any command (run by /bin/sh -c): the latest user message on stdin, the reply on stdout. It
// also sees KJ_TRANSLATOR_TURN (1, 2, ...) and KJ_TRANSLATOR_MESSAGES (a file holding the
// whole conversation as JSON).
std::unique_ptr<Translator> make_command_translator(std::string command,
                                                    std::chrono::seconds timeout);

// The Triton code in a reply (the last ```python block that mentions triton, else the last
// block, else the whole reply when it looks like code) and its entrypoint: `expected` when the
// code defines it, else the last top-level function or class not decorated with @triton.jit.
struct Translation {
  std::string code;
  std::string entrypoint;
};
std::optional<Translation> extract_translation(std::string_view reply, std::string_view expected);

// The prompt used when no template file is given. Placeholders: {{pt_code}}, {{entrypoint}},
// {{triton_entrypoint}}, {{tests_code}}.
std::string default_prompt_template();
std::string render_prompt(std::string_view prompt_template, const CorpusRow& row);

struct BootstrapOptions {
  std::filesystem::path out_dir;  // journal.jsonl, rows.jsonl, summary.json (and rows.parquet)
  std::string prompt_template;
  int turns = 3;          // model turns per row: the first plus up to turns-1 repairs
  int random_inputs = 4;  // seeded random variants of the tests' calls, beside the calls
  int concurrency = 4;    // rows in flight
  bool timing = true;     // time accepted translations against the PyTorch entrypoint
  nlohmann::json timing_settings = nlohmann::json::object();  // passed to the harness
  std::chrono::seconds test_timeout{300};
  std::chrono::seconds benchmark_timeout{600};
  std::uint64_t memory_bytes = 8ULL << 30;
  bool screen = true;  // the judge's static screen on translations
  // Each row's evaluations are forked from a zygote of its lane (docs/sandbox.md, "Zygote"),
  // not started as interpreters of their own.
  bool zygote = true;
  // A translation's compiled kernels are kept from its test for its timing (and for a later
  // bootstrap of the same code by this account): docs/sandbox.md, "Compile cache".
  bool compile_cache = true;
};

struct BootstrapSummary {
  std::size_t rows = 0;
  std::size_t unparsed = 0;
  std::size_t pt_code_runs = 0;
  std::size_t translated = 0;  // rows whose PyTorch ran and that reached the translator
  std::size_t pass_at_1 = 0;
  std::size_t pass_at_n = 0;
  std::size_t translator_errors = 0;  // not finished: a rerun retries them
  std::size_t resumed = 0;            // finished rows taken from the journal
  std::vector<double> speedups;       // accepted rows that were timed
  nlohmann::json to_json() const;
  std::string render() const;
};

// Runs every row not already finished in out_dir/journal.jsonl; appends each finished row to
// the journal as soon as it is done; then writes out_dir/rows.jsonl (corpus order, one row per
// corpus row) and summary.json. `progress` gets one line per finished row.
BootstrapSummary run_bootstrap(const std::vector<CorpusRow>& corpus, Translator& translator,
                               const judge::Environment& environment,
                               const BootstrapOptions& options, std::ostream& progress);

}  // namespace kj::bootstrap
