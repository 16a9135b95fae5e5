#include "executor/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

#include "executor/interpreter_ops.h"
#include "base/scoped_env.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

HostTensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  HostTensor t = HostTensor::Allocate(DataType::kFloat32, std::move(shape));
  std::memcpy(t.data.mutable_data(), v.data(), v.size() * sizeof(float));
  return t;
}

HostTensor Scalar(DataType dt, int64_t v) {
  HostTensor t = HostTensor::Allocate(dt, {});
  if (dt == DataType::kInt64) std::memcpy(t.data.mutable_data(), &v, 8);
  else t.data.mutable_data()[0] = static_cast<uint8_t>(v);
  return t;
}

std::vector<float> ToFloats(const HostTensor& t) {
  return std::vector<float>(t.data.as<float>(), t.data.as<float>() + t.NumElements());
}

Value* Input(Graph& g, const std::string& name, DataType dt, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = dt;
  v->has_shape = true;
  v->shape = shape;
  v->dim_params.assign(shape.size(), "");
  g.inputs.push_back(v);
  return v;
}

Node* Add(Graph& g, const std::string& op, std::vector<Value*> in, std::vector<Value*> out) {
  Node* n = g.AddNode(op, op + "_" + std::to_string(g.nodes().size()), std::move(in), std::move(out));
  n->opset = 17;
  return n;
}

// y = Relu(x) + b, x of unknown batch: the interpreter infers each shape from
// the concrete input and creates the kernels once per shape.
TEST(Interpreter, RunsAGraphWithUnknownDimsAndCachesKernelsPerShape) {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* x = Input(*g, "x", DataType::kFloat32, {-1, 2});
  float b[2] = {10.f, 20.f};
  Value* bias = g->AddConstant("b", DataType::kFloat32, {2}, TensorData::Copy(b, sizeof b));
  Value* r = g->AddValue("r");
  Value* y = g->AddValue("y");
  Add(*g, "Relu", {x}, {r});
  Add(*g, "Add", {r, bias}, {y});
  g->outputs = {y};
  ASSERT_TRUE(g->Verify().ok());
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ThreadPool pool(1);
  for (int64_t batch : {1, 3, 1, 3}) {
    std::vector<float> xs;
    for (int64_t i = 0; i < batch * 2; ++i) xs.push_back(static_cast<float>(i % 3) - 1.f);
    std::vector<RtValue> args{RtValue::FromTensor(Floats({batch, 2}, xs))};
    auto out = (*in)->Run(args, pool);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ((*out)[0].tensor.shape, (std::vector<int64_t>{batch, 2}));
    std::vector<float> got = ToFloats((*out)[0].tensor);
    for (int64_t i = 0; i < batch * 2; ++i) EXPECT_EQ(got[i], std::max(xs[i], 0.f) + b[i % 2]);
  }
  EXPECT_EQ((*in)->kernels_created(), 4u);  // 2 nodes x 2 shapes
}

TEST(Interpreter, RejectsAnInputOfTheWrongShapeNamingIt) {
  auto g = std::make_shared<Graph>();
  Value* x = Input(*g, "x", DataType::kFloat32, {-1, 2});
  Value* y = g->AddValue("y");
  Add(*g, "Relu", {x}, {y});
  g->outputs = {y};
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  ThreadPool pool(1);
  std::vector<RtValue> args{RtValue::FromTensor(Floats({2, 3}, std::vector<float>(6)))};
  auto out = (*in)->Run(args, pool);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'x'"), std::string::npos) << out.status().message();
}

// Loop(M, cond=true, acc0): acc += x each iteration (x read from the outer
// graph through a capture), scan output = acc after each step.
// With `typed_capture` false the captured x has no declared dtype, so the body
// cannot be compiled into a static executable and runs node by node.
std::shared_ptr<Graph> CumulativeLoop(bool typed_capture = true) {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* m = Input(*g, "M", DataType::kInt64, {});
  Value* x = Input(*g, "x", DataType::kFloat32, {-1});
  Value* acc0 = Input(*g, "acc0", DataType::kFloat32, {2});
  uint8_t t = 1;
  Value* cond = g->AddConstant("cond", DataType::kBool, {}, TensorData::Copy(&t, 1));

  auto body = std::make_shared<Graph>();
  body->name = "body";
  Input(*body, "i", DataType::kInt64, {});
  Value* c_in = Input(*body, "c_in", DataType::kBool, {});
  Value* acc_in = Input(*body, "acc_in", DataType::kFloat32, {2});
  Value* cap = body->AddValue("x");
  cap->dtype = typed_capture ? DataType::kFloat32 : DataType::kUndefined;
  body->captures.push_back(cap);
  Value* acc_out = body->AddValue("acc_out");
  Value* c_out = body->AddValue("c_out");
  Value* scan = body->AddValue("scan");
  scan->has_shape = true;  // declared, so that zero iterations give a [0, 2] stack
  scan->shape = {2};
  scan->dim_params = {""};
  Add(*body, "Add", {acc_in, cap}, {acc_out});
  Add(*body, "Identity", {c_in}, {c_out});
  Add(*body, "Identity", {acc_out}, {scan});
  body->outputs = {c_out, acc_out, scan};

  Value* fin = g->AddValue("final");
  Value* scans = g->AddValue("scans");
  Node* loop = Add(*g, "Loop", {m, cond, acc0, x}, {fin, scans});  // x: implicit input for the capture
  Attribute a;
  a.kind = Attribute::Kind::kGraph;
  a.graph = body;
  loop->attrs["body"] = a;
  g->outputs = {fin, scans};
  return g;
}

// Both ways a body runs: a static executable per shape, and node by node
// (OPENCANN_INTERPRET_BODIES=1); the capture typed or typed at the first run.
class LoopBody : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(LoopBody, LoopRunsItsBodyWithCapturedOuterValues) {
  const bool interpret = std::get<0>(GetParam());
  ScopedEnv env("OPENCANN_INTERPRET_BODIES", interpret ? "1" : "0");
  auto g = CumulativeLoop(std::get<1>(GetParam()));
  ASSERT_TRUE(g->Verify().ok()) << g->Verify().ToString();
  ASSERT_EQ(g->nodes()[0]->NumImplicitInputs(), 1u);
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ThreadPool pool(2);
  const float x[2] = {0.5f, -1.f}, acc0[2] = {1.f, 2.f};
  for (int64_t trips : {0, 1, 4}) {
    std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, trips)),
                              RtValue::FromTensor(Floats({2}, {x[0], x[1]})),
                              RtValue::FromTensor(Floats({2}, {acc0[0], acc0[1]}))};
    auto out = (*in)->Run(args, pool);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::vector<float> fin = ToFloats((*out)[0].tensor);
    for (int k = 0; k < 2; ++k) EXPECT_FLOAT_EQ(fin[k], acc0[k] + trips * x[k]);
    const HostTensor& scans = (*out)[1].tensor;
    ASSERT_EQ(scans.shape, (std::vector<int64_t>{trips, 2}));
    std::vector<float> s = ToFloats(scans);
    for (int64_t it = 0; it < trips; ++it)
      for (int k = 0; k < 2; ++k) EXPECT_FLOAT_EQ(s[it * 2 + k], acc0[k] + (it + 1) * x[k]);
  }
  // Interpreted: the body's Add kernel was made once and reused by every
  // iteration and run. Compiled: the interpreter made none.
  EXPECT_EQ((*in)->kernels_created(), interpret ? 1u : 0u);
}

// The body hands the iteration number straight out as a scan output (an
// Identity, which node by node shares the input's bytes): every slice must
// keep its own value although the loop reuses the buffers of values it has
// dropped.
class ScanOutputLoop : public ::testing::TestWithParam<bool> {};  // node by node?

TEST_P(ScanOutputLoop, IterationNumbersKeptAsScanOutputsStayDistinct) {
  ScopedEnv env("OPENCANN_INTERPRET_BODIES", GetParam() ? "1" : "0");
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* m = Input(*g, "M", DataType::kInt64, {});
  uint8_t t = 1;
  Value* cond = g->AddConstant("cond", DataType::kBool, {}, TensorData::Copy(&t, 1));
  auto body = std::make_shared<Graph>();
  body->opset_imports = g->opset_imports;
  Value* i = Input(*body, "i", DataType::kInt64, {});
  Value* c_in = Input(*body, "c_in", DataType::kBool, {});
  Value* c_out = body->AddValue("c_out");
  Value* it = body->AddValue("it");
  Add(*body, "Identity", {c_in}, {c_out});
  Add(*body, "Identity", {i}, {it});
  body->outputs = {c_out, it};
  Value* its = g->AddValue("its");
  Node* loop = Add(*g, "Loop", {m, cond}, {its});
  Attribute a;
  a.kind = Attribute::Kind::kGraph;
  a.graph = body;
  loop->attrs["body"] = a;
  g->outputs = {its};
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ThreadPool pool(1);
  std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, 40))};
  auto out = (*in)->Run(args, pool);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const HostTensor& r = (*out)[0].tensor;
  ASSERT_EQ(r.shape, (std::vector<int64_t>{40}));
  for (int64_t k = 0; k < 40; ++k) EXPECT_EQ(r.data.as<int64_t>()[k], k);
}

INSTANTIATE_TEST_SUITE_P(Interpreter, LoopBody, ::testing::Combine(::testing::Bool(), ::testing::Bool()));
INSTANTIATE_TEST_SUITE_P(Interpreter, ScanOutputLoop, ::testing::Bool());

// One Interpreter shared by four threads, each running the Loop at its own
// trip counts: results stay right and the body's kernel is still made once.
class ConcurrentLoop : public ::testing::TestWithParam<bool> {};

TEST_P(ConcurrentLoop, ConcurrentRunsShareTheKernelCache) {
  const bool interpret = GetParam();
  ScopedEnv env("OPENCANN_INTERPRET_BODIES", interpret ? "1" : "0");
  auto g = CumulativeLoop();
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  ThreadPool pool(1);
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 50; ++r) {
        const int64_t trips = (t + r) % 5;
        std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, trips)),
                                  RtValue::FromTensor(Floats({2}, {1.f, 2.f})),
                                  RtValue::FromTensor(Floats({2}, {0.f, 0.f}))};
        auto out = (*in)->Run(args, pool);
        if (!out.ok() || ToFloats((*out)[0].tensor) != std::vector<float>{1.f * trips, 2.f * trips}) ++bad[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
  EXPECT_EQ((*in)->kernels_created(), interpret ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Interpreter, ConcurrentLoop, ::testing::Bool());

// A carried value that grows every iteration (acc = Concat(acc, x)) would
// need a new compiled body per iteration; after a few the body runs node by
// node, and the result is the same.
TEST(Interpreter, GrowingLoopStateStopsCompilingTheBody) {
  ScopedEnv env("OPENCANN_INTERPRET_BODIES", "0");
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* m = Input(*g, "M", DataType::kInt64, {});
  Value* acc0 = Input(*g, "acc0", DataType::kFloat32, {1});
  uint8_t t = 1;
  Value* cond = g->AddConstant("cond", DataType::kBool, {}, TensorData::Copy(&t, 1));
  auto body = std::make_shared<Graph>();
  body->opset_imports = g->opset_imports;
  Input(*body, "i", DataType::kInt64, {});
  Value* c_in = Input(*body, "c_in", DataType::kBool, {});
  Value* acc_in = Input(*body, "acc_in", DataType::kFloat32, {-1});
  Value* acc_out = body->AddValue("acc_out");
  Value* c_out = body->AddValue("c_out");
  float one = 1.f;
  Value* k = body->AddConstant("one", DataType::kFloat32, {1}, TensorData::Copy(&one, 4));
  Node* cat = Add(*body, "Concat", {acc_in, k}, {acc_out});
  cat->SetInt("axis", 0);
  Add(*body, "Identity", {c_in}, {c_out});
  body->outputs = {c_out, acc_out};
  Value* fin = g->AddValue("final");
  Node* loop = Add(*g, "Loop", {m, cond, acc0}, {fin});
  Attribute a;
  a.kind = Attribute::Kind::kGraph;
  a.graph = body;
  loop->attrs["body"] = a;
  g->outputs = {fin};
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  ThreadPool pool(1);
  std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, 40)),
                            RtValue::FromTensor(Floats({1}, {5.f}))};
  auto out = (*in)->Run(args, pool);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const HostTensor& r = (*out)[0].tensor;
  ASSERT_EQ(r.shape, (std::vector<int64_t>{41}));
  EXPECT_EQ(ToFloats(r)[0], 5.f);
  EXPECT_EQ(ToFloats(r)[40], 1.f);
  // Iterations 0..kMaxBodySpecializations ran compiled bodies (the interpreter
  // made no kernel for them); from then on every iteration, at its own new
  // shape, made the body's Concat kernel in the interpreter.
  EXPECT_EQ((*in)->kernels_created(), 40 - (kMaxBodySpecializations + 1));
}

TEST(Interpreter, ErrorsNameTheNodeInsideTheBody) {
  auto g = CumulativeLoop();
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  ThreadPool pool(1);
  // x of another length than acc: the body's Add cannot broadcast [2] with [3].
  std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, 2)),
                            RtValue::FromTensor(Floats({2}, {1, 2})),
                            RtValue::FromTensor(Floats({2}, {1, 2}))};
  args[1].tensor = Floats({3}, {1, 2, 3});
  auto out = (*in)->Run(args, pool);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Loop node"), std::string::npos) << out.status().message();
}

// A graph loaded from a .om reaches the interpreter without shape inference:
// a Loop whose body does not fit it must fail with a message, not crash.
TEST(Interpreter, MalformedLoopIsAnError) {
  auto g = CumulativeLoop();
  Node* loop = g->nodes()[0].get();
  // Drop the loop-carried value: the body still expects one.
  loop->inputs.erase(loop->inputs.begin() + 2);
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  ThreadPool pool(1);
  std::vector<RtValue> args{RtValue::FromTensor(Scalar(DataType::kInt64, 2)),
                            RtValue::FromTensor(Floats({2}, {1, 2})),
                            RtValue::FromTensor(Floats({2}, {1, 2}))};
  auto out = (*in)->Run(args, pool);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("body has"), std::string::npos) << out.status().message();
}

// Half inputs of a kernel without a half path are computed in float32 and
// rounded back, as legalize-types arranges at compile time.
TEST(Interpreter, HalfInputsRunInFloat32WhereTheKernelHasNoHalfPath) {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* x = Input(*g, "x", DataType::kFloat16, {4});
  Value* y = g->AddValue("y");
  Add(*g, "Sigmoid", {x}, {y});
  g->outputs = {y};
  const OpDef* def = OpRegistry::Global().Find("", "Sigmoid", 17);
  ASSERT_TRUE(def);
  ASSERT_FALSE(KernelTakesType(*def, DataType::kFloat16)) << "pick an op without a float16 kernel";
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok());
  // 0, 1, -2, 0.5 in IEEE half.
  const uint16_t bits[4] = {0x0000, 0x3C00, 0xC000, 0x3800};
  HostTensor t = HostTensor::Allocate(DataType::kFloat16, {4});
  std::memcpy(t.data.mutable_data(), bits, sizeof bits);
  ThreadPool pool(1);
  auto out = (*in)->Run(std::vector<RtValue>{RtValue::FromTensor(t)}, pool);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const HostTensor& r = (*out)[0].tensor;
  ASSERT_EQ(r.dtype, DataType::kFloat16);
  const float xs[4] = {0.f, 1.f, -2.f, 0.5f};
  for (int i = 0; i < 4; ++i) {
    // Decode the half result by hand (normal numbers only here).
    uint16_t h = r.data.as<uint16_t>()[i];
    int e = (h >> 10) & 0x1f;
    float m = 1.f + static_cast<float>(h & 0x3ff) / 1024.f;
    float got = std::ldexp(m, e - 15) * ((h & 0x8000) ? -1.f : 1.f);
    EXPECT_NEAR(got, 1.f / (1.f + std::exp(-xs[i])), 1e-3) << i;
  }
}

TEST(Interpreter, SequenceOpsRoundTrip) {
  // SplitToSequence(x, axis 0) -> SequenceErase(first) -> ConcatFromSequence.
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* x = Input(*g, "x", DataType::kFloat32, {3, 2});
  Value* seq = g->AddValue("seq");
  Value* len = g->AddValue("len");
  Value* erased = g->AddValue("erased");
  Value* y = g->AddValue("y");
  int64_t zero = 0;
  Value* pos = g->AddConstant("pos", DataType::kInt64, {}, TensorData::Copy(&zero, 8));
  Add(*g, "SplitToSequence", {x}, {seq});
  Add(*g, "SequenceLength", {seq}, {len});
  Add(*g, "SequenceErase", {seq, pos}, {erased});
  Node* cat = Add(*g, "ConcatFromSequence", {erased}, {y});
  cat->SetInt("axis", 1);
  g->outputs = {len, y};
  auto in = Interpreter::Create(g);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ThreadPool pool(1);
  std::vector<RtValue> args{RtValue::FromTensor(Floats({3, 2}, {0, 1, 2, 3, 4, 5}))};
  auto out = (*in)->Run(args, pool);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor.data.as<int64_t>()[0], 3);
  // Rows [2,3] and [4,5], each [1,2], concatenated on axis 1: [[2,3,4,5]].
  EXPECT_EQ((*out)[1].tensor.shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(ToFloats((*out)[1].tensor), (std::vector<float>{2, 3, 4, 5}));
}

TEST(Interpreter, NeedsInterpreterSpotsControlFlowAndSequences) {
  EXPECT_TRUE(NeedsInterpreter(*CumulativeLoop()));
  Graph g;
  Value* x = Input(g, "x", DataType::kFloat32, {2});
  Value* y = g.AddValue("y");
  g.AddNode("Relu", "r", {x}, {y});
  g.outputs = {y};
  EXPECT_FALSE(NeedsInterpreter(g));
}

}  // namespace
}  // namespace oc
