#include "runtime/dynamic_gears.h"

#include <gtest/gtest.h>

namespace oc {
namespace {

Value* Input(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = DataType::kFloat32;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  g.inputs.push_back(v);
  return v;
}

TEST(DynamicGears, BatchGearsFillEveryBatchDim) {
  Graph g;
  Input(g, "x", {-1, 3, 8, 8});
  Input(g, "info", {-1, 4});
  auto set = MakeGears(g, GearMode::kBatch, {{"x", {-1, 3, 8, 8}}, {"info", {-1, 4}}}, {{1}, {4}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->shapes.size(), 2u);
  EXPECT_EQ(set->shapes[1][0], (std::vector<int64_t>{4, 3, 8, 8}));
  EXPECT_EQ(set->shapes[1][1], (std::vector<int64_t>{4, 4}));
}

TEST(DynamicGears, ImageSizeGearsFillHeightThenWidth) {
  Graph g;
  Input(g, "x", {1, 3, -1, -1});
  auto set = MakeGears(g, GearMode::kImageSize, {{"x", {1, 3, -1, -1}}}, {{16, 32}, {8, 8}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->shapes[0][0], (std::vector<int64_t>{1, 3, 16, 32}));
}

TEST(DynamicGears, DimsGearsFollowTheInputShapeOrder) {
  Graph g;
  Input(g, "data", {1, -1, 4});
  Input(g, "mask", {-1, -1});
  // --input_shape lists mask first: its two -1 come first in each gear.
  auto set = MakeGears(g, GearMode::kDims, {{"mask", {-1, -1}}, {"data", {1, -1, 4}}}, {{2, 3, 5}, {1, 1, 7}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->shapes[0][0], (std::vector<int64_t>{1, 5, 4}));
  EXPECT_EQ(set->shapes[0][1], (std::vector<int64_t>{2, 3}));
}

TEST(DynamicGears, ErrorsNameTheFlagAndTheGear) {
  Graph g;
  Input(g, "x", {-1, 3, -1, 8});
  auto e = MakeGears(g, GearMode::kBatch, {{"x", {-1, 3, -1, 8}}}, {{1}, {2}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--dynamic_batch_size"), std::string::npos) << e.status().message();
  e = MakeGears(g, GearMode::kDims, {{"x", {-1, 3, -1, 8}}}, {{1, 2}, {3}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("gear 1"), std::string::npos) << e.status().message();
  e = MakeGears(g, GearMode::kDims, {{"x", {-1, 3, -1, 8}}}, {{1, 2}});
  ASSERT_FALSE(e.ok());
  e = MakeGears(g, GearMode::kDims, {{"x", {-1, 3, -1, 8}}}, {{1, 2}, {1, 2}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("repeats"), std::string::npos);
  e = MakeGears(g, GearMode::kImageSize, {{"y", {-1, 3}}}, {{1, 2}, {3, 4}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'y'"), std::string::npos);
}

TEST(DynamicGears, MetadataRoundTripAndVerification) {
  Graph g;
  Input(g, "x", {-1, 3});
  Input(g, "s", {});
  auto set = MakeGears(g, GearMode::kBatch, {{"x", {-1, 3}}}, {{2}, {5}});
  ASSERT_TRUE(set.ok());
  StoreGears(g, *set);
  auto back = LoadGears(g);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->mode, GearMode::kBatch);
  EXPECT_EQ(back->values, set->values);
  EXPECT_EQ(back->shapes, set->shapes);
  Graph none;
  auto empty = LoadGears(none);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->mode, GearMode::kNone);
  // A tampered file: a gear shape that contradicts the fixed dims.
  g.metadata["dynamic_gear_shapes"] = "2,4|;5,3|";
  EXPECT_FALSE(LoadGears(g).ok());
  g.metadata["dynamic_gear_shapes"] = "2,3|;5,3|";
  EXPECT_TRUE(LoadGears(g).ok());
  g.metadata["dynamic_gears"] = "2;x";
  EXPECT_FALSE(LoadGears(g).ok());
  g.metadata["dynamic_gears"] = "2;5";
  g.metadata["dynamic_mode"] = "dynamic_everything";
  EXPECT_FALSE(LoadGears(g).ok());
  g.metadata.erase("dynamic_mode");
  EXPECT_FALSE(LoadGears(g).ok());
}

}  // namespace
}  // namespace oc
