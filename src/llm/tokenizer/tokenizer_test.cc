// The Tokenizer's C++ contract on a small hand-written tokenizer.json whose
// ids are worked out by hand (tests/python/test_llm_tokenizer.py compares real
// files with Hugging Face).
#include "llm/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <thread>

namespace oc::llm {
namespace {

// a=0 b=1 ab=2 c=3 abc=4 <0xEF>=5 <0xBF>=6 <0xBD>=7 <unk>=8, added <eos>=9.
constexpr const char* kJson = R"({
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 9, "content": "<eos>", "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "WhitespaceSplit"},
  "post_processor": {"type": "TemplateProcessing",
                     "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<eos>", "type_id": 0}}],
                     "special_tokens": {"<eos>": {"id": "<eos>", "ids": [9], "tokens": ["<eos>"]}}},
  "decoder": null,
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4, "<0xEF>": 5, "<0xBF>": 6, "<0xBD>": 7, "<unk>": 8},
            "merges": ["a b", ["ab", "c"]]}
})";

Tokenizer Make() {
  auto tok = Tokenizer::FromJson(kJson, R"({"eos_token": "<eos>"})", "test/tokenizer.json");
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

TEST(LlmTokenizer, EncodesWithMergesByteFallbackAndFusedUnknowns) {
  Tokenizer tok = Make();
  EXPECT_EQ(tok.Encode("abc ab ca", false), (std::vector<int32_t>{4, 2, 3, 0}));
  EXPECT_EQ(tok.Encode("abc", true), (std::vector<int32_t>{4, 9}));
  EXPECT_EQ(tok.Encode("a\xEF\xBF\xBD", false), (std::vector<int32_t>{0, 5, 6, 7}));  // U+FFFD has its bytes
  EXPECT_EQ(tok.Encode("xyz", false), (std::vector<int32_t>{8}));                     // one fused <unk>
  EXPECT_EQ(tok.Encode("ab<eos>c", false), (std::vector<int32_t>{2, 9, 3}));
  EXPECT_EQ(tok.Encode("", true), (std::vector<int32_t>{9}));
}

TEST(LlmTokenizer, InvalidUtf8IsReplacedNotRefused) {
  Tokenizer tok = Make();
  // Each maximal invalid subsequence becomes one U+FFFD.
  EXPECT_EQ(tok.Encode("ab\xFF", false), tok.Encode("ab\xEF\xBF\xBD", false));
  EXPECT_EQ(tok.Encode("a\xE2\x82", false), tok.Encode("a\xEF\xBF\xBD", false));
  EXPECT_EQ(tok.Encode("\xC0\x80", false), tok.Encode("\xEF\xBF\xBD\xEF\xBF\xBD", false));
}

TEST(LlmTokenizer, DecodeNamesAnIdOutsideTheVocabulary) {
  Tokenizer tok = Make();
  auto ok = tok.Decode(std::vector<int32_t>{4, 9}, false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "abc <eos>");  // no decoder: tokens joined by spaces
  EXPECT_EQ(*tok.Decode(std::vector<int32_t>{4, 9}, true), "abc");
  auto bad = tok.Decode(std::vector<int32_t>{1, 42}, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(bad.status().message().find("id 42 at position 1"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(tok.Decode(std::vector<int32_t>{-1}, false).ok());
}

TEST(LlmTokenizer, LooksUpTokensAndConfig) {
  Tokenizer tok = Make();
  EXPECT_EQ(tok.TokenToId("abc"), 4);
  EXPECT_EQ(tok.TokenToId("<eos>"), 9);
  EXPECT_EQ(tok.TokenToId("nope"), std::nullopt);
  EXPECT_EQ(tok.IdToToken(2), "ab");
  EXPECT_EQ(tok.IdToToken(100), std::nullopt);
  EXPECT_TRUE(tok.IsSpecial(9));
  EXPECT_FALSE(tok.IsSpecial(4));
  EXPECT_EQ(tok.eos_id(), 9);
  EXPECT_EQ(tok.bos_id(), std::nullopt);
  EXPECT_EQ(tok.vocab_size(), 10u);
}

TEST(LlmTokenizer, ErrorsNameTheFileAndField) {
  auto bad = Tokenizer::FromJson("{\"model\": {\"type\": \"Unigram\"}}", "", "m/tokenizer.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(bad.status().message().find("m/tokenizer.json: model.type"), std::string::npos);
  EXPECT_NE(bad.status().message().find("Unigram"), std::string::npos);
  auto corrupt = Tokenizer::FromJson("{\"model\": ", "", "c.json");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("c.json: not valid JSON"), std::string::npos);
  auto missing = Tokenizer::Load("/nonexistent/folder");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto cfg = Tokenizer::FromJson(kJson, R"({"bos_token": 5})", "t/tokenizer.json");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("t/tokenizer_config.json: bos_token"), std::string::npos);
}

TEST(LlmTokenizer, EncodesConcurrently) {
  Tokenizer tok = Make();
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back(std::string(i % 7, 'a') + "bc ab" + std::string(i % 5, 'c') + " abc");
  std::vector<std::vector<int32_t>> want;
  for (auto& t : texts) want.push_back(tok.Encode(t, true));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 20; ++rep)
        for (size_t i = 0; i < texts.size(); ++i) mismatches[k] += tok.Encode(texts[i], true) != want[i];
    });
  for (auto& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace oc::llm
