// The offline model (.om) container: writer, verifying reader, JSON dump and
// summary. The byte layout is documented in docs/om_format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

// Static graphs are written as format version 1; graphs with unknown dims
// (compiled with CompileOptions::allow_dynamic) as version 2, which a reader
// of version 1 refuses by its version check rather than by a confusing shape
// error. This reader accepts both.
inline constexpr uint32_t kOmFormatVersion = 1;
inline constexpr uint32_t kOmFormatVersionDynamic = 2;
// Graphs with subgraphs (If/Loop/Scan bodies) or sequence/optional values are
// written as version 3, static or dynamic (Model.dynamic says which), so older
// readers refuse them by version.
inline constexpr uint32_t kOmFormatVersionSubgraphs = 3;

struct OmWriteOptions {
  std::string target;            // soc_version, e.g. "x86_64-avx512" / "host"
  std::string producer_version;  // OPENCANN_VERSION
  std::string source_framework = "onnx";
  // Per node: the inputs its prepacked bytes hold exactly (Executable::
  // PrepackedInputs()). A float32 constant that every node reading it lists
  // there (and that is no graph output) is then stored only inside those bytes
  // (header flag 0x1, docs/om_format.md). Empty: every raw constant is kept, as
  // in the files of earlier builds (which reject files with the flag).
  std::vector<std::vector<int>> prepacked_inputs;
};

// A model read back from a .om. `graph` is static and planned; constants are
// views into `storage` (mmapped file or a private copy). prepacked[i] belongs to
// graph.nodes()[i].
struct OmModel {
  std::shared_ptr<const void> storage;
  std::shared_ptr<Graph> graph;
  std::vector<std::span<const uint8_t>> prepacked;
  uint32_t format_version = 0;
  bool dynamic = false;          // format version 2: unknown dims, no memory plan
  std::string producer_version;
  std::string target;
  std::string source_framework;
  uint64_t weights_size = 0;     // bytes of the weight blob
  // Constants stored only inside prepacked bytes (their Value's constant has
  // data() == nullptr; see Kernel::PrepackedInputs): how many, and their raw size.
  size_t packed_only_values = 0;
  uint64_t packed_only_bytes = 0;
  uint64_t file_size = 0;
};

// `graph` must be planned (arena offsets set), or dynamic (some input or node
// output not static; then written as format version 2 with its unknown dims).
// prepacked[i] for node i (may be empty).
Expected<std::vector<uint8_t>> SerializeOm(const Graph& graph,
                                           const std::vector<std::vector<uint8_t>>& prepacked,
                                           const OmWriteOptions& options);
Status WriteOmFile(const std::string& path, const Graph& graph,
                   const std::vector<std::vector<uint8_t>>& prepacked, const OmWriteOptions& options);

// Per value id: the node whose prepacked bytes alone SerializeOm would store
// the value in (Value.packed_in_node), or -1 where it keeps the raw data.
std::vector<int32_t> PlanPackedOnlyWeights(const Graph& graph,
                                           const std::vector<std::vector<uint8_t>>& prepacked,
                                           const OmWriteOptions& options);

// Verifies everything (magic, versions, checksum, every offset and size, every
// index, dtype and op) before building the graph. Never crashes on bad input.
Expected<OmModel> LoadOmFile(const std::string& path);
// Copies `data` unless `copy` is false, in which case it must outlive the model.
Expected<OmModel> LoadOmMemory(const void* data, size_t size, bool copy = true);

// The target string this build writes for the host ("x86_64-avx512", ...).
std::string HostTarget();

std::string OmToJson(const OmModel& model);  // atc --mode=1
std::string OmSummary(const OmModel& model); // atc --mode=6

}  // namespace oc
