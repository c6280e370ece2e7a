#include "app/cli/error_stream.h"

#include <cstdio>

namespace attn::cli {

EscapingStreamBuf::~EscapingStreamBuf() {
  if (after_c2_) out_->sputc(static_cast<char>(0xC2));
}

bool EscapingStreamBuf::put(const char* text) {
  for (; *text; ++text)
    if (traits_type::eq_int_type(out_->sputc(*text), traits_type::eof())) return false;
  return true;
}

EscapingStreamBuf::int_type EscapingStreamBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const auto byte = static_cast<unsigned char>(traits_type::to_char_type(c));
  if (after_c2_) {
    after_c2_ = false;
    if (byte >= 0x80 && byte <= 0x9F) {  // U+0080..U+009F: the C1 controls
      return put(("\\u" + hex_text(byte, 4)).c_str()) ? c : traits_type::eof();
    }
    if (traits_type::eq_int_type(out_->sputc(static_cast<char>(0xC2)), traits_type::eof())) return traits_type::eof();
  }
  if (byte == 0xC2) {
    after_c2_ = true;
    return c;
  }
  if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7F) {
    return put(("\\x" + hex_text(byte, 2)).c_str()) ? c : traits_type::eof();
  }
  return traits_type::eq_int_type(out_->sputc(static_cast<char>(byte)), traits_type::eof()) ? traits_type::eof() : c;
}

int EscapingStreamBuf::sync() { return out_->pubsync(); }

}  // namespace attn::cli
