// The profiling tracer: timed records of model nodes, AscendCL API calls,
// memory copies, model loads and model runs, gathered while a profiling
// session is on (aclprofStart, msprof, msame --profiler).
//
// Cost model. Off: every instrumented site reads one relaxed atomic word and
// takes a predictable branch (the executor does this once per run, not once
// per node). On: a record is two clock reads plus a 48-byte store into the
// calling thread's ring; no lock, no allocation. Each thread that records owns
// a fixed ring (allocated once, on its first record); a collector thread drains
// the rings into the session every few milliseconds. A ring that fills faster
// than it drains drops records and counts them (reported with the data).
//
// Build with -DOC_NO_TRACE to compile every site out (for measuring the cost
// of the off-path check itself).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace oc {
class Graph;
class Node;
}  // namespace oc

namespace oc::trace {

// Data-type bits; the values are CANN's ACL_PROF_* masks.
inline constexpr uint64_t kAclApi = 0x0001;     // ACL_PROF_ACL_API
inline constexpr uint64_t kTaskTime = 0x0002;   // ACL_PROF_TASK_TIME
inline constexpr uint64_t kTaskTimeL0 = 0x0800; // ACL_PROF_TASK_TIME_L0
inline constexpr uint64_t kTasks = kTaskTime | kTaskTimeL0;
inline constexpr uint64_t kAll = kAclApi | kTasks;

enum class Kind : uint8_t {
  kNode = 0,       // one executed node (task)
  kApi = 1,        // one AscendCL API call
  kMemcpy = 2,     // one host/device copy (arg = bytes, node = aclrtMemcpyKind)
  kModelLoad = 3,  // building a model from a .om
  kModelRun = 4,   // one model execution, on the stream that ran it
};
const char* KindName(Kind k);

struct Record {
  int64_t start_ns = 0;  // NowNs()
  int64_t end_ns = 0;
  uint64_t arg = 0;      // kApi: the function name (a static const char*); kMemcpy: bytes
  uint32_t model = 0;    // AscendCL model id, 0 if none
  uint32_t graph = 0;    // kNode: the tracer's graph id (RegisterGraph)
  uint32_t node = 0;     // kNode: step index in the graph; kMemcpy: copy kind
  uint16_t stream = 0;   // the stream whose worker recorded it, 0 for caller threads
  Kind kind = Kind::kNode;
  uint8_t reserved = 0;
};
static_assert(sizeof(Record) == 40);

namespace detail {
extern std::atomic<uint64_t> g_mask;
}

// True when any of `bits` is being recorded.
inline bool On(uint64_t bits) {
#ifdef OC_NO_TRACE
  (void)bits;
  return false;
#else
  return (detail::g_mask.load(std::memory_order_relaxed) & bits) != 0;
#endif
}
// True when any profiling session is recording.
inline bool Active() { return On(~uint64_t{0}); }

// Monotonic, system-wide clock (CLOCK_MONOTONIC), in nanoseconds.
int64_t NowNs();

// Appends to the calling thread's ring (no lock, no allocation after the
// thread's first record).
void Emit(const Record& r);

// The stream and model this thread is working for (read into each record).
// Stream workers bind themselves once; model runs set the model around a run.
void BindStreamThread();   // gives the calling thread the next stream id
uint32_t ThreadStream();
uint32_t ThreadModel();
void SetThreadModel(uint32_t model);

inline void EmitNode(uint32_t graph, uint32_t node, int64_t start_ns, int64_t end_ns) {
  Record r;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.model = ThreadModel();
  r.graph = graph;
  r.node = node;
  r.stream = static_cast<uint16_t>(ThreadStream());
  r.kind = Kind::kNode;
  Emit(r);
}

// Times a region when any of `bits` is on at its start.
class Scope {
 public:
  Scope(Kind kind, uint64_t bits, uint64_t arg = 0, uint32_t node = 0) : on_(On(bits)) {
    if (on_) {
      r_.kind = kind;
      r_.arg = arg;
      r_.node = node;
      r_.start_ns = NowNs();
    }
  }
  ~Scope() {
    if (on_) {
      r_.end_ns = NowNs();
      if (!r_.model) r_.model = ThreadModel();
      r_.stream = static_cast<uint16_t>(ThreadStream());
      Emit(r_);
    }
  }
  void set_model(uint32_t model) { r_.model = model; }
  bool on() const { return on_; }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool on_;
  Record r_;
};

// A model execution on this thread: node records inside carry `model`, and the
// whole run becomes one kModelRun record.
class ModelRunScope {
 public:
  explicit ModelRunScope(uint32_t model) : scope_(Kind::kModelRun, kTasks) {
    if (scope_.on()) {
      prev_ = ThreadModel();
      SetThreadModel(model);
      scope_.set_model(model);
    }
  }
  ~ModelRunScope() {
    if (scope_.on()) SetThreadModel(prev_);
  }
  ModelRunScope(const ModelRunScope&) = delete;
  ModelRunScope& operator=(const ModelRunScope&) = delete;

 private:
  Scope scope_;  // emits after the destructor's body restored the model
  uint32_t prev_ = 0;
};

// ---- Graph metadata ---------------------------------------------------------

// What a node record refers to: computed once per graph, when it is first
// traced (or at load while a session is on), never on the hot path.
struct NodeInfo {
  std::string name, op_type;
  std::string input_shapes, input_dtypes, input_formats;    // ';' between tensors
  std::string output_shapes, output_dtypes, output_formats;
  int64_t flops = 0;
  uint32_t block_dim = 0;  // Ascend C kernels: the launch's block count (0: a graph node)
};
struct GraphInfo {
  uint32_t id = 0;
  std::string name;
  std::vector<NodeInfo> nodes;  // in execution order
};

// Floating-point operations of one execution of `n` from its static shapes:
// 2*MACs for Conv/ConvTranspose/Gemm/MatMul (and their fused forms) and
// attention, otherwise the output element count (0 when shapes are unknown).
int64_t NodeFlops(const Node& n);
// Registers `g`'s nodes in execution order and returns their graph id (>= 1).
uint32_t RegisterGraph(const Graph& g);
// A one-node graph for an Ascend C kernel launched with `block_dim` blocks
// (one id per kernel name and block count).
uint32_t RegisterKernel(const std::string& kernel, uint32_t block_dim);

// ---- Sessions ---------------------------------------------------------------

// One process's collected data, in a form the report writer and the raw file
// format share.
struct Event {
  Kind kind = Kind::kNode;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t thread = 0;   // index into ProfData::threads
  uint32_t stream = 0;
  uint32_t model = 0;
  int32_t graph = -1;    // index into ProfData::graphs (kNode)
  uint32_t node = 0;
  uint64_t bytes = 0;    // kMemcpy
  std::string name;      // kApi: the function; kMemcpy: the copy kind
};
struct ThreadInfo {
  int64_t pid = 0;
  int64_t os_tid = 0;
  uint32_t stream = 0;  // 0 for caller threads
};
struct ProfData {
  int64_t pid = 0;
  std::string process;  // the program's name
  std::vector<GraphInfo> graphs;
  std::vector<ThreadInfo> threads;
  std::vector<Event> events;  // in emission order per thread
  uint64_t dropped = 0;       // records lost to full rings
};

// Starts recording `bits` (adds to what is already recorded).
void Start(uint64_t bits);
// Stops recording and gathers what the rings hold into the session.
void Stop();
// Hands over (and clears) everything gathered since the last call.
ProfData TakeData();

// Environment mode (msprof): when OPENCANN_PROF_DIR is set, the first call
// starts a session recording OPENCANN_PROF_MASK (default: everything), and
// FlushEnvSession writes the data gathered so far to
// $OPENCANN_PROF_DIR/data/<pid>_<n>.ocprof (also run at exit).
// Returns true when environment mode is on.
bool StartEnvSession();
void FlushEnvSession();
bool EnvSessionActive();

}  // namespace oc::trace
