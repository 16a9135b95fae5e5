// The com.opencann NCHWc ops (contract in nchwc.h): shape inference and the
// kernels. Parallel work is split evenly over the pool's threads (contiguous
// ranges of equal-cost units), so 2 threads both stay busy.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/conv/conv_winograd.h"
#include "ops/cpu/nchwc/nchwc.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// Smallest work worth a second thread, in multiply-adds (a ParallelFor costs ~1 us).
constexpr int64_t kMinParallelWork = 1 << 15;

Expected<int> BlockOf(const Node& node) {
  const int64_t block = node.GetInt("block", 0);
  if (block != 8 && block != 16)
    return InvalidArgument(node.Describe(), ": attribute block must be 8 or 16, got ", block);
  return static_cast<int>(block);
}

// Checks that v is [N, ceil(channels/block), H, W, block] for some N, H, W.
Status CheckBlocked(const Node& node, const Value& v, const char* what, int block) {
  if (v.shape.size() != 5 || (v.shape[4] >= 0 && v.shape[4] != block))
    return InvalidArgument(node.Describe(), ": ", what, " must be blocked [N, C/", block, ", H, W, ", block,
                           "], got ", v.ShapeString());
  return Status::Ok();
}

int64_t CeilDiv(int64_t a, int64_t b) { return a < 0 ? -1 : (a + b - 1) / b; }

template <typename F>
void Split(ThreadPool* pool, int64_t units, int64_t work_per_unit, F fn) {
  const int64_t grain = std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, work_per_unit));
  pool->ParallelFor(units, grain, std::move(fn));
}

// ---- Reorders ------------------------------------------------------------------

Status InferReorderTo(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(int block, BlockOf(node));
  const Value& x = *node.input(0);
  if (x.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": input must be NCHW (rank 4), got ", x.ShapeString());
  SetOutput(node, 0, x.dtype, {x.shape[0], CeilDiv(x.shape[1], block), x.shape[2], x.shape[3], block});
  return Status::Ok();
}

Status InferReorderFrom(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(int block, BlockOf(node));
  const Value& x = *node.input(0);
  OC_RETURN_IF_ERROR(CheckBlocked(node, x, "input", block));
  const int64_t channels = node.GetInt("channels", -1);
  if (channels < 1 || (x.shape[1] >= 0 && CeilDiv(channels, block) != x.shape[1]))
    return InvalidArgument(node.Describe(), ": attribute channels (", channels, ") must be in ((",
                           x.shape[1], " - 1) * ", block, ", ", x.shape[1], " * ", block, "]");
  SetOutput(node, 0, x.dtype, {x.shape[0], channels, x.shape[2], x.shape[3]});
  return Status::Ok();
}

class ReorderKernel final : public Kernel {
 public:
  ReorderKernel(bool to_blocked, int64_t n, int64_t c, int64_t h, int64_t w, int block)
      : to_(to_blocked), n_(n), c_(c), h_(h), w_(w), block_(block) {}
  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    float* y = io.out<float>(0);
    const int64_t units = n_ * CeilDiv(c_, block_) * h_;
    Split(io.pool, units, w_ * block_ * 4, [&](int64_t b, int64_t e) {
      if (to_) nchwc::ReorderToBlocked(x, y, c_, h_, w_, block_, b, e);
      else nchwc::ReorderFromBlocked(x, y, c_, h_, w_, block_, b, e);
    });
    return Status::Ok();
  }

 private:
  bool to_;
  int64_t n_, c_, h_, w_;
  int block_;
};

Status RequireFloat(const Node& node) {
  if (node.input(0)->dtype != DataType::kFloat32)
    return NotSupported(node.Describe(), ": only float32 is implemented, got ",
                        DataTypeName(node.input(0)->dtype));
  return Status::Ok();
}

Expected<KernelPtr> MakeReorder(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireFloat(n));
  OC_ASSIGN_OR_RETURN(int block, BlockOf(n));
  const bool to = n.op_type == "ReorderToNchwc";
  const auto& s = to ? n.input(0)->shape : n.output(0)->shape;
  return KernelPtr(std::make_unique<ReorderKernel>(to, s[0], s[1], s[2], s[3], block));
}

// ---- NchwcConv -------------------------------------------------------------------

Expected<ConvGeometry> ResolveNchwcConv(const Node& node, int block) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& w = *node.input(1);
  if (w.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": W must be [M, C/group, kH, kW], got ", w.ShapeString());
  const int64_t group = node.GetInt("group", 1);
  const int64_t c_in = w.shape[1] < 0 ? -1 : w.shape[1] * group;
  std::vector<int64_t> x4;
  if (node.GetInt("nchw_input", 0)) {
    if (x.shape.size() != 4)
      return InvalidArgument(node.Describe(), ": with nchw_input X must be [N, C, H, W], got ", x.ShapeString());
    x4 = x.shape;
  } else {
    OC_RETURN_IF_ERROR(CheckBlocked(node, x, "X", block));
    if (c_in >= 0 && x.shape[1] >= 0 && CeilDiv(c_in, block) != x.shape[1])
      return InvalidArgument(node.Describe(), ": X has ", x.shape[1], " channel blocks but W expects ", c_in,
                             " channels (", CeilDiv(c_in, block), " blocks of ", block, ")");
    x4 = {x.shape[0], c_in, x.shape[2], x.shape[3]};
  }
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConv(node, x4, w.shape));
  if (g.nd != 2) return InvalidArgument(node.Describe(), ": only 2-D convolutions are blocked");
  if (g.group != 1 && !(g.group == g.c_in && g.group == g.c_out))
    return InvalidArgument(node.Describe(), ": group must be 1 or the channel count (depthwise), got ", g.group);
  return g;
}

Status InferNchwcConv(Node& node) {
  OC_ASSIGN_OR_RETURN(int block, BlockOf(node));
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveNchwcConv(node, block));
  const std::vector<int64_t> out = {g.batch, CeilDiv(g.c_out, block), g.out[1], g.out[2], block};
  if (const Value* b = node.input(2); b && b->has_shape && (b->shape.size() != 1 || b->shape[0] != g.c_out))
    return InvalidArgument(node.Describe(), ": bias B must be 1-D with ", g.c_out, " values, got ",
                           b->ShapeString());
  if (const Value* z = node.input(3); z && z->has_shape && z->shape != out)
    return InvalidArgument(node.Describe(), ": residual Z has shape ", z->ShapeString(),
                           " but the blocked output has shape ", ShapeToString(out));
  SetOutput(node, 0, node.input(0)->dtype, out);
  return Status::Ok();
}

class NchwcConvKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    OC_RETURN_IF_ERROR(RequireFloat(n));
    OC_ASSIGN_OR_RETURN(int block, BlockOf(n));
    OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveNchwcConv(n, block));
    OC_ASSIGN_OR_RETURN(act_, ActivationFromNode(n));
    s_.block = block;
    s_.nchw_input = n.GetInt("nchw_input", 0) != 0;
    s_.depthwise = g.group > 1;
    if (s_.depthwise && s_.nchw_input)
      return InvalidArgument(n.Describe(), ": a depthwise NchwcConv needs blocked input");
    s_.batch = g.batch, s_.c_in = g.c_in, s_.c_out = g.c_out;
    s_.in_h = g.in[1], s_.in_w = g.in[2], s_.out_h = g.out[1], s_.out_w = g.out[2];
    s_.k_h = g.kernel[1], s_.k_w = g.kernel[2], s_.stride_h = g.stride[1], s_.stride_w = g.stride[2];
    s_.dil_h = g.dilation[1], s_.dil_w = g.dilation[2], s_.pad_t = g.pad_begin[1], s_.pad_l = g.pad_begin[2];
    kernel_ = nchwc::SelectConvKernel(block);
    if (!kernel_.run) return NotSupported(n.Describe(), ": no conv kernel for block ", block);

    bias_.assign(static_cast<size_t>(s_.OutBlocks() * block), 0.f);
    if (const Value* b = n.input(2)) {
      if (!b->constant) return NotSupported(n.Describe(), ": bias B must be a constant");
      std::memcpy(bias_.data(), b->constant->data(), static_cast<size_t>(s_.c_out) * sizeof(float));
    }
    // 3x3 stride-1 convs the Winograd path prefers run it on the blocked
    // layout (WinogradConv::RunBlocked: 2.25x fewer multiplies). Its packed
    // weights are not W itself, so W stays stored raw (PrepackedInputs is
    // empty then); a .om whose W is stored only in our packed bytes runs direct.
    const size_t floats = static_cast<size_t>(s_.PackedWeightFloats());
    const bool ours = init.prepacked.size() == floats * sizeof(float);
    const Value& wv = *n.input(1);
    const float* wdata = wv.constant && wv.constant->data() ? wv.constant->as<float>() : nullptr;
    if (!s_.nchw_input && !s_.depthwise && WinogradPreferred(g)) {
      std::vector<float> raw;
      if (!wdata && ours) {
        // W stored only in our packed bytes (compiled where Winograd was off):
        // rebuilt, so that the result does not depend on how the .om stored W.
        raw.resize(static_cast<size_t>(s_.c_out * s_.c_in * s_.k_h * s_.k_w));
        nchwc::UnpackConvWeights(s_, reinterpret_cast<const float*>(init.prepacked.data()), raw.data());
        wdata = raw.data();
      }
      if (wdata) {
        wino_ = WinogradConv(g, wdata, ours ? std::span<const uint8_t>{} : init.prepacked, init.max_threads);
        if (wino_.valid()) return Status::Ok();
      }
    }

    if (ours) {
      weights_ = reinterpret_cast<const float*>(init.prepacked.data());
    } else {
      const Value& w = *n.input(1);
      if (!w.constant)
        return NotSupported(n.Describe(), ": weights W must be a constant (packed once at load)");
      if (!w.constant->data())
        return InvalidArgument(n.Describe(), ": W is stored only prepacked, but the prepacked bytes are ",
                               init.prepacked.size(), " bytes instead of ", floats * sizeof(float));
      packed_.resize(floats);
      nchwc::PackConvWeights(s_, w.constant->as<float>(), packed_.data());
      weights_ = packed_.data();
    }
    // A pointwise conv is one long row per image: full tiles run across the
    // row ends of the plane. A strided one (ResNet's downsample convs) first
    // gathers the pixels it reads into the scratch (a copy of the output's
    // size), as its 7- and 14-pixel rows otherwise take 1-pixel tiles that
    // stream all weights for one pixel.
    const bool one_by_one = !s_.depthwise && !s_.nchw_input && s_.k_h == 1 && s_.k_w == 1 && s_.pad_t == 0 &&
                            s_.pad_l == 0 && g.pad_end[1] == 0 && g.pad_end[2] == 0;
    if (one_by_one && (s_.stride_h != 1 || s_.stride_w != 1)) {
      sub_ = {s_.in_h, s_.in_w, s_.stride_h, s_.stride_w, s_.out_h, s_.out_w};
      s_.in_h = s_.out_h, s_.in_w = s_.out_w, s_.stride_h = s_.stride_w = 1;
    }
    if (one_by_one) {
      s_.in_w = s_.out_w = s_.in_h * s_.in_w;
      s_.in_h = s_.out_h = 1;
    }
    nchwc::PlanConvUnits(s_, kernel_.fb, init.max_threads);
    units_ = nchwc::ConvWorkUnits(s_, kernel_.fb);
    const int64_t macs = s_.batch * s_.OutBlocks() * block * s_.out_h * s_.out_w * s_.k_h * s_.k_w *
                         (s_.depthwise ? 1 : s_.c_in);
    work_per_unit_ = macs / std::max<int64_t>(1, units_);
    return Status::Ok();
  }

  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    std::vector<float> local;
    if (wino_.valid()) {
      void* scratch = io.scratch;
      if (!scratch) {
        local.resize(wino_.ScratchBytes() / sizeof(float) + 16);
        void* p = local.data();
        size_t space = local.size() * sizeof(float);
        scratch = std::align(64, wino_.ScratchBytes(), p, space);
      }
      wino_.RunBlocked(s_.block, x, bias_.data(), io.num_inputs > 3 ? io.in<float>(3) : nullptr, io.out<float>(0),
                       act_, io.pool, scratch);
      return Status::Ok();
    }
    if (sub_.in_h) {
      float* dst = static_cast<float*>(io.scratch);
      if (!dst) {
        local.resize(ScratchBytes() / sizeof(float));
        dst = local.data();
      }
      Subsample(x, dst, io.pool);
      x = dst;
    }
    nchwc::ConvArgs a{&s_, x, weights_, bias_.data(), io.num_inputs > 3 ? io.in<float>(3) : nullptr,
                      io.out<float>(0), act_};
    Split(io.pool, units_, work_per_unit_, [&](int64_t b, int64_t e) { kernel_.run(a, b, e); });
    return Status::Ok();
  }

  size_t ScratchBytes() const override {
    if (wino_.valid()) return wino_.ScratchBytes();
    if (!sub_.in_h) return 0;
    return static_cast<size_t>(s_.batch * s_.InBlocks() * sub_.out_h * sub_.out_w * s_.block) * sizeof(float);
  }

  std::vector<uint8_t> ExportPrepacked() const override {
    if (wino_.valid()) return wino_.ExportPrepacked();
    const auto* p = reinterpret_cast<const uint8_t*>(weights_);
    return std::vector<uint8_t>(p, p + s_.PackedWeightFloats() * sizeof(float));
  }
  // The packed weights hold W exactly (zero padded; the layout depends on the
  // node's block attribute only, not on the ISA that runs it).
  std::vector<int> PrepackedInputs() const override {
    if (wino_.valid()) return {};
    return {1};
  }

 private:
  nchwc::ConvShape s_;
  nchwc::ConvKernelChoice kernel_;
  Activation act_;
  std::vector<float> packed_;
  const float* weights_ = nullptr;
  std::vector<float> bias_;
  int64_t units_ = 0, work_per_unit_ = 0;
  WinogradConv wino_;  // valid when the blocked Winograd path runs this node
  // Strided pointwise convs: the input's own size and strides (in_h = 0: none).
  struct {
    int64_t in_h = 0, in_w = 0, stride_h = 1, stride_w = 1, out_h = 0, out_w = 0;
  } sub_;

  // Copies the pixels a strided pointwise conv reads into [N, Cb, OH, OW, c].
  void Subsample(const float* x, float* dst, ThreadPool* pool) const {
    const int64_t c = s_.block, oh = sub_.out_h, ow = sub_.out_w;
    const int64_t rows = s_.batch * s_.InBlocks() * oh;
    Split(pool, rows, ow * c, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t plane = r / oh, y = r % oh;
        const float* src = x + (plane * sub_.in_h + y * sub_.stride_h) * sub_.in_w * c;
        float* d = dst + r * ow * c;
        for (int64_t i = 0; i < ow; ++i)
          std::memcpy(d + i * c, src + i * sub_.stride_w * c, static_cast<size_t>(c) * sizeof(float));
      }
    });
  }
};

Expected<KernelPtr> MakeNchwcConv(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  auto k = std::make_unique<NchwcConvKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

// ---- Pools -----------------------------------------------------------------------

// 2-D pool geometry on the blocked input (explicit pads or auto_pad, ceil_mode).
Expected<nchwc::PoolShape> ResolvePool(const Node& node, int block) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_RETURN_IF_ERROR(CheckBlocked(node, x, "X", block));
  nchwc::PoolShape s;
  s.block = block;
  s.max = node.op_type == "NchwcMaxPool";
  s.count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  s.batch = x.shape[0], s.blocks = x.shape[1], s.in_h = x.shape[2], s.in_w = x.shape[3];
  const auto k = node.GetInts("kernel_shape");
  const auto st = node.GetInts("strides", {1, 1});
  const auto d = node.GetInts("dilations", {1, 1});
  auto pads = node.GetInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || st.size() != 2 || d.size() != 2 || pads.size() != 4)
    return InvalidArgument(node.Describe(), ": kernel_shape, strides, dilations need 2 values and pads 4");
  const bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  const int64_t in[2] = {s.in_h, s.in_w};
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    if (k[i] < 1 || st[i] < 1 || d[i] < 1 || pads[i] < 0 || pads[i + 2] < 0)
      return InvalidArgument(node.Describe(), ": kernel_shape, strides, dilations >= 1 and pads >= 0 expected");
    const int64_t extent = (k[i] - 1) * d[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = (in[i] + st[i] - 1) / st[i];
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * st[i] + extent - in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
      continue;
    }
    if (auto_pad == "VALID") pads[i] = pads[i + 2] = 0;
    else if (auto_pad != "NOTSET" && !auto_pad.empty())
      return InvalidArgument(node.Describe(), ": unknown auto_pad '", auto_pad, "'");
    const int64_t span = in[i] + pads[i] + pads[i + 2] - extent;
    if (span < 0) return InvalidArgument(node.Describe(), ": spatial dim ", i, " is smaller than the kernel");
    out[i] = (ceil_mode ? (span + st[i] - 1) / st[i] : span / st[i]) + 1;
    if (ceil_mode && (out[i] - 1) * st[i] >= in[i] + pads[i]) --out[i];
  }
  s.out_h = out[0], s.out_w = out[1];
  s.k_h = k[0], s.k_w = k[1], s.stride_h = st[0], s.stride_w = st[1], s.dil_h = d[0], s.dil_w = d[1];
  s.pad_t = pads[0], s.pad_l = pads[1], s.pad_b = pads[2], s.pad_r = pads[3];
  return s;
}

Status InferNchwcPool(Node& node) {
  OC_ASSIGN_OR_RETURN(int block, BlockOf(node));
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (node.op_type == "NchwcGlobalAveragePool") {
    OC_RETURN_IF_ERROR(CheckBlocked(node, x, "X", block));
    SetOutput(node, 0, x.dtype, {x.shape[0], x.shape[1], 1, 1, block});
    return Status::Ok();
  }
  OC_ASSIGN_OR_RETURN(nchwc::PoolShape s, ResolvePool(node, block));
  SetOutput(node, 0, x.dtype, {s.batch, s.blocks, s.out_h, s.out_w, block});
  return Status::Ok();
}

class NchwcPoolKernel final : public Kernel {
 public:
  explicit NchwcPoolKernel(const nchwc::PoolShape& s) : s_(s), fn_(nchwc::SelectPoolKernels().pool) {}
  Status Run(const KernelIO& io) override {
    Split(io.pool, s_.batch * s_.blocks * s_.out_h, s_.out_w * s_.k_h * s_.k_w * s_.block,
          [&](int64_t b, int64_t e) { fn_(s_, io.in<float>(0), io.out<float>(0), b, e); });
    return Status::Ok();
  }

 private:
  nchwc::PoolShape s_;
  nchwc::PoolFn fn_;
};

class NchwcGlobalAverageKernel final : public Kernel {
 public:
  NchwcGlobalAverageKernel(int64_t units, int64_t hw, int block)
      : units_(units), hw_(hw), block_(block), fn_(nchwc::SelectPoolKernels().global_average) {}
  Status Run(const KernelIO& io) override {
    Split(io.pool, units_, hw_ * block_,
          [&](int64_t b, int64_t e) { fn_(io.in<float>(0), io.out<float>(0), hw_, block_, b, e); });
    return Status::Ok();
  }

 private:
  int64_t units_, hw_;
  int block_;
  nchwc::GlobalAverageFn fn_;
};

Expected<KernelPtr> MakeNchwcPool(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireFloat(n));
  OC_ASSIGN_OR_RETURN(int block, BlockOf(n));
  if (n.op_type == "NchwcGlobalAveragePool") {
    const auto& x = n.input(0)->shape;
    OC_RETURN_IF_ERROR(CheckBlocked(n, *n.input(0), "X", block));
    return KernelPtr(std::make_unique<NchwcGlobalAverageKernel>(x[0] * x[1], x[2] * x[3], block));
  }
  OC_ASSIGN_OR_RETURN(nchwc::PoolShape s, ResolvePool(n, block));
  return KernelPtr(std::make_unique<NchwcPoolKernel>(s));
}

}  // namespace

void RegisterNchwcOps(OpRegistry& r) {
  auto reg = [&](const char* op, InferFn infer, KernelFactory cpu) {
    r.Register({.domain = kOpenCannDomain, .op_type = op, .min_opset = 1, .max_opset = 1, .infer = infer,
                .kernels = CpuKernel(cpu)});
  };
  reg("ReorderToNchwc", InferReorderTo, MakeReorder);
  reg("ReorderFromNchwc", InferReorderFrom, MakeReorder);
  reg("NchwcConv", InferNchwcConv, MakeNchwcConv);
  reg("NchwcMaxPool", InferNchwcPool, MakeNchwcPool);
  reg("NchwcAveragePool", InferNchwcPool, MakeNchwcPool);
  reg("NchwcGlobalAveragePool", InferNchwcPool, MakeNchwcPool);
}

}  // namespace oc
