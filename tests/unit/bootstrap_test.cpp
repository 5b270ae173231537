// What kj bootstrap reads from text it does not control: a model's reply and the corpus files.
#include "bootstrap/bootstrap.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using kj::bootstrap::extract_translation;

namespace {

// Lines of `width` characters, `bytes` in all: what a very long generated block looks like.
std::string long_text(std::size_t bytes, char fill = 'x', std::size_t width = 100) {
  std::string text(bytes, fill);
  for (std::size_t i = width; i < text.size(); i += width + 1) text[i] = '\n';
  return text;
}

TEST(ExtractTranslation, TakesTheLastPythonBlockThatMentionsTriton) {
  const std::string reply =
      "First try:\n```python\nimport triton\ndef old(x):\n    return x\n```\n"
      "Better:\n```python\nimport triton\n\n@triton.jit\ndef kernel(p):\n    pass\n\n"
      "def relu(x):\n    return x\n```\nAnd a usage example:\n```python\nprint(relu(1))\n```\n";
  const auto translation = extract_translation(reply, "");
  ASSERT_TRUE(translation);
  EXPECT_NE(translation->code.find("def relu"), std::string::npos);
  EXPECT_EQ(translation->code.find("def old"), std::string::npos);
  // The last top-level definition that is not a @triton.jit kernel.
  EXPECT_EQ(translation->entrypoint, "relu");
}

TEST(ExtractTranslation, PrefersTheExpectedEntrypointAndSkipsOtherLanguages) {
  const std::string reply =
      "```cpp\nint triton_main() {}\n```\n```py\nimport triton\ndef relu_triton(x):\n    pass\n"
      "def helper(y):\n    pass\n```\n";
  const auto translation = extract_translation(reply, "relu_triton");
  ASSERT_TRUE(translation);
  EXPECT_EQ(translation->entrypoint, "relu_triton");
  EXPECT_EQ(translation->code.find("triton_main"), std::string::npos);
}

TEST(ExtractTranslation, AReplyWithoutCodeGivesNothing) {
  EXPECT_FALSE(extract_translation("I cannot help with that.", ""));
  EXPECT_FALSE(extract_translation("```python\n# only a comment\n```\n", ""));
}

// Each of these overflowed the stack of libstdc++'s default regex executor (one recursion per
// character), killing kj bootstrap with every row in flight; a model can write any of them.
TEST(ExtractTranslation, AHugeCodeBlockIsReadNotACrash) {
  const std::string body = long_text(400'000);
  const std::string reply =
      "```python\nimport triton\n" + body + "\ndef solve(x):\n    return x\n```\n";
  const auto translation = extract_translation(reply, "");
  ASSERT_TRUE(translation);
  EXPECT_EQ(translation->entrypoint, "solve");
  EXPECT_EQ(translation->code.size(), reply.size() - std::string("```python\n```\n").size());
}

TEST(ExtractTranslation, AHugeDecoratorOrSpaceRunIsReadNotACrash) {
  const std::string decorator = "@triton.jit(" + std::string(400'000, 'a') + ")\n";
  const auto decorated = extract_translation("```python\nimport triton\n" + decorator +
                                                 "def kernel(p):\n    pass\n"
                                                 "def launch(x):\n    pass\n```\n",
                                             "");
  ASSERT_TRUE(decorated);
  EXPECT_EQ(decorated->entrypoint, "launch");

  const auto spaced = extract_translation(
      "```python\nimport triton\ndef" + std::string(400'000, ' ') + "launch(x):\n    pass\n```\n",
      "launch");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->entrypoint, "launch");
}

class KernelBenchCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = fs::temp_directory_path() / "kj-bootstrap-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  fs::path dir_;
};

TEST_F(KernelBenchCorpus, AFileWithAHugeSpaceRunIsRecordedAsUnreadableNotACrash) {
  write("1_ok.py",
        "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n"
        "    return []\n");
  write("2_spaces.py", "class" + std::string(400'000, ' ') + "Mode\ndef get_inputs():\n    pass\n");
  const auto rows = kj::bootstrap::load_corpus(dir_);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].parse_error, "");
  EXPECT_NE(rows[1].parse_error.find("class Model"), std::string::npos);
}

}  // namespace
