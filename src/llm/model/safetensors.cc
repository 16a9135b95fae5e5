#include "llm/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "ops/cpu/common/cast_util.h"

namespace oc::llm {

const char* TensorDtypeName(TensorDtype d) {
  switch (d) {
    case TensorDtype::kF32:
      return "F32";
    case TensorDtype::kF16:
      return "F16";
    case TensorDtype::kBF16:
      return "BF16";
  }
  return "?";
}

size_t TensorDtypeSize(TensorDtype d) { return d == TensorDtype::kF32 ? 4 : 2; }

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Expected<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return IoError("cannot stat ", path, ": ", std::strerror(e));
  }
  std::unique_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ > 0) {
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return IoError("cannot memory-map ", path, ": ", std::strerror(e));
    }
    f->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return f;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

namespace {

Expected<TensorDtype> ParseDtype(const std::string& s, const std::string& file, const std::string& name) {
  if (s == "F32") return TensorDtype::kF32;
  if (s == "F16") return TensorDtype::kF16;
  if (s == "BF16") return TensorDtype::kBF16;
  return NotSupported(file, ": tensor '", name, "' has dtype ", s,
                      ", which is not supported (supported: F32, F16, BF16)");
}

}  // namespace

Expected<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  OC_ASSIGN_OR_RETURN(auto mapped, MappedFile::Open(path));
  auto bytes = mapped->bytes();
  if (bytes.size() < 8)
    return InvalidFile(path, ": truncated safetensors file: ", bytes.size(),
                       " bytes, expected at least 8 (the header length)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | bytes[static_cast<size_t>(i)];
  if (n > bytes.size() - 8)
    return InvalidFile(path, ": truncated safetensors file: header length ", n, " at offset 0 but only ",
                       bytes.size() - 8, " bytes follow");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const nlohmann::json::exception& e) {
    return InvalidFile(path, ": the safetensors header (bytes 8..", 8 + n, ") is not valid JSON: ", e.what());
  }
  if (!header.is_object()) return InvalidFile(path, ": the safetensors header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - n;
  const uint8_t* data = bytes.data() + 8 + n;
  auto f = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") continue;
    const auto& v = it.value();
    auto bad = [&](const std::string& what) {
      return InvalidFile(path, ": tensor '", name, "' in the safetensors header: ", what);
    };
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      return bad("expected an object with dtype, shape and data_offsets");
    if (!v["dtype"].is_string()) return bad("dtype is not a string");
    TensorRef t;
    t.name = name;
    OC_ASSIGN_OR_RETURN(t.dtype, ParseDtype(v["dtype"].get<std::string>(), path, name));
    if (!v["shape"].is_array()) return bad("shape is not an array");
    uint64_t numel = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
        return bad("shape holds " + d.dump() + ", expected non-negative integers");
      uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > (std::numeric_limits<uint64_t>::max() >> 4) / dim) return bad("shape overflows");
      numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return bad("data_offsets is not [begin, end] of non-negative integers");
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) return bad(StrCat("data_offsets [", begin, ", ", end, "] ends before it begins"));
    if (end > data_size)
      return InvalidFile(path, ": truncated safetensors file: tensor '", name, "' ends at data offset ", end,
                         " (file offset ", 8 + n + end, ") but the file has ", bytes.size(), " bytes");
    const uint64_t expect = numel * TensorDtypeSize(t.dtype);
    if (end - begin != expect)
      return bad(StrCat("data_offsets [", begin, ", ", end, "] hold ", end - begin, " bytes, expected ", expect,
                        " for ", TensorDtypeName(t.dtype), " of ", numel, " elements"));
    t.data = {data + begin, static_cast<size_t>(end - begin)};
    f->tensors_.emplace(name, std::move(t));
  }
  f->file_ = std::move(mapped);
  for (auto& [k, t] : f->tensors_) t.file = &f->file_->path();
  return f;
}

void ConvertToFloat(const TensorRef& t, float* dst) {
  const int64_t n = t.numel();
  const uint8_t* p = t.data.data();
  switch (t.dtype) {
    case TensorDtype::kF32:
      std::memcpy(dst, p, static_cast<size_t>(n) * 4);
      break;
    case TensorDtype::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        dst[i] = ew::HalfToFloat(h);
      }
      break;
    case TensorDtype::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        dst[i] = ew::BFloat16ToFloat(h);
      }
      break;
  }
}

}  // namespace oc::llm
