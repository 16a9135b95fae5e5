// The reader on hostile input: truncation, bit flips, wrong magic/version/
// target, random bytes, and well-formed FlatBuffers whose contents lie.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "om/om_file.h"
#include "om/om_format.h"
#include "om/om_test_util.h"
#include "om_schema_generated.h"

namespace oc {
namespace {

namespace fb = ::oc::om;
using namespace om_test;
using om_internal::LoadLE32;
using om_internal::Reseal;
using om_internal::StoreLE32;

std::vector<uint8_t> SmallModel() {
  auto g = MakeTestGraph();
  OmWriteOptions o;
  o.target = HostTarget();
  o.producer_version = "test";
  auto bytes = SerializeOm(*g, MakePrepacked(g->nodes().size()), o);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

Status Load(const std::vector<uint8_t>& b) {
  return LoadOmMemory(b.data(), b.size()).status();
}

bool Contains(const Status& st, const std::string& s) {
  return st.message().find(s) != std::string::npos;
}

TEST(OmRobustnessTest, EveryTruncationFails) {
  std::vector<uint8_t> file = SmallModel();
  ASSERT_TRUE(Load(file).ok());
  for (size_t len = 0; len < file.size(); ++len) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + len);
    Status st = Load(cut);
    ASSERT_FALSE(st.ok()) << "length " << len;
    ASSERT_EQ(st.code(), StatusCode::kInvalidFile) << "length " << len << ": " << st.message();
  }
  std::vector<uint8_t> longer = file;
  longer.push_back(0);
  Status st = Load(longer);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "trailing")) << st.message();
}

TEST(OmRobustnessTest, EverySingleBitFlipIsDetected) {
  std::vector<uint8_t> file = SmallModel();
  for (size_t pos = 0; pos < file.size(); ++pos) {
    // All 8 bits in the header; one (rotating) bit per byte elsewhere.
    int bits_lo = pos < om_internal::kOmHeaderSize ? 0 : static_cast<int>(pos % 8);
    int bits_hi = pos < om_internal::kOmHeaderSize ? 8 : bits_lo + 1;
    for (int bit = bits_lo; bit < bits_hi; ++bit) {
      std::vector<uint8_t> bad = file;
      bad[pos] ^= static_cast<uint8_t>(1u << bit);
      Status st = Load(bad);
      ASSERT_FALSE(st.ok()) << "bit " << bit << " of byte " << pos;
      ASSERT_EQ(st.code(), StatusCode::kInvalidFile) << pos << ": " << st.message();
      if (pos >= om_internal::kOmHeaderSize) {
        ASSERT_TRUE(Contains(st, "checksum")) << pos << ": " << st.message();
      }
    }
  }
}

TEST(OmRobustnessTest, WrongMagicIsReported) {
  std::vector<uint8_t> file = SmallModel();
  file[0] = 'X';
  Status st = Load(file);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "magic")) << st.message();
  // A protobuf or other format gives the same clear message.
  std::string onnx_like = "\x08\x07\x12\x07pytorch";
  st = LoadOmMemory(onnx_like.data(), onnx_like.size()).status();
  EXPECT_TRUE(Contains(st, "magic")) << st.message();
}

TEST(OmRobustnessTest, WrongVersionNamesBothVersions) {
  std::vector<uint8_t> file = SmallModel();
  StoreLE32(file.data() + om_internal::kOffVersion, 7);
  Status st = Load(file);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "version 7")) << st.message();
  EXPECT_TRUE(Contains(st, StrCat("version ", kOmFormatVersion))) << st.message();
  Reseal(file);  // still refused with intact checksums
  EXPECT_TRUE(Contains(Load(file), "version 7"));
}

TEST(OmRobustnessTest, WrongTargetNamesBothTargets) {
  std::string other = HostTarget() == "aarch64" ? "x86_64" : "aarch64";
  auto g = MakeTestGraph();
  OmWriteOptions o;
  o.target = other;  // cross-compiling is allowed; loading here is not
  auto bytes = SerializeOm(*g, {}, o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Status st = Load(*bytes);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_TRUE(Contains(st, other)) << st.message();
  EXPECT_TRUE(Contains(st, HostTarget())) << st.message();
  if (HostTarget() != "x86_64-avx512" && HostTarget().rfind("x86_64", 0) == 0) {
    o.target = "x86_64-avx512";
    bytes = SerializeOm(*g, {}, o);
    ASSERT_TRUE(bytes.ok());
    st = Load(*bytes);
    EXPECT_EQ(st.code(), StatusCode::kNotSupported);
    EXPECT_TRUE(Contains(st, "lacks avx512")) << st.message();
  }
}

TEST(OmRobustnessTest, HeaderFieldsAreCheckedEvenWithValidChecksums) {
  std::vector<uint8_t> good = SmallModel();
  auto with = [&](size_t off, uint64_t v, bool wide) {
    std::vector<uint8_t> f = good;
    if (wide) om_internal::StoreLE64(f.data() + off, v);
    else StoreLE32(f.data() + off, static_cast<uint32_t>(v));
    Reseal(f);
    return Load(f);
  };
  EXPECT_TRUE(Contains(with(om_internal::kOffFlags, 1, false), "flags"));
  EXPECT_TRUE(Contains(with(om_internal::kOffHeaderSize, 64, false), "header size"));
  EXPECT_TRUE(Contains(with(om_internal::kOffFileSize, good.size() + 64, true), "file size"));
  EXPECT_TRUE(Contains(with(om_internal::kOffFbOffset, 132, true), "graph section offset"));
  EXPECT_TRUE(Contains(with(om_internal::kOffFbSize, ~0ull, true), "graph section size"));
  EXPECT_TRUE(Contains(with(om_internal::kOffBlobOffset, 1ull << 63, true), "blob offset"));
  EXPECT_TRUE(Contains(with(om_internal::kOffBlobSize, 1, true), "blob size"));
  EXPECT_TRUE(Contains(with(om_internal::kOffReserved + 3, 5, false), "reserved"));
  std::vector<uint8_t> f = good;
  std::memset(f.data() + om_internal::kOffTarget, 'x', om_internal::kOmTargetFieldSize);
  Reseal(f);
  EXPECT_TRUE(Contains(Load(f), "not NUL-terminated"));
  f = good;
  f[om_internal::kOffTarget + 31] = 'x';
  Reseal(f);
  EXPECT_TRUE(Contains(Load(f), "target field padding"));
  f = good;
  f[om_internal::kOffTarget] = '\n';
  Reseal(f);
  EXPECT_TRUE(Contains(Load(f), "non-printable"));
}

TEST(OmRobustnessTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(1234);
  std::vector<uint8_t> good = SmallModel();
  for (int iter = 0; iter < 3000; ++iter) {
    size_t n = rng() % 600;
    std::vector<uint8_t> buf(n);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    if (iter % 3 == 1 && n >= 8) std::memcpy(buf.data(), om_internal::kOmMagic, 8);
    if (iter % 3 == 2 && n >= 256) {
      // A valid header in front of garbage, so the FlatBuffers verifier sees it.
      std::memcpy(buf.data(), good.data(), om_internal::kOmHeaderSize);
      uint64_t blob_off = n / 64 * 64;
      om_internal::StoreLE64(buf.data() + om_internal::kOffFbSize, blob_off - om_internal::kOmHeaderSize);
      om_internal::StoreLE64(buf.data() + om_internal::kOffBlobOffset, blob_off);
      om_internal::StoreLE64(buf.data() + om_internal::kOffBlobSize, n - blob_off);
      om_internal::StoreLE64(buf.data() + om_internal::kOffFileSize, n);
      Reseal(buf);
    }
    EXPECT_FALSE(Load(buf).ok());
  }
}

TEST(OmRobustnessTest, MutatedGraphSectionWithValidChecksumsNeverCrashes) {
  std::vector<uint8_t> good = SmallModel();
  uint64_t fb_off = om_internal::LoadLE64(good.data() + om_internal::kOffFbOffset);
  uint64_t fb_size = om_internal::LoadLE64(good.data() + om_internal::kOffFbSize);
  std::mt19937_64 rng(99);
  int loaded = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> f = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = fb_off + rng() % fb_size;
      switch (rng() % 3) {
        case 0: f[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: f[pos] = static_cast<uint8_t>(rng()); break;
        default: f[pos] = (rng() & 1) ? 0xFF : 0x00; break;
      }
    }
    Reseal(f);
    auto m = LoadOmMemory(f.data(), f.size());
    if (m.ok()) {
      ++loaded;
      // Whatever loads must be self-consistent enough to dump.
      EXPECT_TRUE(m->graph->Verify().ok());
      EXPECT_FALSE(OmToJson(*m).empty());
      EXPECT_FALSE(OmSummary(*m).empty());
    }
  }
  // Most edits hit a name byte or an unchecked scalar; some must be caught.
  EXPECT_LT(loaded, 20000);
}

// ---- Structurally valid FlatBuffers with bad contents -------------------------

struct SpecValue {
  std::string name;
  int32_t dtype = 1;
  std::vector<int64_t> shape = {4};
  fb::ValueKind kind = fb::ValueKind::Activation;
  int64_t arena_offset = -1;
  uint64_t data_offset = 0, data_size = 0;
};
struct SpecAttr {
  std::string name = "alpha";
  fb::AttrKind kind = fb::AttrKind::Int;
  int32_t tensor_dtype = 0;
  std::vector<int64_t> tensor_shape;
  uint64_t tensor_offset = 0, tensor_size = 0;
};
struct SpecNode {
  std::string name = "n0", domain, op_type = "Identity";
  int32_t opset = 17;
  std::vector<int32_t> inputs, outputs;
  std::vector<SpecAttr> attrs;
  uint64_t prepacked_offset = 0, prepacked_size = 0;
};
struct Spec {
  std::string target = HostTarget(), fb_target = HostTarget();
  std::vector<SpecValue> values;
  std::vector<SpecNode> nodes;
  std::vector<int32_t> inputs, outputs;
  int64_t arena_size = 64;
  std::vector<std::pair<std::string, int32_t>> opsets = {{"", 17}};
  size_t blob_size = 128;
};

// x (input, 4 floats) -> Identity -> t (arena 0) -> Identity -> y (output);
// plus a 16-byte constant c at blob offset 64.
Spec BaseSpec() {
  Spec s;
  s.values = {{"x", 1, {4}, fb::ValueKind::Input},
              {"t", 1, {4}, fb::ValueKind::Activation, 0},
              {"y", 1, {4}, fb::ValueKind::Output},
              {"c", 1, {4}, fb::ValueKind::Constant, -1, 64, 16}};
  SpecNode n0;
  n0.inputs = {0};
  n0.outputs = {1};
  SpecNode n1;
  n1.name = "n1";
  n1.inputs = {1};
  n1.outputs = {2};
  s.nodes = {n0, n1};
  s.inputs = {0};
  s.outputs = {2, 3};
  return s;
}

std::vector<uint8_t> BuildFile(const Spec& s) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Value>> values;
  for (const SpecValue& v : s.values)
    values.push_back(fb::CreateValue(b, b.CreateString(v.name), v.dtype, b.CreateVector(v.shape), 0,
                                     v.kind, v.arena_offset, v.data_offset, v.data_size));
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (const SpecNode& n : s.nodes) {
    std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
    for (const SpecAttr& a : n.attrs)
      attrs.push_back(fb::CreateAttribute(b, b.CreateString(a.name), a.kind, 1, 0.f, 0, 0, 0, 0,
                                          a.tensor_dtype, b.CreateVector(a.tensor_shape),
                                          a.tensor_offset, a.tensor_size));
    nodes.push_back(fb::CreateNode(b, b.CreateString(n.name), b.CreateString(n.domain),
                                   b.CreateString(n.op_type), n.opset, b.CreateVector(n.inputs),
                                   b.CreateVector(n.outputs), b.CreateVector(attrs),
                                   n.prepacked_offset, n.prepacked_size));
  }
  std::vector<flatbuffers::Offset<fb::OpsetImport>> opsets;
  for (auto& [d, v] : s.opsets) opsets.push_back(fb::CreateOpsetImport(b, b.CreateString(d), v));
  auto model = fb::CreateModel(b, b.CreateString("spec"), b.CreateString("test"),
                               b.CreateString(s.fb_target), b.CreateString("onnx"), 0, 8,
                               b.CreateVector(opsets), 0, b.CreateVector(values),
                               b.CreateVector(nodes), b.CreateVector(s.inputs),
                               b.CreateVector(s.outputs), s.arena_size, -1);
  fb::FinishModelBuffer(b, model);
  std::vector<uint8_t> blob(s.blob_size, 0x5A);
  return om_internal::PackContainer(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()),
                                    blob, s.target, kOmFormatVersion);
}

Status LoadSpec(const std::function<void(Spec&)>& mutate) {
  Spec s = BaseSpec();
  mutate(s);
  return Load(BuildFile(s));
}

TEST(OmRobustnessTest, HandBuiltBaseSpecLoads) {
  auto file = BuildFile(BaseSpec());
  auto m = LoadOmMemory(file.data(), file.size());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->graph->nodes().size(), 2u);
  EXPECT_EQ(m->graph->FindValue("c")->constant->size(), 16u);
}

struct BadCase {
  const char* name;
  std::function<void(Spec&)> mutate;
  const char* expect;  // substring of the error message
  StatusCode code = StatusCode::kInvalidFile;
};

TEST(OmRobustnessTest, OutOfRangeContentsAreRejectedWithTheFieldAtFault) {
  const BadCase cases[] = {
      {"node input index", [](Spec& s) { s.nodes[1].inputs = {99}; }, "value index 99 is out of range"},
      {"node negative index", [](Spec& s) { s.nodes[0].inputs = {-2}; }, "node 0 'n0'"},
      {"node output index", [](Spec& s) { s.nodes[0].outputs = {4}; }, "output 0: value index 4"},
      {"graph input index", [](Spec& s) { s.inputs = {-1}; }, "graph input 0"},
      {"graph output index", [](Spec& s) { s.outputs = {2, 1000}; }, "graph output 1"},
      {"blob offset past end", [](Spec& s) { s.values[3].data_offset = 128; }, "exceed the weight blob"},
      {"blob offset overflow",
       [](Spec& s) { s.values[3].data_offset = ~0ull - 63; }, "exceed the weight blob"},
      {"blob offset misaligned", [](Spec& s) { s.values[3].data_offset = 8; }, "multiple of 64"},
      {"constant size mismatch", [](Spec& s) { s.values[3].data_size = 12; }, "needs 16"},
      {"shape overflow",
       [](Spec& s) { s.values[1].shape = {1LL << 40, 1LL << 40}; }, "overflows"},
      {"byte size overflow",
       [](Spec& s) { s.values[1].shape = {1LL << 62}; }, "byte size overflows"},
      {"negative dim", [](Spec& s) { s.values[1].shape = {-1}; }, "dim 0 is -1"},
      {"unknown dtype", [](Spec& s) { s.values[1].dtype = 99; }, "unknown dtype code 99"},
      {"string dtype", [](Spec& s) { s.values[1].dtype = 8; }, "unknown dtype code 8"},
      {"unknown value kind",
       [](Spec& s) { s.values[1].kind = static_cast<fb::ValueKind>(9); }, "unknown value kind"},
      {"arena overflow", [](Spec& s) { s.values[1].arena_offset = 60; }, "exceed arena_size"},
      {"arena offset huge",
       [](Spec& s) { s.values[1].arena_offset = INT64_MAX - 2; }, "exceed arena_size"},
      {"negative arena size", [](Spec& s) { s.arena_size = -5; }, "arena_size"},
      {"activation without arena", [](Spec& s) { s.values[1].arena_offset = -1; }, "no arena offset"},
      {"unknown op", [](Spec& s) { s.nodes[0].op_type = "FancyOp"; }, "FancyOp",
       StatusCode::kNotSupported},
      {"unknown domain",
       [](Spec& s) { s.nodes[0].domain = "com.example"; }, "com.example::Identity",
       StatusCode::kNotSupported},
      {"op at unsupported opset", [](Spec& s) { s.nodes[0].opset = 0; }, "at opset 0",
       StatusCode::kNotSupported},
      {"empty op type", [](Spec& s) { s.nodes[0].op_type = ""; }, "empty op_type"},
      {"use before definition",
       [](Spec& s) { std::swap(s.nodes[0], s.nodes[1]); }, "used before it is produced"},
      {"produced twice", [](Spec& s) { s.nodes[1].outputs = {1}; }, "produced twice"},
      {"node writes a constant", [](Spec& s) { s.nodes[1].outputs = {3}; }, "graph input or constant"},
      {"node writes an input", [](Spec& s) { s.nodes[1].outputs = {0}; }, "graph input or constant"},
      {"input kind not listed", [](Spec& s) { s.inputs = {}; }, "kind Input"},
      {"activation as graph output", [](Spec& s) { s.outputs = {1}; }, "kind Activation"},
      {"output never produced", [](Spec& s) { s.nodes.pop_back(); }, "no node produces it"},
      {"duplicate value name", [](Spec& s) { s.values[2].name = "t"; }, "duplicate value name"},
      {"duplicate attribute",
       [](Spec& s) { s.nodes[0].attrs = {SpecAttr(), SpecAttr()}; }, "appears twice"},
      {"attribute names out of order",
       [](Spec& s) {
         SpecAttr b, a;
         b.name = "beta";
         s.nodes[0].attrs = {b, a};
       },
       "out of order"},
      {"unknown attribute kind",
       [](Spec& s) {
         SpecAttr a;
         a.kind = static_cast<fb::AttrKind>(42);
         s.nodes[0].attrs = {a};
       },
       "unknown attribute kind 42"},
      {"tensor attribute past blob",
       [](Spec& s) {
         SpecAttr a;
         a.kind = fb::AttrKind::Tensor;
         a.tensor_dtype = 1;
         a.tensor_shape = {64};
         a.tensor_offset = 0;
         a.tensor_size = 256;
         s.nodes[0].attrs = {a};
       },
       "exceed the weight blob"},
      {"tensor attribute size mismatch",
       [](Spec& s) {
         SpecAttr a;
         a.kind = fb::AttrKind::Tensor;
         a.tensor_dtype = 1;
         a.tensor_shape = {2};
         a.tensor_size = 4;
         s.nodes[0].attrs = {a};
       },
       "shape needs 8"},
      {"tensor attribute dtype",
       [](Spec& s) {
         SpecAttr a;
         a.kind = fb::AttrKind::Tensor;
         a.tensor_dtype = 0;
         s.nodes[0].attrs = {a};
       },
       "unknown tensor dtype"},
      {"prepacked past blob",
       [](Spec& s) {
         s.nodes[1].prepacked_offset = 64;
         s.nodes[1].prepacked_size = 65;
       },
       "prepacked weights"},
      {"target mismatch inside", [](Spec& s) { s.fb_target = "aarch64-x"; }, "differs from the header"},
      {"duplicate opset import",
       [](Spec& s) { s.opsets = {{"", 17}, {"ai.onnx", 13}}; }, "imported twice"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    Status st = LoadSpec(c.mutate);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_TRUE(Contains(st, c.expect)) << "expected '" << c.expect << "' in: " << st.message();
  }
}

TEST(OmRobustnessTest, SharedOffsetsCannotAmplifyWork) {
  // 20000 entries of Model.values all point at one Value with a 1000-dim
  // shape: 160 MB of shapes to walk and copy from a file of ~90 KB.
  flatbuffers::FlatBufferBuilder b;
  std::vector<int64_t> shape(1000, 1);
  auto one = fb::CreateValue(b, 0, 1, b.CreateVector(shape));
  std::vector<flatbuffers::Offset<fb::Value>> values(20000, one);
  auto model = fb::CreateModel(b, 0, 0, b.CreateString(HostTarget()), 0, 0, 0, 0, 0,
                               b.CreateVector(values));
  fb::FinishModelBuffer(b, model);
  auto file = om_internal::PackContainer(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()),
                                         {}, HostTarget(), kOmFormatVersion);
  Status st = Load(file);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "shared offsets")) << st.message();
}

TEST(OmRobustnessTest, StringPoolIndicesAreChecked) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<int64_t> shape = {2};
  std::vector<int32_t> params = {3};
  auto v = fb::CreateValue(b, b.CreateString("x"), 1, b.CreateVector(shape), b.CreateVector(params),
                           fb::ValueKind::Input);
  std::vector<flatbuffers::Offset<fb::Value>> values = {v};
  std::vector<int32_t> inputs = {0};
  std::vector<flatbuffers::Offset<flatbuffers::String>> pool = {b.CreateString("N")};
  auto model = fb::CreateModel(b, 0, 0, b.CreateString(HostTarget()), 0, 0, 0, 0, 0,
                               b.CreateVector(values), 0, b.CreateVector(inputs), 0, 0, -1,
                               b.CreateVector(pool));
  fb::FinishModelBuffer(b, model);
  auto file = om_internal::PackContainer(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()),
                                         {}, HostTarget(), kOmFormatVersion);
  Status st = Load(file);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "string_pool index 3")) << st.message();
  EXPECT_TRUE(Contains(st, "value 0 'x'")) << st.message();
}

TEST(OmRobustnessTest, ErrorsNameTheFileOffsetOfTheTable) {
  Status st = LoadSpec([](Spec& s) { s.values[1].dtype = 99; });
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "value 1 't' (table at file offset ")) << st.message();
}

}  // namespace
}  // namespace oc
