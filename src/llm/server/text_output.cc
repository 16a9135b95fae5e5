#include "llm/server/text_output.h"

#include <algorithm>

namespace oc::llm::server {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool EndsWithReplacement(const std::string& s) { return s.size() >= 3 && s.compare(s.size() - 3, 3, kReplacement) == 0; }

}  // namespace

ChoiceText::ChoiceText(const Tokenizer* tok, TextOptions opt) : tok_(tok), opt_(std::move(opt)) {
  for (const std::string& s : opt_.stop) max_stop_ = std::max(max_stop_, s.size());
}

std::string ChoiceText::DecodeRange(size_t from, size_t to) const {
  if (from >= to) return {};
  auto text = tok_->Decode(std::span<const int32_t>(ids_.data() + from, to - from), opt_.skip_special_tokens);
  return text.ok() ? std::move(text).value() : std::string();
}

bool ChoiceText::Append(const std::vector<int32_t>& ids) {
  for (int32_t id : ids) {
    if (stopped_ || finished_) return stopped_;
    ids_.push_back(id);
    const std::string prev = DecodeRange(prefix_, read_);
    const std::string now = DecodeRange(prefix_, ids_.size());
    if (now.size() <= prev.size() || EndsWithReplacement(now)) continue;  // nothing new yet, or a partial character
    const size_t before = text_.size();
    text_.append(now, prev.size(), std::string::npos);
    prefix_ = read_;
    read_ = ids_.size();
    CheckStops(before);
  }
  return stopped_;
}

void ChoiceText::Finish() {
  if (!stopped_ && !finished_ && read_ < ids_.size()) {
    const std::string prev = DecodeRange(prefix_, read_);
    const std::string now = DecodeRange(prefix_, ids_.size());
    if (now.size() > prev.size()) {
      const size_t before = text_.size();
      text_.append(now, prev.size(), std::string::npos);
      CheckStops(before);
    }
    read_ = ids_.size();
  }
  finished_ = true;
}

void ChoiceText::CheckStops(size_t search_from) {
  size_t best = std::string::npos;
  const std::string* which = nullptr;
  for (const std::string& s : opt_.stop) {
    const size_t from = search_from >= s.size() - 1 ? search_from - (s.size() - 1) : 0;
    const size_t pos = text_.find(s, from);
    if (pos != std::string::npos && (best == std::string::npos || pos < best || (pos == best && s.size() > which->size()))) {
      best = pos;
      which = &s;
    }
  }
  if (!which) return;
  matched_ = *which;
  text_.resize(best + (opt_.include_stop ? which->size() : 0));
  stopped_ = true;
}

std::string ChoiceText::TakeDelta() {
  size_t end = text_.size();
  if (!stopped_ && !finished_ && max_stop_ > 1) {
    end = text_.size() > max_stop_ - 1 ? text_.size() - (max_stop_ - 1) : 0;
    while (end > streamed_ && end < text_.size() && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) --end;
  }
  if (end <= streamed_) return {};
  std::string d = text_.substr(streamed_, end - streamed_);
  streamed_ = end;
  return d;
}

}  // namespace oc::llm::server
