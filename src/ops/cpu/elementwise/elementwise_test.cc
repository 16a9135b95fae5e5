#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/elementwise/elementwise_test_util.h"

namespace oc {
namespace {

using ewtest::Make;
using ewtest::RunOp;
using ewtest::Tensor;

template <typename F>
void CheckBinaryFloat(const std::string& op, const std::vector<int64_t>& sa,
                      const std::vector<int64_t>& sb, const std::vector<int64_t>& so, F ref) {
  int64_t na = 1, nb = 1, no = 1;
  for (auto d : sa) na *= d;
  for (auto d : sb) nb *= d;
  for (auto d : so) no *= d;
  auto a = ewtest::RandomFloats(na, -3.f, 3.f, 1);
  auto b = ewtest::RandomFloats(nb, 0.5f, 4.f, 2);
  auto r = RunOp(op, {Make(sa, a), Make(sb, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& out = (*r)[0];
  ASSERT_EQ(out.shape, so);
  auto o = out.as<float>();
  ASSERT_EQ(static_cast<int64_t>(o.size()), no);
  for (int64_t i = 0; i < no; ++i) {
    float e = ref(a[ewtest::BroadcastIndex(sa, so, i)], b[ewtest::BroadcastIndex(sb, so, i)]);
    if (std::isnan(e)) ASSERT_TRUE(std::isnan(o[i])) << op << " at " << i;
    else ASSERT_FLOAT_EQ(o[i], e) << op << " at " << i;
  }
}

struct ShapeCase {
  std::vector<int64_t> a, b, out;
};

TEST(EwBinary, ArithmeticBroadcastsLikeNumpy) {
  std::vector<ShapeCase> cases = {
      {{17}, {17}, {17}},
      {{2, 3, 4}, {4}, {2, 3, 4}},
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},
      {{1, 3, 1}, {2, 1, 5}, {2, 3, 5}},
      {{5}, {}, {5}},
      {{}, {7}, {7}},
      {{}, {}, {}},
      {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
      {{2, 3, 7, 7}, {1, 3, 1, 1}, {2, 3, 7, 7}},
      {{1}, {1, 1, 1}, {1, 1, 1}},
      {{4, 1}, {1, 6}, {4, 6}},
      {{3, 0}, {1}, {3, 0}},
  };
  for (const auto& c : cases) {
    CheckBinaryFloat("Add", c.a, c.b, c.out, [](float x, float y) { return x + y; });
    CheckBinaryFloat("Sub", c.a, c.b, c.out, [](float x, float y) { return x - y; });
    CheckBinaryFloat("Mul", c.a, c.b, c.out, [](float x, float y) { return x * y; });
    CheckBinaryFloat("Div", c.a, c.b, c.out, [](float x, float y) { return x / y; });
    CheckBinaryFloat("Pow", c.a, c.b, c.out, [](float x, float y) { return std::pow(x, y); });
  }
}

TEST(EwBinary, LargeTensorsUseEveryChunkCorrectly) {
  const int64_t n = 1000003;
  auto a = ewtest::RandomFloats(n, -1.f, 1.f, 3);
  auto b = ewtest::RandomFloats(n, -1.f, 1.f, 4);
  auto r = RunOp("Add", {Make({n}, a), Make({n}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto o = (*r)[0].as<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(o[i], a[i] + b[i]) << i;
  // Row broadcast with a long odd row: chunks start mid-row.
  auto row = ewtest::RandomFloats(1009, -1.f, 1.f, 5);
  auto m = ewtest::RandomFloats(991 * 1009, -1.f, 1.f, 6);
  r = RunOp("Mul", {Make({991, 1009}, m), Make({1009}, row)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  o = (*r)[0].as<float>();
  for (int64_t i = 0; i < 991 * 1009; ++i) ASSERT_EQ(o[i], m[i] * row[i % 1009]) << i;
  // Column broadcast: the scalar side changes every 13 elements.
  auto col = ewtest::RandomFloats(77003, -1.f, 1.f, 7);
  auto m2 = ewtest::RandomFloats(77003 * 13, -1.f, 1.f, 8);
  r = RunOp("Sub", {Make({77003, 1}, col), Make({77003, 13}, m2)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  o = (*r)[0].as<float>();
  for (int64_t i = 0; i < 77003 * 13; ++i) ASSERT_EQ(o[i], col[i / 13] - m2[i]) << i;
}

TEST(EwBinary, IntegerArithmeticTruncatesAndWraps) {
  std::vector<int32_t> a = {-7, 7, -7, 7, INT32_MIN, 9};
  std::vector<int32_t> b = {2, 2, -2, -2, -1, 3};
  auto r = RunOp("Div", {Make({6}, a), Make({6}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{-3, 3, 3, -3, INT32_MIN, 3}));
  std::vector<int64_t> a64 = {1, 2, 3}, b64 = {10};
  r = RunOp("Add", {Make({3}, a64), Make({1}, b64)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{11, 12, 13}));
  r = RunOp("Mul", {Make({3}, a64), Make({1}, b64)});
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{10, 20, 30}));
  r = RunOp("Sub", {Make<int32_t>({1}, {INT32_MIN}), Make<int32_t>({1}, {1})});
  EXPECT_EQ((*r)[0].as<int32_t>()[0], INT32_MAX);
}

TEST(EwBinary, IntegerDivisionByZeroIsAnError) {
  auto r = RunOp("Div", {Make<int32_t>({2}, {1, 2}), Make<int32_t>({2}, {1, 0})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
}

TEST(EwBinary, ModFollowsOnnxSignRules) {
  std::vector<int32_t> a = {-7, 7, -7, 7, 6}, b = {2, 2, -2, -2, 3};
  auto r = RunOp("Mod", {Make({5}, a), Make({5}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1, 0}));
  auto fmod1 = [](Node& n) { n.SetInt("fmod", 1); };
  r = RunOp("Mod", {Make({5}, a), Make({5}, b)}, fmod1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{-1, 1, -1, 1, 0}));
  std::vector<float> fa = {-7.5f, 7.5f}, fb = {2.f, -2.f};
  r = RunOp("Mod", {Make({2}, fa), Make({2}, fb)}, fmod1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{std::fmod(-7.5f, 2.f), std::fmod(7.5f, -2.f)}));
  r = RunOp("Mod", {Make({2}, fa), Make({2}, fb)});
  EXPECT_FALSE(r.ok());
}

TEST(EwBinary, PowWithIntegerExponentsAndBases) {
  auto r = RunOp("Pow", {Make<float>({3}, {2.f, -3.f, 0.5f}), Make<int64_t>({3}, {3, 2, -1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{8.f, 9.f, 2.f}));
  EXPECT_EQ((*r)[0].dtype, DataType::kFloat32);
  r = RunOp("Pow", {Make<int32_t>({4}, {-7, 7, -7, 7}), Make<int64_t>({4}, {2, 3, -1, 0})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{49, 343, 0, 1}));
}

TEST(EwBinary, PReluBroadcastsSlopePerChannel) {
  auto x = ewtest::RandomFloats(2 * 3 * 5, -1.f, 1.f, 9);
  std::vector<float> slope = {0.1f, 0.2f, 0.3f};
  auto r = RunOp("PRelu", {Make({2, 3, 5}, x), Make({3, 1}, slope)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto o = (*r)[0].as<float>();
  for (int i = 0; i < 30; ++i) {
    float s = slope[(i / 5) % 3];
    EXPECT_EQ(o[i], x[i] < 0 ? x[i] * s : x[i]);
  }
  // A slope that would grow X is rejected.
  EXPECT_FALSE(RunOp("PRelu", {Make({3}, slope), Make({2, 3}, x)}).ok());
}

TEST(EwVariadic, SumMeanMaxMinBroadcastOverAllInputs) {
  auto a = ewtest::RandomFloats(6, -2.f, 2.f, 10);
  auto b = ewtest::RandomFloats(3, -2.f, 2.f, 11);
  auto c = ewtest::RandomFloats(2, -2.f, 2.f, 12);
  std::vector<int64_t> sa = {2, 3}, sb = {3}, sc = {2, 1}, so = {2, 3};
  auto run = [&](const std::string& op) {
    auto r = RunOp(op, {Make(sa, a), Make(sb, b), Make(sc, c)});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)[0].shape, so);
    return (*r)[0].as<float>();
  };
  auto sum = run("Sum"), mean = run("Mean"), mx = run("Max"), mn = run("Min");
  for (int i = 0; i < 6; ++i) {
    float x = a[i], y = b[i % 3], z = c[i / 3];
    EXPECT_FLOAT_EQ(sum[i], x + y + z);
    EXPECT_FLOAT_EQ(mean[i], (x + y + z) / 3.f);
    EXPECT_EQ(mx[i], std::max({x, y, z}));
    EXPECT_EQ(mn[i], std::min({x, y, z}));
  }
  auto r = RunOp("Max", {Make(sa, a)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<float>(), a);
  r = RunOp("Max", {Make<int64_t>({2}, {1, 9}), Make<int64_t>({2}, {5, 3})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{5, 9}));
}

TEST(EwVariadic, MaxAndMinPropagateNaN) {
  float nan = std::nanf("");
  auto r = RunOp("Max", {Make<float>({3}, {nan, 1.f, 2.f}), Make<float>({3}, {1.f, nan, 1.f})});
  ASSERT_TRUE(r.ok());
  auto o = (*r)[0].as<float>();
  EXPECT_TRUE(std::isnan(o[0]));
  EXPECT_TRUE(std::isnan(o[1]));
  EXPECT_EQ(o[2], 2.f);
  r = RunOp("Min", {Make<float>({3}, {nan, 1.f, 2.f}), Make<float>({3}, {1.f, nan, 1.f})});
  o = (*r)[0].as<float>();
  EXPECT_TRUE(std::isnan(o[0]) && std::isnan(o[1]));
  EXPECT_EQ(o[2], 1.f);
}

TEST(EwBinary, BitShiftBothDirections) {
  auto left = [](Node& n) { n.SetString("direction", "LEFT"); };
  auto right = [](Node& n) { n.SetString("direction", "RIGHT"); };
  auto r = RunOp("BitShift", {Make<uint8_t>({3}, {16, 4, 1}), Make<uint8_t>({3}, {1, 2, 3})}, right);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{8, 1, 0}));
  r = RunOp("BitShift", {Make<uint32_t>({3}, {16, 4, 1}), Make<uint32_t>({1}, {2})}, left);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<uint32_t>(), (std::vector<uint32_t>{64, 16, 4}));
}

TEST(EwBinary, BadBroadcastAndUnsupportedDtypeAreErrors) {
  auto r = RunOp("Add", {Make<float>({2, 3}, std::vector<float>(6)), Make<float>({4}, std::vector<float>(4))});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Add node 'n'"), std::string::npos) << r.status().message();
  r = RunOp("Add", {Make<uint16_t>({2}, {1, 2}, DataType::kFloat16), Make<uint16_t>({2}, {1, 2}, DataType::kFloat16)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("float16"), std::string::npos) << r.status().message();
  r = RunOp("Add", {Make<float>({2}, {1, 2}), Make<int32_t>({2}, {1, 2})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

// Inference alone, with unknown (-1) dims as the parser leaves them.
Value* Input(Graph& g, const std::string& name, DataType dt, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = dt;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  return v;
}

Status Infer(Node* n) { return OpRegistry::Global().Find("", n->op_type, n->opset)->infer(*n); }

TEST(EwInference, UnknownDimsPropagateThroughEveryGroup) {
  Graph g;
  Value* a = Input(g, "a", DataType::kFloat32, {-1, 3});
  Value* b = Input(g, "b", DataType::kFloat32, {3});
  Value* c = Input(g, "c", DataType::kBool, {-1, 1});
  Value* o1 = g.AddValue("o1");
  Node* add = g.AddNode("Add", "add", {a, b}, {o1});
  add->opset = 14;
  ASSERT_TRUE(Infer(add).ok());
  EXPECT_EQ(o1->shape, (std::vector<int64_t>{-1, 3}));
  Value* o2 = g.AddValue("o2");
  Node* where = g.AddNode("Where", "w", {c, a, b}, {o2});
  where->opset = 16;
  ASSERT_TRUE(Infer(where).ok());
  EXPECT_EQ(o2->shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(o2->dtype, DataType::kFloat32);
  Value* o3 = g.AddValue("o3");
  Node* red = g.AddNode("ReduceSum", "r", {a}, {o3});
  red->opset = 11;
  red->SetInts("axes", {1});
  red->SetInt("keepdims", 0);
  ASSERT_TRUE(Infer(red).ok());
  EXPECT_EQ(o3->shape, (std::vector<int64_t>{-1}));
  Value* o4 = g.AddValue("o4");
  Node* cmp = g.AddNode("Less", "l", {a, b}, {o4});
  cmp->opset = 13;
  ASSERT_TRUE(Infer(cmp).ok());
  EXPECT_EQ(o4->dtype, DataType::kBool);
  EXPECT_EQ(o4->shape, (std::vector<int64_t>{-1, 3}));
  Value* o5 = g.AddValue("o5");
  Node* cast = g.AddNode("Cast", "cast", {a}, {o5});
  cast->opset = 19;
  cast->SetInt("to", static_cast<int64_t>(DataType::kFloat16));
  ASSERT_TRUE(Infer(cast).ok());
  EXPECT_EQ(o5->dtype, DataType::kFloat16);
  EXPECT_EQ(o5->shape, (std::vector<int64_t>{-1, 3}));
  // Axes from a non-constant input: rank known only with keepdims.
  Value* axes = Input(g, "axes", DataType::kInt64, {1});
  Value* o6 = g.AddValue("o6");
  Node* red2 = g.AddNode("ReduceMax", "r2", {a, axes}, {o6});
  red2->opset = 18;
  ASSERT_TRUE(Infer(red2).ok());
  EXPECT_EQ(o6->shape, (std::vector<int64_t>{-1, -1}));
  // A known mismatch is still an error.
  Value* d = Input(g, "d", DataType::kFloat32, {4});
  Value* o7 = g.AddValue("o7");
  Node* bad = g.AddNode("Mul", "bad", {a, d}, {o7});
  bad->opset = 14;
  Status st = Infer(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Mul node 'bad'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace oc
