#pragma once
// Standard error as a terminal shows it. A message may quote a value from a shared file or an option: a control
// character in it (ESC, BEL, NUL, the C1 CSI) would retitle, clear or recolour the user's terminal. Every such
// byte is written escaped (\x1b, \u009b) instead, as paths already are (core/text_format.h escaped_text); newlines
// and tabs, which messages use, pass.
#include <streambuf>

namespace attn::cli {

class EscapingStreamBuf : public std::streambuf {
 public:
  explicit EscapingStreamBuf(std::streambuf* out) : out_(out) {}
  EscapingStreamBuf(const EscapingStreamBuf&) = delete;
  EscapingStreamBuf& operator=(const EscapingStreamBuf&) = delete;
  ~EscapingStreamBuf() override;

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool put(const char* text);
  std::streambuf* out_;
  bool after_c2_ = false;  // a 0xC2 lead byte is held until the next byte says whether it starts a C1 control
};

}  // namespace attn::cli
