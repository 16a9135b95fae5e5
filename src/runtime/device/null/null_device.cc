#include "runtime/device/null/null_device.h"

#include <cstring>
#include <functional>
#include <new>

namespace oc::rt {
namespace {

// out = f(a, b) element by element over equal shapes (FindKernel admits no
// other case).
template <typename F>
class NullBinary final : public Kernel {
 public:
  explicit NullBinary(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const float* a = io.in<float>(0);
    const float* b = io.in<float>(1);
    float* y = io.out<float>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = F()(a[i], b[i]);
    return Status::Ok();
  }

 private:
  int64_t n_;
};

class NullRelu final : public Kernel {
 public:
  explicit NullRelu(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    float* y = io.out<float>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
    return Status::Ok();
  }

 private:
  int64_t n_;
};

template <typename F>
Expected<KernelPtr> MakeBinary(const KernelInit& init) {
  return KernelPtr(new NullBinary<F>(init.node.outputs[0]->NumElements()));
}

Expected<KernelPtr> MakeRelu(const KernelInit& init) {
  return KernelPtr(new NullRelu(init.node.outputs[0]->NumElements()));
}

struct Div {
  float operator()(float a, float b) const { return a / b; }
};

struct NullKernel {
  const char* op;
  KernelFactory factory;
};
const NullKernel kKernels[] = {
    {"Relu", MakeRelu},
    {"Add", MakeBinary<std::plus<float>>},
    {"Sub", MakeBinary<std::minus<float>>},
    {"Mul", MakeBinary<std::multiplies<float>>},
    {"Div", MakeBinary<Div>},
};

bool IsFloat32(const Value* v) { return v && v->dtype == DataType::kFloat32 && v->has_shape; }

}  // namespace

Status NullDevice::RegisterKernels() {
  for (const NullKernel& k : kKernels)
    OC_RETURN_IF_ERROR(OpRegistry::Global().RegisterKernel(kNullDevice, "", k.op, k.factory));
  return Status::Ok();
}

void NullDevice::UnregisterKernels() {
  for (const NullKernel& k : kKernels) OpRegistry::Global().UnregisterKernel(kNullDevice, "", k.op);
}

NullDevice::~NullDevice() {
  for (auto& [p, bytes] : blocks_) ::operator delete(p, std::align_val_t(64));
}

KernelFactory NullDevice::FindKernel(const Node& node, const OpDef& def) const {
  KernelFactory f = def.kernels.Find(type());
  if (!f || node.outputs.size() != 1 || !IsFloat32(node.outputs[0])) return nullptr;
  for (const Value* in : node.inputs)
    if (!IsFloat32(in) || in->shape != node.outputs[0]->shape) return nullptr;  // no broadcasting
  return f;
}

Status NullDevice::Launch(Kernel& kernel, const KernelIO& io) {
  launches_.fetch_add(1, std::memory_order_relaxed);
  return kernel.Run(io);
}

Expected<void*> NullDevice::Allocate(size_t bytes) {
  if (bytes == 0) return InvalidArgument("cannot allocate 0 bytes of null device memory");
  void* p = ::operator new(bytes, std::align_val_t(64), std::nothrow);
  if (!p) return ResourceExhausted("null device: cannot allocate ", bytes, " bytes");
  std::lock_guard<std::mutex> lock(mu_);
  blocks_[p] = bytes;
  return p;
}

Status NullDevice::Free(void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return InvalidArgument("null device: ", p, " is not a live allocation of this device");
  ::operator delete(p, std::align_val_t(64));
  blocks_.erase(it);
  return Status::Ok();
}

size_t NullDevice::live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (auto& [p, bytes] : blocks_) total += bytes;
  return total;
}

Status NullDevice::Copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return Status::Ok();
  if (!dst || !src) return InvalidArgument("null device: copy with a null pointer");
  auto inside = [&](const void* q) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.upper_bound(const_cast<void*>(q));
    if (it == blocks_.begin()) return false;
    --it;
    auto b = reinterpret_cast<uintptr_t>(it->first), x = reinterpret_cast<uintptr_t>(q);
    return x >= b && x + bytes <= b + it->second;
  };
  const bool dst_device = kind == CopyKind::kHostToDevice || kind == CopyKind::kDeviceToDevice;
  const bool src_device = kind == CopyKind::kDeviceToHost || kind == CopyKind::kDeviceToDevice;
  if ((dst_device && !inside(dst)) || (src_device && !inside(src)))
    return InvalidArgument("null device: copy range is not inside one allocation of this device");
  std::memmove(dst, src, bytes);
  return Status::Ok();
}

}  // namespace oc::rt
