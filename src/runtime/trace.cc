#include "runtime/trace.h"

#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/status.h"
#include "graph/graph.h"
#include "runtime/prof_report.h"

namespace oc::trace {

namespace detail {
std::atomic<uint64_t> g_mask{0};
}

namespace {

// 32768 records (1.25 MiB) per recording thread: at the collector's 5 ms
// period that absorbs more than 6 million records a second.
constexpr uint64_t kRingSize = uint64_t{1} << 15;
constexpr auto kDrainPeriod = std::chrono::milliseconds(5);

// Single producer (the owning thread), single consumer (the collector, under
// Tracer::mu). head and tail only grow; slot = index % kRingSize.
struct Ring {
  std::unique_ptr<Record[]> slots{new Record[kRingSize]};
  std::atomic<uint64_t> head{0};
  std::atomic<uint64_t> tail{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> exited{false};
  int64_t os_tid = 0;
  uint32_t stream = 0;
  uint32_t index = 0;  // into Tracer::threads
};

struct Collected {
  uint32_t thread;
  Record r;
};

struct Tracer {
  std::mutex mu;  // guards everything below
  std::vector<std::shared_ptr<Ring>> rings;
  std::vector<ThreadInfo> threads;  // every thread that ever recorded, by Ring::index
  std::vector<Collected> collected;
  uint64_t dropped = 0;
  uint64_t bits = 0;
  // Graphs by id (index = id - 1).
  std::vector<std::shared_ptr<const GraphInfo>> graphs;
  std::thread collector;
  std::condition_variable cv;
  // Each collector runs while this equals the value it started with, so a
  // Start racing with the join in Stop cannot revive the old collector.
  uint64_t collector_gen = 0;
  bool env_mode = false;
  bool env_checked = false;
  int env_flushes = 0;
};

Tracer& T() {
  // Never destroyed: threads may record during static destruction.
  static Tracer* t = new Tracer();
  return *t;
}

// Moves each ring's records into `collected`; drops rings of exited threads
// once empty. Needs T().mu. `keep` false discards them (stale records left by
// a previous session's stragglers).
void DrainLocked(Tracer& t, bool keep) {
  for (size_t i = 0; i < t.rings.size();) {
    Ring& ring = *t.rings[i];
    const bool exited = ring.exited.load(std::memory_order_acquire);
    const uint64_t head = ring.head.load(std::memory_order_acquire);
    uint64_t tail = ring.tail.load(std::memory_order_relaxed);
    if (keep) {
      for (; tail < head; ++tail) t.collected.push_back({ring.index, ring.slots[tail & (kRingSize - 1)]});
    }
    ring.tail.store(head, std::memory_order_release);
    const uint64_t lost = ring.dropped.exchange(0, std::memory_order_relaxed);
    if (keep) t.dropped += lost;
    if (exited && ring.head.load(std::memory_order_acquire) == head) {
      t.rings.erase(t.rings.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void CollectorLoop(uint64_t gen) {
  Tracer& t = T();
  std::unique_lock<std::mutex> lk(t.mu);
  while (t.collector_gen == gen) {
    t.cv.wait_for(lk, kDrainPeriod, [&] { return t.collector_gen != gen; });
    DrainLocked(t, true);
  }
}

thread_local uint32_t t_stream = 0;
thread_local uint32_t t_model = 0;

// Marks the ring as finished when its thread exits; the collector frees it.
struct RingHolder {
  Ring* ring = nullptr;
  ~RingHolder() {
    if (ring) ring->exited.store(true, std::memory_order_release);
    ring = nullptr;  // the collector may free it from now on
  }
};
thread_local RingHolder t_ring;

Ring* AttachRing() {
  auto ring = std::make_shared<Ring>();
  ring->os_tid = static_cast<int64_t>(::syscall(SYS_gettid));
  ring->stream = t_stream;
  Tracer& t = T();
  std::lock_guard<std::mutex> lk(t.mu);
  ring->index = static_cast<uint32_t>(t.threads.size());
  t.threads.push_back({static_cast<int64_t>(::getpid()), ring->os_tid, ring->stream});
  t.rings.push_back(ring);
  t_ring.ring = ring.get();
  return ring.get();
}

std::string Dims(const Value* v) {
  if (!v) return "";
  if (!v->has_shape) return "?";
  std::string s;
  for (size_t i = 0; i < v->shape.size(); ++i) {
    if (i) s += ',';
    s += v->shape[i] >= 0 ? std::to_string(v->shape[i]) : (i < v->dim_params.size() && !v->dim_params[i].empty()
                                                               ? v->dim_params[i] : std::string("?"));
  }
  return s;
}

std::string DtypeName(const Value* v) {
  if (!v) return "";
  std::string s = DataTypeName(v->dtype);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Our kernels take plain row-major tensors; the layout names follow the
// convention the model description uses (rank 4: NCHW, rank 5: NCDHW).
std::string FormatName(const Value* v) {
  if (!v) return "";
  if (v->has_shape && v->shape.size() == 4) return "NCHW";
  if (v->has_shape && v->shape.size() == 5) return "NCDHW";
  return "ND";
}

template <typename F>
std::string Join(const std::vector<Value*>& vs, F f) {
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) {
    if (i) s += ';';
    s += f(vs[i]);
  }
  return s;
}

int64_t Elements(const Value* v) {
  if (!v || !v->IsStatic()) return -1;
  return v->NumElements();
}

}  // namespace

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kNode: return "node";
    case Kind::kApi: return "api";
    case Kind::kMemcpy: return "memcpy";
    case Kind::kModelLoad: return "model_load";
    case Kind::kModelRun: return "model_run";
  }
  return "unknown";
}

int64_t NowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void Emit(const Record& r) {
  Ring* ring = t_ring.ring;
  if (!ring) ring = AttachRing();
  const uint64_t head = ring->head.load(std::memory_order_relaxed);
  if (head - ring->tail.load(std::memory_order_acquire) >= kRingSize) {
    ring->dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ring->slots[head & (kRingSize - 1)] = r;
  ring->head.store(head + 1, std::memory_order_release);
}

void BindStreamThread() {
  static std::atomic<uint32_t> next{1};
  t_stream = next.fetch_add(1, std::memory_order_relaxed);
}
uint32_t ThreadStream() { return t_stream; }
uint32_t ThreadModel() { return t_model; }
void SetThreadModel(uint32_t model) { t_model = model; }

int64_t NodeFlops(const Node& n) {
  const bool fused = n.domain == "com.opencann";
  const std::string& op = n.op_type;
  const Value* y = n.output(0);
  const int64_t out = Elements(y);
  auto weight_per_output = [&](const Value* w) -> int64_t {
    if (!w || !w->IsStatic() || w->shape.size() < 2) return -1;
    int64_t k = 1;
    for (size_t i = 1; i < w->shape.size(); ++i) k *= w->shape[i];
    return k;
  };
  if (op == "Conv" || (fused && op == "FusedConv") || op == "ConvInteger" || op == "QLinearConv") {
    // Each output element is a dot product over Cin/group * kernel taps.
    const int64_t k = weight_per_output(n.input(op == "QLinearConv" ? 3 : 1));
    return out > 0 && k > 0 ? 2 * out * k : 0;
  }
  if (fused && op == "NchwcConv") {
    // Blocked output [N, C/c, H, W, c]: the real channels are W's first dim,
    // the padding lanes of the last block do no useful work.
    const Value* w = n.input(1);
    const int64_t k = weight_per_output(w);
    if (!y || !y->IsStatic() || y->shape.size() != 5 || k <= 0) return 0;
    return 2 * y->shape[0] * w->shape[0] * y->shape[2] * y->shape[3] * k;
  }
  if (op == "ConvTranspose") {
    // Each input element scatters into Cout/group * kernel taps.
    const int64_t in = Elements(n.input(0));
    const int64_t k = weight_per_output(n.input(1));
    return in > 0 && k > 0 ? 2 * in * k : 0;
  }
  if (op == "MatMul" || (fused && op == "FusedMatMul") || op == "Gemm" || (fused && op == "FusedGemm") ||
      op == "MatMulInteger" || op == "QLinearMatMul") {
    const Value* a = n.input(0);
    if (!a || !a->IsStatic() || a->shape.empty() || out <= 0) return 0;
    int64_t k = a->shape.back();
    if ((op == "Gemm" || op == "FusedGemm") && n.GetInt("transA", 0) && a->shape.size() == 2) k = a->shape[0];
    if (a->shape.size() == 1) k = a->shape[0];
    return 2 * out * k;
  }
  if (op == "Attention" || op == "FlexAttention" || op == "MultiHeadAttention") {
    // Q.K^T and P.V: 2 * 2 * (query positions) * (key positions) * head size,
    // per batch and head; out = batch * heads * query positions * head size.
    const Value* k = n.input(1);
    if (!k || !k->IsStatic() || k->shape.size() < 2 || out <= 0) return 0;
    const int64_t kv_len = k->shape.size() == 4 ? k->shape[2] : k->shape[1];
    return 4 * out * kv_len;
  }
  return out > 0 ? out : 0;
}

uint32_t RegisterGraph(const Graph& g) {
  auto info = std::make_shared<GraphInfo>();
  info->name = g.name;
  info->nodes.reserve(g.nodes().size());
  for (auto& up : g.nodes()) {
    const Node& n = *up;
    NodeInfo ni;
    ni.name = n.name.empty() ? n.op_type : n.name;
    ni.op_type = n.op_type;
    ni.input_shapes = Join(n.inputs, Dims);
    ni.input_dtypes = Join(n.inputs, DtypeName);
    ni.input_formats = Join(n.inputs, FormatName);
    ni.output_shapes = Join(n.outputs, Dims);
    ni.output_dtypes = Join(n.outputs, DtypeName);
    ni.output_formats = Join(n.outputs, FormatName);
    ni.flops = NodeFlops(n);
    info->nodes.push_back(std::move(ni));
  }
  Tracer& t = T();
  std::lock_guard<std::mutex> lk(t.mu);
  info->id = static_cast<uint32_t>(t.graphs.size() + 1);
  t.graphs.push_back(info);
  return info->id;
}

uint32_t RegisterKernel(const std::string& kernel, uint32_t block_dim) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>, uint32_t>* ids = new std::map<std::pair<std::string, uint32_t>, uint32_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(kernel, block_dim);
  if (auto it = ids->find(key); it != ids->end()) return it->second;
  auto info = std::make_shared<GraphInfo>();
  info->name = "Ascend C kernel " + kernel;
  NodeInfo ni;
  ni.name = kernel;
  ni.op_type = kernel;
  ni.block_dim = block_dim;
  info->nodes.push_back(std::move(ni));
  Tracer& t = T();
  std::lock_guard<std::mutex> lk(t.mu);
  info->id = static_cast<uint32_t>(t.graphs.size() + 1);
  t.graphs.push_back(info);
  (*ids)[key] = info->id;
  return info->id;
}

void Start(uint64_t bits) {
  Tracer& t = T();
  std::lock_guard<std::mutex> lk(t.mu);
  if (t.bits == 0) {
    DrainLocked(t, false);  // stragglers from a previous session
    t.collector = std::thread(CollectorLoop, ++t.collector_gen);
  }
  t.bits |= bits;
  detail::g_mask.store(t.bits, std::memory_order_relaxed);
}

void Stop() {
  Tracer& t = T();
  std::thread collector;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (t.bits == 0) return;
    t.bits = 0;
    detail::g_mask.store(0, std::memory_order_relaxed);
    ++t.collector_gen;
    collector = std::move(t.collector);
  }
  t.cv.notify_all();
  if (collector.joinable()) collector.join();
  std::lock_guard<std::mutex> lk(t.mu);
  DrainLocked(t, true);
}

ProfData TakeData() {
  Tracer& t = T();
  std::vector<Collected> collected;
  ProfData d;
  std::vector<std::shared_ptr<const GraphInfo>> graphs;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    collected.swap(t.collected);
    d.threads = t.threads;
    d.dropped = t.dropped;
    t.dropped = 0;
    graphs = t.graphs;
  }
  d.pid = static_cast<int64_t>(::getpid());
  {
    std::ifstream comm("/proc/self/comm");
    std::getline(comm, d.process);
  }
  std::unordered_map<uint32_t, int32_t> graph_index;  // tracer id -> index in d.graphs
  // Only the threads that recorded in this session (renumbered).
  std::vector<ThreadInfo> all_threads;
  all_threads.swap(d.threads);
  std::unordered_map<uint32_t, uint32_t> thread_index;
  d.events.reserve(collected.size());
  for (const Collected& c : collected) {
    const Record& r = c.r;
    if (c.thread >= all_threads.size()) continue;
    Event e;
    e.kind = r.kind;
    e.start_ns = r.start_ns;
    e.end_ns = r.end_ns;
    auto [ti, new_thread] = thread_index.try_emplace(c.thread, static_cast<uint32_t>(d.threads.size()));
    if (new_thread) d.threads.push_back(all_threads[c.thread]);
    e.thread = ti->second;
    e.stream = r.stream;
    e.model = r.model;
    e.node = r.node;
    switch (r.kind) {
      case Kind::kNode: {
        if (r.graph == 0 || r.graph > graphs.size()) continue;
        auto [it, added] = graph_index.try_emplace(r.graph, static_cast<int32_t>(d.graphs.size()));
        if (added) d.graphs.push_back(*graphs[r.graph - 1]);
        if (r.node >= d.graphs[it->second].nodes.size()) continue;
        e.graph = it->second;
        break;
      }
      case Kind::kApi:
        e.name = r.arg ? reinterpret_cast<const char*>(r.arg) : "?";
        break;
      case Kind::kMemcpy: {
        static const char* const kKinds[] = {"HOST_TO_HOST", "HOST_TO_DEVICE", "DEVICE_TO_HOST",
                                             "DEVICE_TO_DEVICE"};
        e.name = r.node < 4 ? kKinds[r.node] : "DEFAULT";
        e.bytes = r.arg;
        break;
      }
      default:
        break;
    }
    d.events.push_back(std::move(e));
  }
  return d;
}

bool StartEnvSession() {
  Tracer& t = T();
  uint64_t bits = kAll;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (!t.env_checked) {
      t.env_checked = true;
      const char* dir = std::getenv("OPENCANN_PROF_DIR");
      t.env_mode = dir && *dir;
      if (t.env_mode) std::atexit([] { FlushEnvSession(); });
    }
    if (!t.env_mode) return false;
    if (const char* m = std::getenv("OPENCANN_PROF_MASK"); m && *m) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(m, &end, 0);
      if (end && *end == '\0' && v) bits = v;
    }
  }
  Start(bits);
  return true;
}

bool EnvSessionActive() {
  Tracer& t = T();
  std::lock_guard<std::mutex> lk(t.mu);
  return t.env_mode;
}

void FlushEnvSession() {
  Tracer& t = T();
  int seq;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (!t.env_mode) return;
    seq = t.env_flushes++;
  }
  Stop();
  ProfData d = TakeData();
  if (d.events.empty()) return;
  const std::filesystem::path dir = std::filesystem::path(std::getenv("OPENCANN_PROF_DIR")) / "data";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto path = dir / StrCat(d.pid, "_", seq, ".ocprof");
  Status st = WriteRaw(path.string(), d);
  if (!st.ok()) std::fprintf(stderr, "[OpenCANN][ERROR] profiling data not written: %s\n", st.ToString().c_str());
}

}  // namespace oc::trace
