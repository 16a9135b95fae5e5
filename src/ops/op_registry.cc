#include "ops/op_registry.h"

namespace oc {

#define OC_OP_GROUP(name) void Register##name##Ops(OpRegistry& registry);
#include "ops/op_groups.inc"
#undef OC_OP_GROUP

std::string CanonicalDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
#define OC_OP_GROUP(name) Register##name##Ops(*r);
#include "ops/op_groups.inc"
#undef OC_OP_GROUP
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(OpDef def) {
  def.domain = CanonicalDomain(def.domain);
  auto key = std::make_pair(def.domain, def.op_type);
  std::lock_guard<std::mutex> lock(mu_);
  ops_.emplace(std::move(key), std::move(def));
}

Status OpRegistry::RegisterKernel(std::string_view device, const std::string& domain,
                                  const std::string& op_type, KernelFactory factory) {
  std::lock_guard<std::mutex> lock(mu_);
  auto range = ops_.equal_range({CanonicalDomain(domain), op_type});
  if (range.first == range.second)
    return NotFound("cannot register a '", device, "' kernel for op ", op_type, " (domain '", domain,
                    "'): no such op is registered");
  for (auto it = range.first; it != range.second; ++it)
    if (!it->second.kernels.Set(device, factory))
      return ResourceExhausted("op ", op_type, " already has kernels for ", KernelTable::kMaxDevices,
                               " devices; cannot add '", device, "'");
  return Status::Ok();
}

void OpRegistry::UnregisterKernel(std::string_view device, const std::string& domain,
                                  const std::string& op_type) {
  std::lock_guard<std::mutex> lock(mu_);
  auto range = ops_.equal_range({CanonicalDomain(domain), op_type});
  for (auto it = range.first; it != range.second; ++it) it->second.kernels.Set(device, nullptr);
}

const OpDef* OpRegistry::Find(const std::string& domain, const std::string& op_type,
                              int opset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto range = ops_.equal_range({CanonicalDomain(domain), op_type});
  for (auto it = range.first; it != range.second; ++it)
    if (opset >= it->second.min_opset && opset <= it->second.max_opset) return &it->second;
  return nullptr;
}

const OpDef* OpRegistry::FindAnyVersion(const std::string& domain,
                                        const std::string& op_type) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find({CanonicalDomain(domain), op_type});
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<const OpDef*> OpRegistry::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const OpDef*> out;
  for (auto& [k, d] : ops_) out.push_back(&d);
  return out;
}

}  // namespace oc
