// GgufFile::Parse on files written here byte by byte from the GGUF spec: every
// metadata value type, nested arrays, a custom alignment, Q8_0 / Q4_0 blocks
// built from known quants (the expected values follow from the spec's
// formulas), and every prefix of the file refused without a crash.
#include "llm/model/gguf.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llm/model/checkpoint.h"

#include <cstring>
#include <string>
#include <vector>

#include "ops/cpu/common/cast_util.h"

namespace oc::llm {
namespace {

struct Writer {
  std::vector<uint8_t> b;
  template <typename T>
  void Put(T v) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    b.insert(b.end(), tmp, tmp + sizeof(T));
  }
  void Str(const std::string& s) {
    Put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void Pad(size_t align) {
    while (b.size() % align) b.push_back(0);
  }
};

constexpr uint16_t kHalfOne = 0x3C00, kHalfQuarter = 0x3400;  // 1.0 and 0.25 in IEEE fp16

std::vector<uint8_t> MakeFile(std::vector<int8_t>* q8, std::vector<uint8_t>* q4) {
  Writer w;
  w.b = {'G', 'G', 'U', 'F'};
  w.Put<uint32_t>(3);
  w.Put<uint64_t>(2);  // tensors
  w.Put<uint64_t>(6);  // metadata
  w.Str("general.alignment");
  w.Put<uint32_t>(4);
  w.Put<uint32_t>(64);
  w.Str("a.i16");
  w.Put<uint32_t>(3);
  w.Put<int16_t>(-300);
  w.Str("a.f64");
  w.Put<uint32_t>(12);
  w.Put<double>(2.5);
  w.Str("a.bool");
  w.Put<uint32_t>(7);
  w.Put<uint8_t>(1);
  w.Str("a.str");
  w.Put<uint32_t>(8);
  w.Str("héllo");
  w.Str("a.nested");  // [[1, 2], [3]] as arrays of uint64
  w.Put<uint32_t>(9);
  w.Put<uint32_t>(9);
  w.Put<uint64_t>(2);
  w.Put<uint32_t>(10);
  w.Put<uint64_t>(2);
  w.Put<uint64_t>(1);
  w.Put<uint64_t>(2);
  w.Put<uint32_t>(10);
  w.Put<uint64_t>(1);
  w.Put<uint64_t>(3);
  // q8: [1, 32] Q8_0 at offset 0 (34 bytes); q4: [1, 32] Q4_0 at offset 64 (18 bytes).
  w.Str("q8");
  w.Put<uint32_t>(2);
  w.Put<uint64_t>(32);
  w.Put<uint64_t>(1);
  w.Put<uint32_t>(8);
  w.Put<uint64_t>(0);
  w.Str("q4");
  w.Put<uint32_t>(1);
  w.Put<uint64_t>(32);
  w.Put<uint32_t>(2);
  w.Put<uint64_t>(64);
  w.Pad(64);
  w.Put<uint16_t>(kHalfQuarter);
  for (int j = 0; j < 32; ++j) {
    q8->push_back(static_cast<int8_t>(j * 7 - 100));
    w.Put<int8_t>(q8->back());
  }
  w.Pad(64);
  w.Put<uint16_t>(kHalfOne);
  for (int j = 0; j < 32; ++j) q4->push_back(static_cast<uint8_t>((j * 5) % 16));
  for (int j = 0; j < 16; ++j) w.Put<uint8_t>(static_cast<uint8_t>((*q4)[j] | (*q4)[j + 16] << 4));
  return w.b;
}

TEST(GgufTest, ReadsMetadataOfEachKindAndDequantizesBlocksAsTheSpecSays) {
  std::vector<int8_t> q8;
  std::vector<uint8_t> q4;
  const auto bytes = MakeFile(&q8, &q4);
  auto g = GgufFile::Parse(bytes, "t.gguf");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->version(), 3u);
  EXPECT_EQ((*g)->alignment(), 64u);
  EXPECT_EQ((*g)->data_offset() % 64, 0u);
  EXPECT_EQ((*g)->Find("a.i16")->value.get<int>(), -300);
  EXPECT_EQ((*g)->Find("a.f64")->value.get<double>(), 2.5);
  EXPECT_EQ((*g)->Find("a.bool")->value.get<bool>(), true);
  EXPECT_EQ((*g)->Find("a.str")->value.get<std::string>(), "héllo");
  EXPECT_EQ((*g)->Find("a.nested")->value.dump(), "[[1,2],[3]]");
  EXPECT_EQ((*g)->Find("a.nested")->elem_type, GgufValueType::kArray);

  const GgufTensor* t8 = (*g)->Tensor("q8");
  ASSERT_NE(t8, nullptr);
  EXPECT_EQ(t8->shape(), (std::vector<int64_t>{1, 32}));
  std::vector<float> out(32);
  ASSERT_TRUE(DequantizeGguf(*t8, out.data()).ok());
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], q8[j] * 0.25f) << j;

  const GgufTensor* t4 = (*g)->Tensor("q4");
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(t4->offset, (*g)->data_offset() + 64);
  ASSERT_TRUE(DequantizeGguf(*t4, out.data()).ok());
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], static_cast<float>(q4[j]) - 8.0f) << j;
}

TEST(GgufTest, EveryPrefixIsRefusedAsInvalidFile) {
  std::vector<int8_t> q8;
  std::vector<uint8_t> q4;
  const auto bytes = MakeFile(&q8, &q4);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    auto g = GgufFile::Parse(prefix, "t.gguf");
    ASSERT_FALSE(g.ok()) << "prefix of " << n << " bytes";
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidFile) << n << ": " << g.status().message();
    EXPECT_NE(g.status().message().find("t.gguf"), std::string::npos);
  }
}

TEST(GgufTest, RefusesCountsLargerThanTheFileBeforeAllocating) {
  std::vector<int8_t> q8;
  std::vector<uint8_t> q4;
  auto bytes = MakeFile(&q8, &q4);
  std::vector<uint8_t> bad = bytes;
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bad.data() + 8, &huge, 8);  // tensor_count
  auto g = GgufFile::Parse(bad, "t.gguf");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("cannot fit"), std::string::npos) << g.status().message();
  // A string length past the end (the first key's length field, offset 24).
  bad = bytes;
  std::memcpy(bad.data() + 24, &huge, 8);
  g = GgufFile::Parse(bad, "t.gguf");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("metadata key #0 at offset 24"), std::string::npos) << g.status().message();
}

// A llama GGUF with one Q8_0 q projection (2 heads of 4, 32 inputs): the raw
// rows ReadGgufRows hands out, taken in its row order, dequantize to what Read
// gives (the un-permuted Hugging Face rows).
TEST(GgufTest, RawRowsInTheirOrderAreTheRowsReadGives) {
  Writer w;
  w.b = {'G', 'G', 'U', 'F'};
  w.Put<uint32_t>(3);
  w.Put<uint64_t>(2);
  w.Put<uint64_t>(5);
  w.Str("general.architecture");
  w.Put<uint32_t>(8);
  w.Str("llama");
  for (const auto& [k, v] : {std::pair{"llama.embedding_length", 32}, std::pair{"llama.block_count", 1},
                              std::pair{"llama.feed_forward_length", 64}, std::pair{"llama.attention.head_count", 2}}) {
    w.Str(k);
    w.Put<uint32_t>(4);
    w.Put<uint32_t>(v);
  }
  w.Str("token_embd.weight");  // [4, 32] F32
  w.Put<uint32_t>(2);
  w.Put<uint64_t>(32);
  w.Put<uint64_t>(4);
  w.Put<uint32_t>(0);
  w.Put<uint64_t>(0);
  w.Str("blk.0.attn_q.weight");  // [8, 32] Q8_0
  w.Put<uint32_t>(2);
  w.Put<uint64_t>(32);
  w.Put<uint64_t>(8);
  w.Put<uint32_t>(8);
  w.Put<uint64_t>(512);
  w.Pad(32);
  for (int i = 0; i < 128; ++i) w.Put<float>(0.0f);
  for (int r = 0; r < 8; ++r) {
    w.Put<uint16_t>(kHalfOne);
    for (int j = 0; j < 32; ++j) w.Put<int8_t>(static_cast<int8_t>(r * 10 + j));
  }
  const auto path = (std::filesystem::temp_directory_path() / "oc_gguf_rows_test.gguf").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(w.b.data()),
                                              static_cast<std::streamsize>(w.b.size()));
  auto ck = Checkpoint::Open(path);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  EXPECT_EQ((*ck)->config()["num_attention_heads"], 2);
  const std::string name = "model.layers.0.self_attn.q_proj.weight";
  auto rows = (*ck)->ReadGgufRows(name, {8, 32});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->type, static_cast<uint32_t>(GgmlType::kQ8_0));
  EXPECT_EQ(rows->rows, 8);
  EXPECT_EQ(rows->row_bytes, 34u);
  // Head h, half s, index i of Hugging Face is stored at h * 4 + 2 * i + s.
  EXPECT_EQ(rows->row_order, (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  auto read = (*ck)->Read(name, {8, 32});
  ASSERT_TRUE(read.ok()) << read.status().message();
  for (int r = 0; r < 8; ++r) {
    const uint8_t* row = rows->data.data() + rows->row_order[r] * rows->row_bytes;
    for (int j = 0; j < 32; ++j)
      EXPECT_EQ((*read)[r * 32 + j], static_cast<float>(static_cast<int8_t>(row[2 + j]))) << r << "," << j;
  }
  auto wrong = (*ck)->Read(name, {32, 8});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("has shape [8, 32], expected [32, 8]"), std::string::npos)
      << wrong.status().message();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace oc::llm
