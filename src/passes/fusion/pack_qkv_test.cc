#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/fusion/pack_qkv.h"

namespace oc {
namespace {

using testing::Const;
using testing::Floats;
using testing::OpSequence;
using testing::Pattern;
using testing::Tensor;

Status RunPass(Graph& g) { return PackQkv(g); }

TEST(PassPackQkv, ThreeProjectionsBecomeOneMatMulAndSplit) {
  Graph g;
  g.opset_imports[""] = 14;
  Value* x = Tensor(g, "x", {1, 5, 4});
  g.inputs = {x};
  std::vector<Value*> outs;
  std::vector<std::vector<float>> ws, bs;
  const int64_t n[3] = {6, 6, 3};
  for (int i = 0; i < 3; ++i) {
    std::string s = std::to_string(i);
    ws.push_back(Pattern(4 * n[i], -1, 1, i + 1));
    Value* mm = Tensor(g, "mm" + s, {1, 5, n[i]});
    g.AddNode("MatMul", "mm" + s, {x, Const<float>(g, "w" + s, {4, n[i]}, ws.back())}, {mm});
    if (i == 1) {  // no bias on this one
      bs.push_back(std::vector<float>(n[i], 0.f));
      outs.push_back(mm);
      continue;
    }
    bs.push_back(Pattern(n[i], -1, 1, i + 7));
    Value* y = Tensor(g, "y" + s, {1, 5, n[i]});
    g.AddNode("Add", "add" + s, {Const<float>(g, "b" + s, {n[i]}, bs.back()), mm}, {y});
    outs.push_back(y);
  }
  g.outputs = outs;
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"MatMul", "Add", "Split"}));
  Node* mm = g.nodes()[0].get();
  EXPECT_EQ(mm->inputs[0], x);
  EXPECT_EQ(mm->inputs[1]->shape, (std::vector<int64_t>{4, 15}));
  std::vector<float> w = Floats(mm->inputs[1]);
  for (int r = 0; r < 4; ++r) {
    int col = 0;
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < n[i]; ++c, ++col) ASSERT_EQ(w[r * 15 + col], ws[i][r * n[i] + c]) << r << "," << col;
  }
  std::vector<float> want_b;
  for (auto& b : bs) want_b.insert(want_b.end(), b.begin(), b.end());
  EXPECT_EQ(Floats(g.nodes()[1]->inputs[1]), want_b);
  Node* split = g.nodes()[2].get();
  EXPECT_EQ(split->outputs, outs);
  EXPECT_EQ(split->GetInt("axis", 0), 2);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassPackQkv, DifferentInputsOrNonConstantWeightsAreLeftAlone) {
  Graph g;
  Value* x = Tensor(g, "x", {5, 4});
  Value* wt = Tensor(g, "wt", {4, 6});
  g.inputs = {x, wt};
  Value* a = Tensor(g, "a", {5, 6});
  Value* b = Tensor(g, "b", {5, 6});
  g.AddNode("MatMul", "a", {x, wt}, {a});
  g.AddNode("MatMul", "b", {x, Const<float>(g, "w", {4, 6}, Pattern(24, -1, 1))}, {b});
  g.outputs = {a, b};
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"MatMul", "MatMul"}));
}

}  // namespace
}  // namespace oc
