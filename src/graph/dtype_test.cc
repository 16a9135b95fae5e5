#include "graph/dtype.h"

#include <gtest/gtest.h>

#include <cstring>

#include "om/om_file.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

TEST(DataTypes, SubByteTypesPackAndRoundUpToWholeBytes) {
  EXPECT_EQ(DataTypeBits(DataType::kInt4), 4);
  EXPECT_EQ(DataTypeBits(DataType::kUInt2), 2);
  EXPECT_EQ(DataTypeSize(DataType::kInt4), 0u);  // no per-element byte address
  EXPECT_EQ(DataTypeByteSize(DataType::kInt4, 0), 0);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt4, 1), 1);
  EXPECT_EQ(DataTypeByteSize(DataType::kFloat4E2M1, 7), 4);
  EXPECT_EQ(DataTypeByteSize(DataType::kUInt4, 8), 4);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt2, 5), 2);
  EXPECT_EQ(DataTypeByteSize(DataType::kUInt2, 8), 2);
  EXPECT_EQ(DataTypeByteSize(DataType::kFloat8E5M2, 5), 5);
  EXPECT_EQ(DataTypeByteSize(DataType::kFloat64, 3), 24);
  EXPECT_EQ(DataTypeByteSize(DataType::kString, 3), -1);
  EXPECT_EQ(DataTypeByteSize(DataType::kFloat32, -1), -1);
}

TEST(DataTypes, KnownCodesAreOnnxsWithoutStringsAndComplex) {
  for (int c = 1; c <= 26; ++c) {
    const bool want = c != 8 && c != 14 && c != 15;
    EXPECT_EQ(IsKnownDataType(c), want) << c;
  }
  EXPECT_FALSE(IsKnownDataType(0));
  EXPECT_FALSE(IsKnownDataType(27));
  EXPECT_EQ(DataTypeName(DataType::kFloat8E4M3FNUZ), "float8e4m3fnuz");
  EXPECT_EQ(DataTypeName(DataType::kInt2), "int2");
  EXPECT_TRUE(IsSubByteType(DataType::kFloat4E2M1));
  EXPECT_FALSE(IsSubByteType(DataType::kFloat8E8M0));
  EXPECT_TRUE(IsLowPrecisionFloat(DataType::kFloat8E8M0));
  EXPECT_FALSE(IsLowPrecisionFloat(DataType::kFloat16));
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

// Packed and 8-bit float constants survive the .om writer and the verifying
// reader with their packed byte sizes (odd element counts included).
TEST(DataTypes, LowPrecisionConstantsRoundTripThroughOm) {
  Graph g;
  g.opset_imports[""] = 21;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {2};
  x->dim_params = {""};
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Relu", "relu", {x}, {y})->opset = 21;
  const uint8_t int4[3] = {0x21, 0x43, 0x05};  // 5 elements: 1 2 3 4 5
  const uint8_t fp8[3] = {0x38, 0x7F, 0x80};
  Value* w4 = g.AddConstant("w4", DataType::kInt4, {5}, TensorData::Copy(int4, sizeof int4));
  Value* w8 = g.AddConstant("w8", DataType::kFloat8E4M3FN, {3}, TensorData::Copy(fp8, sizeof fp8));
  g.outputs = {y, w4, w8};
  Status st = RunPipeline(g, {});
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto bytes = SerializeOm(g, std::vector<std::vector<uint8_t>>(g.nodes().size()), {.target = HostTarget()});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto model = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Graph& h = *model->graph;
  ASSERT_EQ(h.outputs.size(), 3u);
  const Value* r4 = h.outputs[1];
  const Value* r8 = h.outputs[2];
  EXPECT_EQ(r4->dtype, DataType::kInt4);
  EXPECT_EQ(r4->ByteSize(), 3);
  ASSERT_TRUE(r4->constant.has_value());
  EXPECT_EQ(std::memcmp(r4->constant->data(), int4, 3), 0);
  EXPECT_EQ(r8->dtype, DataType::kFloat8E4M3FN);
  ASSERT_TRUE(r8->constant.has_value());
  EXPECT_EQ(std::memcmp(r8->constant->data(), fp8, 3), 0);
}

}  // namespace
}  // namespace oc
