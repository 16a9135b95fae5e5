// The device interface: what the runtime asks of every device — memory,
// copies, streams, events, kernel launch and synchronisation — and how nodes
// are placed on devices.
//
// A device is a folder under src/runtime/device/ (cpu/ is the one built into
// the library; null/ is a test-only device) plus the kernels it registers for
// existing ops (OpRegistry::RegisterKernel under its type name, or a table in
// OpDef::kernels for devices built into the op library). Placement follows ONNX
// Runtime's execution providers: an Executable is given devices in priority
// order; each node goes to the first whose FindKernel returns a kernel for it,
// and to the CPU, which has a kernel for every op, otherwise.
//
// Streams are in-order task queues and events mark points in them (stream.h
// has the host implementation, used by every device whose work the host
// drives). Today every device's memory is host-accessible, so tensors cross
// between devices without copies; placing a node on a device whose memory the
// host cannot read is refused as not supported until copy insertion exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "ops/kernel.h"
#include "ops/op_registry.h"
#include "runtime/device/stream.h"

namespace oc::rt {

enum class CopyKind { kHostToHost, kHostToDevice, kDeviceToHost, kDeviceToDevice };

class Device {
 public:
  virtual ~Device() = default;

  // The type name its kernels are registered under ("cpu").
  virtual std::string_view type() const = 0;
  // The host may read and write this device's memory directly.
  virtual bool host_accessible() const = 0;

  // ---- Memory: 64-byte aligned, uninitialised; bytes > 0. Free takes exactly
  // what Allocate returned (anything else is an error, not a crash).
  virtual Expected<void*> Allocate(size_t bytes) = 0;
  virtual Status Free(void* p) = 0;
  // Synchronous copy of `bytes` bytes; the ranges must not overlap.
  virtual Status Copy(void* dst, const void* src, size_t bytes, CopyKind kind) = 0;

  // ---- Streams and events.
  virtual std::unique_ptr<Stream> CreateStream() = 0;
  virtual std::unique_ptr<Event> CreateEvent(bool timing) { return std::make_unique<Event>(timing); }
  // Waits until every task on every live stream of this device has run;
  // returns the first task error among them (and clears it, as a stream
  // synchronisation does).
  virtual Status Synchronize() = 0;

  // ---- Kernels.
  // This device's kernel factory for `node` (whose op is `def`), or nullptr
  // when it does not run it (the node then falls back to the next device,
  // finally the CPU). The default claims every op that has a kernel for this
  // device type; a device overrides it to decline by dtype or shape, as an
  // execution provider's capability check does.
  virtual KernelFactory FindKernel(const Node& node, const OpDef& def) const {
    return def.kernels.Find(type());
  }
  // Runs one kernel placed on this device, in the order of the calling stream
  // (the executor calls it from the stream task that runs the model).
  virtual Status Launch(Kernel& kernel, const KernelIO& io) = 0;
};

}  // namespace oc::rt
