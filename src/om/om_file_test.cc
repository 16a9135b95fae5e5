#include "om/om_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "executor/executable.h"
#include "om/om_format.h"
#include "om/om_test_util.h"

namespace oc {
namespace {

using namespace om_test;

// A strict RFC 8259 syntax check (no values kept): enough to prove OmToJson
// emits valid JSON without a JSON library in the tree.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool Valid() {
    Ws();
    if (!Value()) return false;
    Ws();
    return i_ == s_.size();
  }

 private:
  void Ws() { while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_; }
  bool Lit(const char* l) {
    size_t n = std::strlen(l);
    if (s_.compare(i_, n, l) != 0) return false;
    i_ += n;
    return true;
  }
  bool String() {
    if (s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      unsigned char c = s_[i_];
      if (c == '"') { ++i_; return true; }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) return false;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
        } else if (!std::strchr("\"\\/bfnrt", e)) {
          return false;
        }
      }
    }
    return false;
  }
  bool Number() {
    size_t start = i_;
    if (s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    if (s_[i_] == '0') ++i_;
    else while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    return i_ > start;
  }
  bool Value() {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      Ws();
      if (i_ < s_.size() && s_[i_] == '}') { ++i_; return true; }
      for (;;) {
        Ws();
        if (i_ >= s_.size() || !String()) return false;
        Ws();
        if (i_ >= s_.size() || s_[i_] != ':') return false;
        ++i_;
        Ws();
        if (!Value()) return false;
        Ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == '}') { ++i_; return true; }
        if (s_[i_] != ',') return false;
        ++i_;
      }
    }
    if (c == '[') {
      ++i_;
      Ws();
      if (i_ < s_.size() && s_[i_] == ']') { ++i_; return true; }
      for (;;) {
        Ws();
        if (!Value()) return false;
        Ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ']') { ++i_; return true; }
        if (s_[i_] != ',') return false;
        ++i_;
      }
    }
    if (c == '"') return String();
    if (c == 't') return Lit("true");
    if (c == 'f') return Lit("false");
    if (c == 'n') return Lit("null");
    return Number();
  }
  const std::string& s_;
  size_t i_ = 0;
};

OmWriteOptions TestOptions() {
  OmWriteOptions o;
  o.target = HostTarget();
  o.producer_version = "9.8.7-test";
  return o;
}

bool InStorage(const OmModel& m, const void* p) {
  auto* base = static_cast<const uint8_t*>(m.storage.get());
  auto* q = static_cast<const uint8_t*>(p);
  return q >= base && q <= base + m.file_size;
}

void ExpectModelMatches(const Graph& g, const std::vector<std::vector<uint8_t>>& prepacked,
                        const OmModel& m) {
  ASSERT_NE(m.graph, nullptr);
  ExpectGraphsEqual(g, *m.graph);
  EXPECT_EQ(m.format_version, kOmFormatVersion);
  EXPECT_EQ(m.producer_version, "9.8.7-test");
  EXPECT_EQ(m.target, HostTarget());
  EXPECT_EQ(m.source_framework, "onnx");
  ASSERT_EQ(m.prepacked.size(), g.nodes().size());
  for (size_t i = 0; i < m.prepacked.size(); ++i) {
    std::vector<uint8_t> got(m.prepacked[i].begin(), m.prepacked[i].end());
    EXPECT_EQ(got, i < prepacked.size() ? prepacked[i] : std::vector<uint8_t>()) << "node " << i;
    if (!got.empty()) {
      EXPECT_TRUE(InStorage(m, m.prepacked[i].data()));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(m.prepacked[i].data()) % 64, 0u);
    }
  }
  // Weights are used in place, 64-byte aligned.
  for (auto& v : m.graph->values()) {
    if (!v->constant || v->constant->size() == 0) continue;
    EXPECT_TRUE(InStorage(m, v->constant->data())) << v->name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v->constant->data()) % 64, 0u) << v->name;
  }
  EXPECT_TRUE(m.graph->Verify().ok()) << m.graph->Verify().ToString();
}

TEST(OmFileTest, MemoryRoundTripKeepsEverything) {
  auto g = MakeTestGraph();
  ASSERT_TRUE(g->Verify().ok()) << g->Verify().ToString();
  auto prepacked = MakePrepacked(g->nodes().size());
  auto bytes = SerializeOm(*g, prepacked, TestOptions());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectModelMatches(*g, prepacked, *m);
  EXPECT_EQ(m->file_size, bytes->size());
  EXPECT_GT(m->weights_size, 0u);
  // The copy is private: clobbering the caller's bytes changes nothing.
  std::fill(bytes->begin(), bytes->end(), 0);
  EXPECT_EQ(m->graph->FindValue("w")->constant->as<float>()[7], 8.f);
}

TEST(OmFileTest, LoadedModelExecutesWithWeightsInPlace) {
  auto g = std::make_shared<Graph>();
  g->opset_imports = {{"", 17}};
  Value* x = AddActivation(*g, "x", DataType::kFloat32, {2, 3}, -1);
  Value* w = g->AddConstant("w", DataType::kFloat32, {2, 3}, MakeData<float>({6, 5, 4, 3, 2, 1}));
  Value* a = AddActivation(*g, "a", DataType::kFloat32, {2, 3}, 0);
  Value* y = AddActivation(*g, "y", DataType::kFloat32, {2, 3}, -1);
  Value* mask = AddActivation(*g, "mask", DataType::kBool, {2, 3}, -1);
  Value* z = AddActivation(*g, "z", DataType::kFloat32, {2, 3}, -1);
  g->inputs = {x};
  g->AddNode("Identity", "copy", {x}, {a});
  g->AddNode("Dropout", "drop", {a}, {y, mask});
  g->AddNode("Identity", "weights", {w}, {z});
  g->outputs = {y, mask, z};
  g->arena_size = 64;
  g->arena_size_no_reuse = 24;
  auto bytes = SerializeOm(*g, {}, TestOptions());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto exe = Executable::Create(m->graph, m->prepacked);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());
  float in[6] = {1, -2, 3.5f, 0, 1e30f, -0.f};
  float out_y[6] = {}, out_z[6] = {};
  uint8_t out_mask[6] = {};
  const void* ins[] = {in};
  void* outs[] = {out_y, out_mask, out_z};
  ASSERT_TRUE((*exe)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
  EXPECT_EQ(std::memcmp(out_y, in, sizeof(in)), 0);  // inference Dropout is identity
  for (uint8_t b : out_mask) EXPECT_EQ(b, 1);
  const float expect_z[6] = {6, 5, 4, 3, 2, 1};
  EXPECT_EQ(std::memcmp(out_z, expect_z, sizeof(expect_z)), 0);
}

TEST(OmFileTest, SerializationIsDeterministic) {
  auto g = MakeTestGraph();
  auto a = SerializeOm(*g, {}, TestOptions());
  auto b = SerializeOm(*g, {}, TestOptions());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(OmFileTest, LoadWithoutCopyUsesCallerMemory) {
  auto g = MakeTestGraph();
  auto bytes = SerializeOm(*g, {}, TestOptions());
  ASSERT_TRUE(bytes.ok());
  TensorData aligned = TensorData::Copy(bytes->data(), bytes->size());  // 64-byte aligned
  auto m = LoadOmMemory(aligned.data(), aligned.size(), /*copy=*/false);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->storage.get(), aligned.data());
  ExpectModelMatches(*g, {}, *m);
  // A misaligned buffer cannot serve weights in place: the loader copies instead.
  std::vector<uint8_t> shifted(bytes->size() + 1);
  std::memcpy(shifted.data() + 1, bytes->data(), bytes->size());
  auto m2 = LoadOmMemory(shifted.data() + 1, bytes->size(), /*copy=*/false);
  ASSERT_TRUE(m2.ok()) << m2.status().ToString();
  EXPECT_NE(m2->storage.get(), shifted.data() + 1);
  ExpectModelMatches(*g, {}, *m2);
}

TEST(OmFileTest, FileRoundTripMapsTheFile) {
  auto g = MakeTestGraph();
  auto prepacked = MakePrepacked(g->nodes().size());
  std::string path = testing::TempDir() + "/om_file_test_roundtrip_" + std::to_string(::getpid()) + ".om";
  ASSERT_TRUE(WriteOmFile(path, *g, prepacked, TestOptions()).ok());
  auto m = LoadOmFile(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectModelMatches(*g, prepacked, *m);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<uint64_t>(f.tellg()), m->file_size);
  // The mapping outlives the file name and the OmModel: graph views keep it alive.
  std::shared_ptr<Graph> graph = m->graph;
  std::remove(path.c_str());
  m = LoadOmFile(path);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(graph->FindValue("table")->constant->as<int64_t>()[2], 1LL << 40);
}

TEST(OmFileTest, LoadFileErrorsNameThePath) {
  auto m = LoadOmFile("/nonexistent/dir/model.om");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIoError);
  EXPECT_NE(m.status().message().find("/nonexistent/dir/model.om"), std::string::npos);
  std::string path = testing::TempDir() + "/om_file_test_garbage_" + std::to_string(::getpid()) + ".om";
  { std::ofstream(path) << "this is not a model"; }
  m = LoadOmFile(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidFile);
  EXPECT_NE(m.status().message().find(path), std::string::npos);
  EXPECT_NE(m.status().message().find("magic"), std::string::npos);
  std::remove(path.c_str());
}

TEST(OmFileTest, EmptyGraphRoundTrips) {
  Graph g;
  g.name = "empty";
  g.arena_size = 0;
  auto bytes = SerializeOm(g, {}, TestOptions());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->graph->nodes().size(), 0u);
  EXPECT_EQ(m->weights_size, 0u);
  EXPECT_EQ(m->graph->name, "empty");
}

TEST(OmFileTest, WriterRejectsUnplannedOrDynamicGraphs) {
  auto g = MakeTestGraph();
  g->arena_size = -1;
  auto r = SerializeOm(*g, {}, TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);

  // Unknown dims are allowed only in a graph compiled as dynamic (no memory plan).
  g = MakeTestGraph();
  g->FindValue("x")->shape[0] = -1;
  r = SerializeOm(*g, {}, TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown dims"), std::string::npos) << r.status().message();

  g = MakeTestGraph();
  OmWriteOptions o = TestOptions();
  o.target = "Ascend910";
  r = SerializeOm(*g, {}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Ascend910"), std::string::npos);

  g = MakeTestGraph();
  g->FindValue("a")->arena_offset = 180;  // 32 bytes do not fit a 192-byte arena
  r = SerializeOm(*g, {}, TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("arena"), std::string::npos) << r.status().message();

  g = MakeTestGraph();
  g->AddNode("NoSuchOp", "mystery", {g->FindValue("x")}, {AddActivation(*g, "m", DataType::kFloat32, {1}, 0)});
  r = SerializeOm(*g, {}, TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("NoSuchOp"), std::string::npos);
}

TEST(OmFileTest, HostTargetIsHostOrEmptyTarget) {
  auto g = MakeTestGraph();
  OmWriteOptions o = TestOptions();
  o.target = "host";
  auto bytes = SerializeOm(*g, {}, o);
  ASSERT_TRUE(bytes.ok());
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->target, HostTarget());
  std::set<std::string> known = {"x86_64-avx512", "x86_64-avx2", "x86_64", "aarch64"};
  EXPECT_TRUE(known.count(HostTarget())) << HostTarget();
}

TEST(OmFileTest, JsonDumpIsValidAndHasNoWeightBytes) {
  auto g = MakeTestGraph();
  auto prepacked = MakePrepacked(g->nodes().size());
  auto bytes = SerializeOm(*g, prepacked, TestOptions());
  ASSERT_TRUE(bytes.ok());
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok());
  std::string json = OmToJson(*m);
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  for (const char* needle : {"\"format_version\": 1", "\"target\"", "\"identity_with_attrs\"",
                             "\"tensor_attr\"", "\"data_offset\"", "\"prepacked_size\":100",
                             "\"dim_params\": [\"batch\",\"\"]", "\"kind\": \"constant\"",
                             "\"arena_size_no_reuse\": 256", "\"9.8.7-test\"",
                             "\"quote\\\"and\\\\slash\": \"line\\nbreak\\ttab\""})
    EXPECT_NE(json.find(needle), std::string::npos) << needle << "\n" << json;
  // The binary string attribute is escaped, not dumped raw.
  EXPECT_NE(json.find("bytes\\u0000\\u00ff\\\"<>"), std::string::npos) << json;
}

TEST(OmFileTest, SummaryListsIoOpsAndSizes) {
  auto g = MakeTestGraph();
  auto bytes = SerializeOm(*g, {}, TestOptions());
  ASSERT_TRUE(bytes.ok());
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok());
  std::string s = OmSummary(*m);
  for (std::string needle : {std::string("format version:   1"), std::string("9.8.7-test"),
                             HostTarget(), std::string("x: float32 [2,4]"),
                             std::string("mask: bool [2,4]"), std::string("Dropout: 2"),
                             std::string("192 bytes (without reuse: 256 bytes)"),
                             std::string("weights size:     ") + std::to_string(m->weights_size)})
    EXPECT_NE(s.find(needle), std::string::npos) << needle << "\n" << s;
}

TEST(OmFormatTest, Crc32cMatchesKnownVectors) {
  using om_internal::Crc32c;
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  // Chaining and every alignment/length agree with one pass.
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
  uint32_t whole = Crc32c(data.data(), data.size());
  for (size_t split : {0, 1, 7, 8, 9, 500, 999, 1000})
    EXPECT_EQ(Crc32c(data.data() + split, data.size() - split, Crc32c(data.data(), split)), whole);
}

// Bit-at-a-time CRC-32C, independent of the table and hardware paths.
uint32_t Crc32cBitwise(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

TEST(OmFormatTest, Crc32cLargeBuffersMatchBitwise) {
  // Long enough for the three-stream path (blocks of 3 x 4096 bytes), at odd
  // starts and lengths so that the head, the joined blocks and the tail all run.
  using om_internal::Crc32c;
  std::vector<uint8_t> data(3 * 4096 * 9 + 777);
  uint32_t x = 12345;
  for (auto& b : data) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t start : {0, 1, 5, 8}) {
    for (size_t len : {size_t{3 * 4096 * 4}, size_t{3 * 4096 * 4 + 3}, data.size() - start - 11,
                       data.size() - start}) {
      EXPECT_EQ(Crc32c(data.data() + start, len), Crc32cBitwise(data.data() + start, len))
          << "start " << start << " length " << len;
    }
  }
  const size_t half = 3 * 4096 * 5 + 9;
  EXPECT_EQ(Crc32c(data.data() + half, data.size() - half, Crc32c(data.data(), half)),
            Crc32cBitwise(data.data(), data.size()));
}

TEST(OmFormatTest, TargetCompatibility) {
  using om_internal::CheckTargetCompatible;
  EXPECT_TRUE(CheckTargetCompatible("x86_64-avx2", "x86_64-avx512").ok());
  EXPECT_TRUE(CheckTargetCompatible("x86_64", "x86_64-avx2").ok());
  EXPECT_TRUE(CheckTargetCompatible("x86_64-avx512", "x86_64-avx512").ok());
  EXPECT_TRUE(CheckTargetCompatible("aarch64", "aarch64").ok());
  Status st = CheckTargetCompatible("x86_64-avx512", "x86_64-avx2");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("x86_64-avx512"), std::string::npos);
  EXPECT_NE(st.message().find("x86_64-avx2"), std::string::npos);
  st = CheckTargetCompatible("aarch64", "x86_64-avx512");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("aarch64"), std::string::npos);
  EXPECT_NE(st.message().find("x86_64-avx512"), std::string::npos);
  EXPECT_FALSE(CheckTargetCompatible("x86_64-sse9", "x86_64-avx512").ok());
  EXPECT_FALSE(CheckTargetCompatible("", "x86_64").ok());
}

TEST(OmFormatTest, JsonStringEscapesEverythingThatNeedsIt) {
  using om_internal::JsonString;
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  EXPECT_EQ(JsonString("\xc3\xa9"), "\"\xc3\xa9\"");             // valid UTF-8 kept
  EXPECT_EQ(JsonString("\xe2\x82\xac"), "\"\xe2\x82\xac\"");     // euro sign
  EXPECT_EQ(JsonString("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
  EXPECT_EQ(JsonString("\xff"), "\"\\u00ff\"");                  // invalid byte
  EXPECT_EQ(JsonString("\xc3"), "\"\\u00c3\"");                  // truncated sequence
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\u00c0\\u00af\"");       // overlong
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // surrogate
  EXPECT_EQ(JsonString(std::string("\0", 1)), "\"\\u0000\"");
}

}  // namespace
}  // namespace oc
