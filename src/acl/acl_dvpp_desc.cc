// DVPP memory, channels, picture descriptions and the small configuration
// objects (ROI, resize, JPEG encode), and the checks the media calls share.
#include <map>

#include "acl/acl_dvpp_internal.h"

using namespace oc::acl;
using oc::StrCat;

namespace oc::acl {

HandleSet& PicDescs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& ChannelDescs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& RoiConfigs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& ResizeConfigs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& JpegeConfigs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& BatchPicDescs() {
  static HandleSet* s = new HandleSet();
  return *s;
}

namespace {

// Start addresses of the live acldvppMalloc blocks; their extent is the
// device memory registry's.
struct DvppBlocks {
  std::mutex mu;
  std::map<uintptr_t, size_t> blocks;
};
DvppBlocks& Blocks() {
  static DvppBlocks* b = new DvppBlocks();
  return *b;
}

std::atomic<uint64_t> g_next_channel{1};

aclError NullArg(const char* name) { return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL")); }

aclError NotLive(const char* what, const void* p, const char* create) {
  return Fail(ACL_ERROR_INVALID_PARAM,
              StrCat(what, " ", PtrString(p), " is not a live ", what, " (never made by ", create,
                     ", or already destroyed)"));
}

std::string ModeNames(uint32_t mode) {
  if (mode == 0) return "0 (all)";
  std::string s;
  const std::pair<uint32_t, const char*> names[] = {
      {DVPP_CHNMODE_VPC, "DVPP_CHNMODE_VPC"}, {DVPP_CHNMODE_JPEGD, "DVPP_CHNMODE_JPEGD"},
      {DVPP_CHNMODE_JPEGE, "DVPP_CHNMODE_JPEGE"}, {DVPP_CHNMODE_PNGD, "DVPP_CHNMODE_PNGD"}};
  for (auto [bit, name] : names)
    if (mode & bit) s += s.empty() ? name : StrCat(" | ", name);
  return s;
}

// The picture description behind a setter/getter handle, or null (error recorded).
PicFields* Fields(const acldvppPicDesc* d) {
  if (!d) {
    NullArg("picDesc");
    return nullptr;
  }
  if (!PicDescs().Contains(d)) {
    NotLive("picDesc", d, "acldvppCreatePicDesc or acldvppCreateBatchPicDesc");
    return nullptr;
  }
  return d->f.get();
}

template <typename T>
aclError SetPic(const char* fn, acldvppPicDesc* d, T PicFields::*field, T value) {
  return Guard(fn, [&]() -> aclError {
    PicFields* f = Fields(d);
    if (!f) return ACL_ERROR_INVALID_PARAM;
    f->*field = value;
    return ACL_SUCCESS;
  });
}

template <typename T>
T GetPic(const char* fn, const acldvppPicDesc* d, T PicFields::*field) {
  return GuardValue<T>(fn, T{}, [&]() -> T {
    PicFields* f = Fields(d);
    return f ? f->*field : T{};
  });
}

template <typename T>
T* Create(const char* fn, HandleSet& set) {
  return GuardValue<T*>(fn, nullptr, [&]() -> T* {
    auto obj = std::make_unique<T>();
    set.Add(obj.get());
    return obj.release();
  });
}

template <typename T>
aclError Destroy(const char* fn, HandleSet& set, T* obj, const char* what, const char* create) {
  return Guard(fn, [&]() -> aclError {
    if (!obj) return NullArg(what);
    if (!set.Remove(obj)) return NotLive(what, obj, create);
    delete obj;
    return ACL_SUCCESS;
  });
}

template <typename T>
T* Live(HandleSet& set, T* obj, const char* what, const char* create) {
  if (!obj) {
    NullArg(what);
    return nullptr;
  }
  if (!set.Contains(obj)) {
    NotLive(what, obj, create);
    return nullptr;
  }
  return obj;
}

}  // namespace

aclError CheckDvppRange(const char* what, const void* p, uint64_t n) {
  if (!p) return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " is NULL"));
  auto block = RuntimeState().memory.Find(p, n ? n : 1);
  bool dvpp = false;
  if (block && block->kind == oc::rt::MemKind::kDevice) {
    DvppBlocks& b = Blocks();
    std::lock_guard<std::mutex> lk(b.mu);
    dvpp = b.blocks.count(block->begin) > 0;
  }
  if (!dvpp) {
    auto start = RuntimeState().memory.Find(p, 1);
    bool start_dvpp = false;
    if (start) {
      DvppBlocks& b = Blocks();
      std::lock_guard<std::mutex> lk(b.mu);
      start_dvpp = b.blocks.count(start->begin) > 0;
    }
    if (start_dvpp)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat(what, " ", PtrString(p), " + ", n, " bytes runs past the end of its acldvppMalloc block (",
                         start->size, " bytes from ", PtrString(reinterpret_cast<void*>(start->begin)), ")"));
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat(what, " ", PtrString(p), " is not DVPP memory: media calls take memory from acldvppMalloc",
                       start ? " (this is aclrtMalloc/aclrtMallocHost memory)" : ""));
  }
  return ACL_SUCCESS;
}

bool IsDvppBlock(const void* p) {
  DvppBlocks& b = Blocks();
  std::lock_guard<std::mutex> lk(b.mu);
  return b.blocks.count(reinterpret_cast<uintptr_t>(p)) > 0;
}

void ForgetDvppMemory() {
  DvppBlocks& b = Blocks();
  std::lock_guard<std::mutex> lk(b.mu);
  b.blocks.clear();
}

aclError CheckChannel(const acldvppChannelDesc* channel, uint32_t need, const char* need_name) {
  if (!channel) return NullArg("channelDesc");
  if (!ChannelDescs().Contains(channel))
    return NotLive("channelDesc", channel, "acldvppCreateChannelDesc");
  if (!channel->created)
    return Fail(ACL_ERROR_INVALID_PARAM, "channelDesc has no channel; call acldvppCreateChannel first");
  if (channel->mode != 0 && !(channel->mode & need))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the channel's mode is ", ModeNames(channel->mode),
                                                "; this call needs a channel with ", need_name));
  return ACL_SUCCESS;
}

aclError CheckPicDesc(const acldvppPicDesc* desc, const char* which) {
  if (!desc) return NullArg(which);
  if (!PicDescs().Contains(desc)) return NotLive(which, desc, "acldvppCreatePicDesc or acldvppCreateBatchPicDesc");
  return ACL_SUCCESS;
}

oc::dvpp::Picture PictureOf(const acldvppPicDesc* desc) {
  const PicFields& f = *desc->f;
  return oc::dvpp::Picture{static_cast<uint8_t*>(f.data), f.size, static_cast<oc::dvpp::PixelFormat>(f.format),
                           f.width, f.height, f.width_stride, f.height_stride};
}

aclError FailMedia(const oc::Status& st) {
  return Fail(st.code() == oc::StatusCode::kResourceExhausted ? ACL_ERROR_BAD_ALLOC : ACL_ERROR_INVALID_PARAM,
              st.message());
}

aclError EnqueueMediaJob(aclrtStream stream, const char* api, std::shared_ptr<PicFields> out,
                         std::function<oc::Status()> job) {
  std::shared_ptr<StreamObj> s;
  if (aclError e = ResolveStream(stream, &s)) return e;
  s->queue->Enqueue(
      [out = std::move(out), job = std::move(job)]() -> oc::Status {
        oc::Status st = job();
        if (out) out->ret_code.store(st.ok() ? 0u : static_cast<uint32_t>(CodeFor(st, ACL_ERROR_INVALID_PARAM)));
        if (st.ok()) return st;
        // The stream reports it at synchronisation as ACL_ERROR_INVALID_PARAM.
        return oc::Status(st.code() == oc::StatusCode::kResourceExhausted ? st.code()
                                                                          : oc::StatusCode::kInvalidArgument,
                          st.message());
      },
      api);
  return ACL_SUCCESS;
}

}  // namespace oc::acl

// ---- DVPP memory ---------------------------------------------------------------------

aclError acldvppMalloc(void** devPtr, size_t size) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!devPtr) return NullArg("devPtr");
    if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    if (size > (size_t{1} << 40)) return Fail(ACL_ERROR_BAD_ALLOC, StrCat("size ", size, " is too large"));
    // As CANN: the size rounded up to 32 bytes, plus 32.
    const size_t padded = (size + 31) / 32 * 32 + 32;
    int device = -1;
    {
      Runtime& r = RuntimeState();
      std::lock_guard<std::mutex> lk(r.mu);
      if (ContextObj* ctx = CurrentContextLocked(r)) device = ctx->device;
    }
    if (device < 0)
      return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                  "this thread has no current context; call aclrtSetDevice or aclrtSetCurrentContext first");
    auto mem = oc::rt::CpuDevice::Get(device).Allocate(padded);
    if (!mem.ok()) return FailStatus(mem.status(), ACL_ERROR_BAD_ALLOC);
    void* p = *mem;
    DvppBlocks& b = Blocks();
    std::lock_guard<std::mutex> lk(b.mu);
    b.blocks[reinterpret_cast<uintptr_t>(p)] = padded;
    *devPtr = p;
    return ACL_SUCCESS;
  });
}

aclError acldvppFree(void* devPtr) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!devPtr) return NullArg("devPtr");
    {
      DvppBlocks& b = Blocks();
      std::lock_guard<std::mutex> lk(b.mu);
      if (!b.blocks.erase(reinterpret_cast<uintptr_t>(devPtr)))
        return Fail(ACL_ERROR_INVALID_PARAM,
                    StrCat("devPtr ", PtrString(devPtr),
                           " is not the start of a live acldvppMalloc block (aclrtMalloc memory is freed with "
                           "aclrtFree)"));
    }
    oc::Status st = RuntimeState().memory.Free(devPtr, oc::rt::MemKind::kDevice);
    if (!st.ok()) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("devPtr ", st.message()));
    return ACL_SUCCESS;
  });
}

// ---- Channels -------------------------------------------------------------------------

acldvppChannelDesc* acldvppCreateChannelDesc(void) {
  return Create<acldvppChannelDesc>(__func__, ChannelDescs());
}

aclError acldvppDestroyChannelDesc(acldvppChannelDesc* channelDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(ChannelDescs(), channelDesc, "channelDesc", "acldvppCreateChannelDesc")) return ACL_ERROR_INVALID_PARAM;
    if (channelDesc->created)
      return Fail(ACL_ERROR_INVALID_PARAM, "channelDesc still has its channel; call acldvppDestroyChannel first");
    ChannelDescs().Remove(channelDesc);
    delete channelDesc;
    return ACL_SUCCESS;
  });
}

uint64_t acldvppGetChannelDescChannelId(const acldvppChannelDesc* channelDesc) {
  return GuardValue<uint64_t>(__func__, 0, [&]() -> uint64_t {
    auto* c = Live(ChannelDescs(), channelDesc, "channelDesc", "acldvppCreateChannelDesc");
    return c ? c->id : 0;
  });
}

aclError acldvppSetChannelDescMode(acldvppChannelDesc* channelDesc, uint32_t mode) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(ChannelDescs(), channelDesc, "channelDesc", "acldvppCreateChannelDesc")) return ACL_ERROR_INVALID_PARAM;
    constexpr uint32_t kAll = DVPP_CHNMODE_VPC | DVPP_CHNMODE_JPEGD | DVPP_CHNMODE_JPEGE | DVPP_CHNMODE_PNGD;
    if (mode & ~kAll)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("mode ", mode, " has bits outside the DVPP_CHNMODE_* values (",
                                                  kAll, ")"));
    if (channelDesc->created)
      return Fail(ACL_ERROR_INVALID_PARAM, "the channel already exists; set its mode before acldvppCreateChannel");
    channelDesc->mode = mode;
    return ACL_SUCCESS;
  });
}

aclError acldvppCreateChannel(acldvppChannelDesc* channelDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!Live(ChannelDescs(), channelDesc, "channelDesc", "acldvppCreateChannelDesc")) return ACL_ERROR_INVALID_PARAM;
    if (channelDesc->created) return Fail(ACL_ERROR_INVALID_PARAM, "channelDesc already has a channel");
    channelDesc->created = true;
    channelDesc->id = g_next_channel++;
    return ACL_SUCCESS;
  });
}

aclError acldvppDestroyChannel(acldvppChannelDesc* channelDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(ChannelDescs(), channelDesc, "channelDesc", "acldvppCreateChannelDesc")) return ACL_ERROR_INVALID_PARAM;
    if (!channelDesc->created) return Fail(ACL_ERROR_INVALID_PARAM, "channelDesc has no channel to destroy");
    channelDesc->created = false;
    return ACL_SUCCESS;
  });
}

// ---- Picture descriptions ----------------------------------------------------------------

acldvppPicDesc* acldvppCreatePicDesc(void) { return Create<acldvppPicDesc>(__func__, PicDescs()); }

aclError acldvppDestroyPicDesc(acldvppPicDesc* picDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (!Fields(picDesc)) return ACL_ERROR_INVALID_PARAM;
    if (picDesc->in_batch)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  "picDesc belongs to a batch (acldvppGetPicDesc); it goes with acldvppDestroyBatchPicDesc");
    PicDescs().Remove(picDesc);
    delete picDesc;
    return ACL_SUCCESS;
  });
}

aclError acldvppSetPicDescData(acldvppPicDesc* d, void* v) { return SetPic(__func__, d, &PicFields::data, v); }
aclError acldvppSetPicDescSize(acldvppPicDesc* d, uint32_t v) { return SetPic(__func__, d, &PicFields::size, v); }
aclError acldvppSetPicDescFormat(acldvppPicDesc* d, acldvppPixelFormat v) {
  return Guard(__func__, [&]() -> aclError {
    PicFields* f = Fields(d);
    if (!f) return ACL_ERROR_INVALID_PARAM;
    f->format = EnumBits(v);
    f->format_set = true;
    return ACL_SUCCESS;
  });
}
aclError acldvppSetPicDescWidth(acldvppPicDesc* d, uint32_t v) { return SetPic(__func__, d, &PicFields::width, v); }
aclError acldvppSetPicDescHeight(acldvppPicDesc* d, uint32_t v) { return SetPic(__func__, d, &PicFields::height, v); }
aclError acldvppSetPicDescWidthStride(acldvppPicDesc* d, uint32_t v) {
  return SetPic(__func__, d, &PicFields::width_stride, v);
}
aclError acldvppSetPicDescHeightStride(acldvppPicDesc* d, uint32_t v) {
  return SetPic(__func__, d, &PicFields::height_stride, v);
}
aclError acldvppSetPicDescRetCode(acldvppPicDesc* d, uint32_t v) {
  return Guard(__func__, [&]() -> aclError {
    PicFields* f = Fields(d);
    if (!f) return ACL_ERROR_INVALID_PARAM;
    f->ret_code.store(v);
    return ACL_SUCCESS;
  });
}

void* acldvppGetPicDescData(const acldvppPicDesc* d) { return GetPic(__func__, d, &PicFields::data); }
uint32_t acldvppGetPicDescSize(const acldvppPicDesc* d) { return GetPic(__func__, d, &PicFields::size); }
acldvppPixelFormat acldvppGetPicDescFormat(const acldvppPicDesc* d) {
  return static_cast<acldvppPixelFormat>(GetPic(__func__, d, &PicFields::format));
}
uint32_t acldvppGetPicDescWidth(const acldvppPicDesc* d) { return GetPic(__func__, d, &PicFields::width); }
uint32_t acldvppGetPicDescHeight(const acldvppPicDesc* d) { return GetPic(__func__, d, &PicFields::height); }
uint32_t acldvppGetPicDescWidthStride(const acldvppPicDesc* d) {
  return GetPic(__func__, d, &PicFields::width_stride);
}
uint32_t acldvppGetPicDescHeightStride(const acldvppPicDesc* d) {
  return GetPic(__func__, d, &PicFields::height_stride);
}
uint32_t acldvppGetPicDescRetCode(const acldvppPicDesc* d) {
  return GuardValue<uint32_t>(__func__, 0, [&]() -> uint32_t {
    PicFields* f = Fields(d);
    return f ? f->ret_code.load() : 0;
  });
}

// ---- Batches -----------------------------------------------------------------------------

acldvppBatchPicDesc* acldvppCreateBatchPicDesc(uint32_t batchSize) {
  return GuardValue<acldvppBatchPicDesc*>(__func__, nullptr, [&]() -> acldvppBatchPicDesc* {
    constexpr uint32_t kMaxBatch = 1024;
    if (batchSize == 0 || batchSize > kMaxBatch) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("batchSize ", batchSize, " is outside [1, ", kMaxBatch, "]"));
      return nullptr;
    }
    auto batch = std::make_unique<acldvppBatchPicDesc>();
    for (uint32_t i = 0; i < batchSize; ++i) {
      batch->pics.push_back(std::make_unique<acldvppPicDesc>());
      batch->pics.back()->in_batch = true;
    }
    for (auto& p : batch->pics) PicDescs().Add(p.get());
    BatchPicDescs().Add(batch.get());
    return batch.release();
  });
}

acldvppPicDesc* acldvppGetPicDesc(acldvppBatchPicDesc* batchPicDesc, uint32_t index) {
  return GuardValue<acldvppPicDesc*>(__func__, nullptr, [&]() -> acldvppPicDesc* {
    auto* b = Live(BatchPicDescs(), batchPicDesc, "batchPicDesc", "acldvppCreateBatchPicDesc");
    if (!b) return nullptr;
    if (index >= b->pics.size()) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("index ", index, " is outside the batch of ", b->pics.size()));
      return nullptr;
    }
    return b->pics[index].get();
  });
}

aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc* batchPicDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(BatchPicDescs(), batchPicDesc, "batchPicDesc", "acldvppCreateBatchPicDesc"))
      return ACL_ERROR_INVALID_PARAM;
    BatchPicDescs().Remove(batchPicDesc);
    for (auto& p : batchPicDesc->pics) PicDescs().Remove(p.get());
    delete batchPicDesc;
    return ACL_SUCCESS;
  });
}

// ---- ROI, resize and JPEG encode configurations ----------------------------------------------

acldvppRoiConfig* acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top, uint32_t bottom) {
  acldvppRoiConfig* r = Create<acldvppRoiConfig>(__func__, RoiConfigs());
  if (r) *r = acldvppRoiConfig{left, right, top, bottom};
  return r;
}

aclError acldvppDestroyRoiConfig(acldvppRoiConfig* roiConfig) {
  return Destroy(__func__, RoiConfigs(), roiConfig, "roiConfig", "acldvppCreateRoiConfig");
}

namespace {
aclError SetRoi(const char* fn, acldvppRoiConfig* c, uint32_t acldvppRoiConfig::*field, uint32_t v) {
  return Guard(fn, [&]() -> aclError {
    if (!Live(RoiConfigs(), c, "config", "acldvppCreateRoiConfig")) return ACL_ERROR_INVALID_PARAM;
    c->*field = v;
    return ACL_SUCCESS;
  });
}
}  // namespace

aclError acldvppSetRoiConfigLeft(acldvppRoiConfig* c, uint32_t v) {
  return SetRoi(__func__, c, &acldvppRoiConfig::left, v);
}
aclError acldvppSetRoiConfigRight(acldvppRoiConfig* c, uint32_t v) {
  return SetRoi(__func__, c, &acldvppRoiConfig::right, v);
}
aclError acldvppSetRoiConfigTop(acldvppRoiConfig* c, uint32_t v) {
  return SetRoi(__func__, c, &acldvppRoiConfig::top, v);
}
aclError acldvppSetRoiConfigBottom(acldvppRoiConfig* c, uint32_t v) {
  return SetRoi(__func__, c, &acldvppRoiConfig::bottom, v);
}
aclError acldvppSetRoiConfig(acldvppRoiConfig* c, uint32_t left, uint32_t right, uint32_t top, uint32_t bottom) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(RoiConfigs(), c, "config", "acldvppCreateRoiConfig")) return ACL_ERROR_INVALID_PARAM;
    *c = acldvppRoiConfig{left, right, top, bottom};
    return ACL_SUCCESS;
  });
}

acldvppResizeConfig* acldvppCreateResizeConfig(void) {
  return Create<acldvppResizeConfig>(__func__, ResizeConfigs());
}

aclError acldvppDestroyResizeConfig(acldvppResizeConfig* resizeConfig) {
  return Destroy(__func__, ResizeConfigs(), resizeConfig, "resizeConfig", "acldvppCreateResizeConfig");
}

aclError acldvppSetResizeConfigInterpolation(acldvppResizeConfig* resizeConfig, uint32_t interpolation) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(ResizeConfigs(), resizeConfig, "resizeConfig", "acldvppCreateResizeConfig"))
      return ACL_ERROR_INVALID_PARAM;
    if (interpolation > 4)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("interpolation ", interpolation,
                         " is not one of 0, 1 (bilinear, OpenCV), 2 (nearest, OpenCV), 3 (bilinear, TensorFlow), "
                         "4 (nearest, TensorFlow)"));
    resizeConfig->interpolation = interpolation;
    return ACL_SUCCESS;
  });
}

uint32_t acldvppGetResizeConfigInterpolation(const acldvppResizeConfig* resizeConfig) {
  return GuardValue<uint32_t>(__func__, 0, [&]() -> uint32_t {
    auto* c = Live(ResizeConfigs(), resizeConfig, "resizeConfig", "acldvppCreateResizeConfig");
    return c ? c->interpolation : 0;
  });
}

acldvppJpegeConfig* acldvppCreateJpegeConfig(void) { return Create<acldvppJpegeConfig>(__func__, JpegeConfigs()); }

aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig* jpegeConfig) {
  return Destroy(__func__, JpegeConfigs(), jpegeConfig, "jpegeConfig", "acldvppCreateJpegeConfig");
}

aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig* jpegeConfig, uint32_t level) {
  return Guard(__func__, [&]() -> aclError {
    if (!Live(JpegeConfigs(), jpegeConfig, "jpegeConfig", "acldvppCreateJpegeConfig")) return ACL_ERROR_INVALID_PARAM;
    if (level > 100) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("level ", level, " is outside [0, 100]"));
    jpegeConfig->level = level;
    return ACL_SUCCESS;
  });
}

uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig* jpegeConfig) {
  return GuardValue<uint32_t>(__func__, 0, [&]() -> uint32_t {
    auto* c = Live(JpegeConfigs(), jpegeConfig, "jpegeConfig", "acldvppCreateJpegeConfig");
    return c ? c->level : 0;
  });
}
