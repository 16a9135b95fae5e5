// Kernel binaries: Ascend C kernel libraries (built by ascendc++ -shared)
// loaded with dlopen, their kernels found by name and launched with packed
// arguments (acl_rt.h, "Kernel binaries").
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl_internal.h"

using namespace oc::acl;
using oc::StrCat;

namespace {

// The driver defines, for each kernel `k`, `__ocasc_argsentry_k`: it unpacks
// the 8-byte argument slots when the launch runs and queues the kernel.
using ArgsEntry = uint32_t (*)(uint32_t block_dim, void* stream, const void* args, size_t size);
constexpr const char* kEntryPrefix = "__ocasc_argsentry_";

struct FuncObj;
struct BinObj {
  void* dl = nullptr;
  std::string path;
  int memfd = -1;  // for a binary loaded from memory
  std::vector<FuncObj*> funcs;  // invalidated by unloading
};
struct FuncObj {
  BinObj* bin = nullptr;
  std::string name;
  ArgsEntry entry = nullptr;
};
struct BinaryBytes {
  std::vector<uint8_t> bytes;
};

aclError NullArg(const char* name) { return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL")); }

std::mutex g_funcs_mu;  // BinObj::funcs

HandleSet& Bins() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& Funcs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& Binaries() {
  static HandleSet* s = new HandleSet();
  return *s;
}

aclError Open(const std::string& path, const std::string& shown, int memfd, aclrtBinHandle* out) {
  dlerror();
  void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char* why = dlerror();
    if (memfd >= 0) close(memfd);
    return Fail(ACL_ERROR_INVALID_FILE,
                StrCat(shown, " is not a kernel library this runtime can load (build kernels with "
                              "ascendc++ -shared -fPIC): ", why ? why : "dlopen failed"));
  }
  auto* b = new BinObj{dl, shown, memfd, {}};
  Bins().Add(b);
  *out = b;
  return ACL_SUCCESS;
}

}  // namespace

aclError aclrtBinaryLoadFromFile(const char* binPath, aclrtBinaryLoadOptions* options, aclrtBinHandle* binHandle) {
  (void)options;
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!binPath) return NullArg("binPath");
    if (!binHandle) return NullArg("binHandle");
    if (access(binPath, R_OK) != 0) return Fail(ACL_ERROR_INVALID_FILE, StrCat("cannot read '", binPath, "'"));
    return Open(binPath, StrCat("'", binPath, "'"), -1, binHandle);
  });
}

aclrtBinary aclrtCreateBinary(const void* data, size_t dataLen) {
  if (!data || dataLen == 0) return nullptr;
  try {
    auto* b = new BinaryBytes{std::vector<uint8_t>(static_cast<const uint8_t*>(data),
                                                   static_cast<const uint8_t*>(data) + dataLen)};
    Binaries().Add(b);
    return b;
  } catch (...) {
    return nullptr;
  }
}

aclError aclrtDestroyBinary(aclrtBinary binary) {
  return Guard(__func__, [&]() -> aclError {
    if (!binary || !Binaries().Remove(binary))
      return Fail(ACL_ERROR_INVALID_PARAM, "binary is NULL or not a live aclrtBinary");
    delete static_cast<BinaryBytes*>(binary);
    return ACL_SUCCESS;
  });
}

aclError aclrtBinaryLoad(const aclrtBinary binary, aclrtBinHandle* binHandle) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!binary || !Binaries().Contains(binary))
      return Fail(ACL_ERROR_INVALID_PARAM, "binary is NULL or not a live aclrtBinary (aclrtCreateBinary)");
    if (!binHandle) return NullArg("binHandle");
    const auto& bytes = static_cast<BinaryBytes*>(binary)->bytes;
    int fd = memfd_create("ascendc-kernels", MFD_CLOEXEC);
    if (fd < 0) return Fail(ACL_ERROR_INTERNAL_ERROR, "memfd_create failed");
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        close(fd);
        return Fail(ACL_ERROR_INTERNAL_ERROR, "writing the binary to a memory file failed");
      }
      done += static_cast<size_t>(n);
    }
    return Open(StrCat("/proc/self/fd/", fd), StrCat("the binary of ", bytes.size(), " bytes"), fd, binHandle);
  });
}

aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char* kernelName, aclrtFuncHandle* funcHandle) {
  return Guard(__func__, [&]() -> aclError {
    if (!binHandle || !Bins().Contains(binHandle))
      return Fail(ACL_ERROR_INVALID_PARAM, "binHandle is NULL or not a loaded binary");
    if (!kernelName) return NullArg("kernelName");
    if (!funcHandle) return NullArg("funcHandle");
    auto* b = static_cast<BinObj*>(binHandle);
    void* sym = dlsym(b->dl, StrCat(kEntryPrefix, kernelName).c_str());
    if (!sym)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(b->path, " defines no kernel '", kernelName,
                                                  "' (a kernel is `__global__ __aicore__ void ", kernelName,
                                                  "(...)` in a source ascendc++ compiled into it)"));
    auto* f = new FuncObj{b, kernelName, reinterpret_cast<ArgsEntry>(sym)};
    {
      std::lock_guard<std::mutex> lock(g_funcs_mu);
      b->funcs.push_back(f);
    }
    Funcs().Add(f);
    *funcHandle = f;
    return ACL_SUCCESS;
  });
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void* argsData, size_t argsSize,
                           aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!funcHandle || !Funcs().Contains(funcHandle))
      return Fail(ACL_ERROR_INVALID_PARAM, "funcHandle is NULL or not a live function (aclrtBinaryGetFunction)");
    if (!argsData && argsSize) return NullArg("argsData");
    auto* f = static_cast<FuncObj*>(funcHandle);
    uint32_t rc = f->entry(blockDim, stream, argsData, argsSize);
    if (rc != ACL_SUCCESS)
      return Fail(static_cast<aclError>(rc), StrCat("kernel '", f->name, "': ", rc == ACL_ERROR_INVALID_PARAM ?
                                                    "blockDim or argsSize does not fit the kernel (see stderr)" :
                                                    "the launch was refused"));
    return ACL_SUCCESS;
  });
}

aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle) {
  return Guard(__func__, [&]() -> aclError {
    if (!binHandle || !Bins().Remove(binHandle))
      return Fail(ACL_ERROR_INVALID_PARAM, "binHandle is NULL or not a loaded binary");
    auto* b = static_cast<BinObj*>(binHandle);
    std::lock_guard<std::mutex> lock(g_funcs_mu);
    for (FuncObj* f : b->funcs) {
      Funcs().Remove(f);
      delete f;
    }
    dlclose(b->dl);
    if (b->memfd >= 0) close(b->memfd);
    delete b;
    return ACL_SUCCESS;
  });
}
