// `kj agent-setup`: instructions for coding agents (AGENTS.md and a skill) describing how to
// iterate on a kernel with kj: write, judge, time, compare, submit, all with JSON output.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kj::cli {

struct AgentSetup {
  std::filesystem::path dir = ".";  // where AGENTS.md and the skill go
  std::string problem_dir;          // the problem to work on, as the agent will type it
  std::string kj = "kj";            // how the agent runs kj
  std::string leaderboard;          // on a judge server (default: the problem directory's name)
  bool force = false;               // replace files that exist
};

// The files agent-setup writes, relative to its directory, with their text.
std::vector<std::pair<std::filesystem::path, std::string>> agent_files(const AgentSetup& setup);

// Writes agent_files(setup) under setup.dir. Refuses (std::runtime_error naming the file) when
// one exists and force is off; nothing is written then. Returns the paths written.
std::vector<std::filesystem::path> write_agent_files(const AgentSetup& setup);

}  // namespace kj::cli
