#include "graph/dtype.h"

#include <gtest/gtest.h>

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
