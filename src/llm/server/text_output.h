// The text of one choice as its tokens arrive: incremental detokenization and
// stop strings, for the server's streaming and non-streaming replies alike.
//
// Detokenization follows vLLM's incremental scheme: the text of new tokens is
// decode(ids[prefix:]) minus decode(ids[prefix:read]), so decoders that treat
// the first token of a text specially (SentencePiece's leading space) give the
// same text as one decode of all the ids. A delta that ends in an unfinished
// UTF-8 character (U+FFFD from a partial byte token) is held back until the
// next token completes it (or the choice ends).
//
// Stop strings: the text is cut at the first occurrence of any of them (the
// stop string itself kept only with include_stop). While the choice runs, the
// last (longest stop - 1) bytes are held back from what may be streamed, so a
// stop string arriving over two tokens is never streamed in part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm/tokenizer/tokenizer.h"

namespace oc::llm::server {

struct TextOptions {
  std::vector<std::string> stop;     // stop strings (none empty)
  bool include_stop = false;         // vLLM's include_stop_str_in_output
  bool skip_special_tokens = true;
};

class ChoiceText {
 public:
  ChoiceText(const Tokenizer* tok, TextOptions opt);

  // Appends generated tokens. Returns true when a stop string ended the text
  // (the caller then stops the request; later tokens are ignored).
  bool Append(const std::vector<int32_t>& ids);
  // The choice ended (any reason): releases what was held back.
  void Finish();

  const std::string& text() const { return text_; }
  // Text not yet taken by TakeDelta (what may be streamed now).
  std::string TakeDelta();
  bool stopped() const { return stopped_; }
  const std::string& matched_stop() const { return matched_; }
  // Generated tokens counted so far (including the one that completed a stop string).
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  std::string DecodeRange(size_t from, size_t to) const;
  void CheckStops(size_t search_from);

  const Tokenizer* tok_;
  TextOptions opt_;
  size_t max_stop_ = 0;
  std::vector<int32_t> ids_;
  size_t prefix_ = 0, read_ = 0;  // the decode window: ids_[prefix_, read_) already turned into text
  std::string text_;
  size_t streamed_ = 0;
  bool stopped_ = false, finished_ = false;
  std::string matched_;
};

}  // namespace oc::llm::server
