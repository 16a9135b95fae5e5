// The media (DVPP) part of the C API: its handles and the checks every media
// call shares (DVPP memory, live descriptions, channels), and the queueing of
// media jobs on streams. The media work itself is src/dvpp/.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "acl/acl_internal.h"
#include "acl/ops/acl_dvpp.h"
#include "dvpp/picture.h"

namespace oc::acl {

// What a picture description holds. Shared with queued jobs, which write the
// decoded geometry and retCode back when they run, so a description destroyed
// too early (an application bug) is never written after it is freed.
struct PicFields {
  void* data = nullptr;
  uint32_t size = 0;
  int format = PIXEL_FORMAT_YUV_400;  // enum bits as the caller passed them
  bool format_set = false;            // decoders use their default format until it is set
  uint32_t width = 0, height = 0, width_stride = 0, height_stride = 0;
  std::atomic<uint32_t> ret_code{0};
};

// Live handles of each kind (destroyed or foreign pointers are refused).
HandleSet& PicDescs();
HandleSet& ChannelDescs();
HandleSet& RoiConfigs();
HandleSet& ResizeConfigs();
HandleSet& JpegeConfigs();
HandleSet& BatchPicDescs();

// ACL_SUCCESS when [p, p + n) lies inside one block from acldvppMalloc; else
// records an error naming `what` and returns ACL_ERROR_INVALID_PARAM.
aclError CheckDvppRange(const char* what, const void* p, uint64_t n);
// IsDvppBlock and ForgetDvppMemory: acl_internal.h.

// A live channel whose mode allows `need` (a DVPP_CHNMODE_* bit), else the error.
aclError CheckChannel(const acldvppChannelDesc* channel, uint32_t need, const char* need_name);
// A live picture description (named `which` in messages), else the error.
aclError CheckPicDesc(const acldvppPicDesc* desc, const char* which);
// The picture a description describes (after CheckPicDesc).
oc::dvpp::Picture PictureOf(const acldvppPicDesc* desc);

// Records `st` (from the media layer) as an ACL_ERROR_INVALID_PARAM-class failure.
aclError FailMedia(const oc::Status& st);

// Queues `job` on `stream`. When it fails, outputDesc's retCode is set to the
// error code and the stream reports the error (named by `api`); on success the
// retCode is 0. `out` may be null (a job with no output description).
aclError EnqueueMediaJob(aclrtStream stream, const char* api, std::shared_ptr<PicFields> out,
                         std::function<oc::Status()> job);

}  // namespace oc::acl

struct acldvppPicDesc {
  std::shared_ptr<oc::acl::PicFields> f = std::make_shared<oc::acl::PicFields>();
  bool in_batch = false;
};

struct acldvppBatchPicDesc {
  std::vector<std::unique_ptr<acldvppPicDesc>> pics;
};

struct acldvppChannelDesc {
  uint32_t mode = 0;
  uint64_t id = 0;
  bool created = false;
};

struct acldvppRoiConfig {
  uint32_t left = 0, right = 0, top = 0, bottom = 0;
};

struct acldvppResizeConfig {
  uint32_t interpolation = 0;
};

struct acldvppJpegeConfig {
  uint32_t level = 100;
};
