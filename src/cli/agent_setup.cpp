#include "cli/agent_setup.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kj::cli {
namespace fs = std::filesystem;

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The loop, shared by AGENTS.md and the skill. @KJ@, @PROBLEM@ and @LEADERBOARD@ are filled in.
// Every command the agent is told to run is in a ```sh block, one command a line.
constexpr const char* kLoop = R"(## The loop

The problem is `@PROBLEM@`: `task.yml` (tests, benchmarks, tolerances), `reference.py` (the
PyTorch reference `ref_kernel` and the input generator), `template.py` (the signature to write).
Your program defines `custom_kernel(data)` returning what `ref_kernel(data)` returns.

1. Read the problem as the judge reads it, and start from its template:

   ```sh
   @KJ@ problem show @PROBLEM@
   cp @PROBLEM@/template.py submission.py
   ```

2. Check that it is correct (every test case, against the reference):

   ```sh
   @KJ@ eval @PROBLEM@ submission.py --mode test --json > result.json
   ```

   `result.json` is one JSON object: `verdict` (`accepted`, `wrong_answer`, `compile_error`,
   `runtime_error`, `time_limit`, `memory_limit`, `output_limit`, `security_violation`,
   `internal_error`), `reason` (one line), `tests` (per case: `spec`, `status`, `message`, and
   `error` with `type`, `message`, `traceback` when it raised), `stdout`, `stderr`. The exit
   status is 0 when accepted, 1 when rejected, 2 for bad input, 3 for an internal error (not
   your program's fault: run it again).

3. Once accepted, time it against the reference on the same device:

   ```sh
   @KJ@ eval @PROBLEM@ submission.py --mode benchmark --json > timing.json
   ```

   `benchmarks[i].summary.median_ns` is your time for case i, `benchmarks[i].speedup` the
   reference's time over yours, `speedup` the summary over all cases (higher is better).

4. Compare a new version with your best one in one sitting (interleaved rounds, so that the
   machine's noise cancels out):

   ```sh
   @KJ@ compare @PROBLEM@ best.py submission.py --json > compare.json
   ```

   Each of `comparisons[i]` has `outcome` (`a_faster`: best.py, `b_faster`: submission.py, or
   `tie`), `ratio` (time of A over time of B) and its 99 % interval `lo`, `hi`. Keep the faster
   one as `best.py` (`cp submission.py best.py` when `b_faster`), change `submission.py`, and go
   back to step 2.

## On a judge server

With `KJ_SERVER` (the server's URL) and `KJ_TOKEN` (your API token) set:

```sh
@KJ@ submit best.py --leaderboard @LEADERBOARD@ --mode test --json
@KJ@ submit best.py --leaderboard @LEADERBOARD@ --mode leaderboard --json
@KJ@ submissions list --leaderboard @LEADERBOARD@ --json
```

`kj submit` waits for the verdict and prints the final submission as JSON; it exits like
`kj eval`. `leaderboard` mode also runs secret-seeded inputs and ranks
the submission; `kj submissions show ID --json` prints one again.

## Rules the judge enforces

- The program runs in a sandbox: no network, no files outside its directory, limited memory and
  time. Reading the reference's output, caching results between calls or timing tricks are
  caught (secret inputs, rechecks) and the submission is marked hacked.
- Only `custom_kernel` is judged; keep its signature as in the template.
- A rejected verdict's `reason`, `tests[].message` and `stderr` say what went wrong: read them
  before changing the program.
)";

constexpr const char* kAgents = R"(# Working on GPU kernels with kj

This directory is set up for writing a GPU kernel and judging it with kj (kerneljudge), locally
or on a judge server. Every kj command below prints one JSON document with `--json`. The same
instructions are the skill `.claude/skills/kj-kernel/SKILL.md`.

)";

constexpr const char* kSkill = R"(---
name: kj-kernel
description: "Write, judge, time and compare a GPU kernel with kj (kerneljudge) locally or on a judge server; use when asked to make a kernel for @PROBLEM_IN_QUOTES@ correct or faster."
---

# kj kernel loop

)";

std::string fill(const std::string& text, const AgentSetup& setup) {
  std::string leaderboard = setup.leaderboard;
  if (leaderboard.empty()) leaderboard = fs::path(setup.problem_dir).lexically_normal().filename();
  if (leaderboard.empty()) {
    leaderboard = fs::path(setup.problem_dir).lexically_normal().parent_path().filename();
  }
  // JSON's string syntax is YAML's double-quoted scalar: the path without its quotes.
  const std::string quoted = nlohmann::json(setup.problem_dir).dump();
  std::string out = replace_all(text, "@PROBLEM_IN_QUOTES@", quoted.substr(1, quoted.size() - 2));
  out = replace_all(out, "@KJ@", setup.kj);
  out = replace_all(out, "@PROBLEM@", setup.problem_dir);
  return replace_all(out, "@LEADERBOARD@", leaderboard);
}

}  // namespace

std::vector<std::pair<fs::path, std::string>> agent_files(const AgentSetup& setup) {
  return {{"AGENTS.md", fill(std::string(kAgents) + kLoop, setup)},
          {fs::path(".claude") / "skills" / "kj-kernel" / "SKILL.md",
           fill(std::string(kSkill) + kLoop, setup)}};
}

std::vector<fs::path> write_agent_files(const AgentSetup& setup) {
  const auto files = agent_files(setup);
  if (!setup.force) {
    for (const auto& [path, text] : files) {
      if (fs::exists(setup.dir / path)) {
        throw std::runtime_error((setup.dir / path).string() +
                                 " exists (--force replaces it); nothing was written");
      }
    }
  }
  std::vector<fs::path> written;
  for (const auto& [path, text] : files) {
    const fs::path out = setup.dir / path;
    fs::create_directories(out.parent_path());
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file.flush()) throw std::runtime_error("cannot write " + out.string());
    written.push_back(out);
  }
  return written;
}

}  // namespace kj::cli
