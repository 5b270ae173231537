#include "sandbox/sandbox.h"

#include <gtest/gtest.h>

using namespace kj::sandbox;

TEST(Sandbox, Smoke) {
  Spec spec;
  spec.argv = {"/bin/sh", "-c", "echo hello; echo err >&2; id; ls -la /; exit 3"};
  spec.env = {"PATH=/usr/bin:/bin"};
  for (const char* p : {"/usr", "/bin", "/lib", "/lib64"}) spec.binds.push_back(Bind{p, "", false, true});
  Outcome out = run(spec);
  EXPECT_TRUE(out.started) << out.setup_error;
  std::cerr << out.stdout_data << out.stderr_data;
  for (auto& w : out.warnings) std::cerr << "W: " << w << "\n";
  EXPECT_EQ(out.exit_code, 3);
}
