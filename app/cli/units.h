#pragma once
// Numbers as people read them, as the command line's reports say them: written in core/text_format, where the
// engine's messages (the memory budget's) write them too.
#include "core/text_format.h"  // thousands, binary_size ("10.00 GiB"), bytes_text, percent ("12.50%")

namespace attn::cli {

using attn::binary_size;
using attn::bytes_text;
using attn::percent;

}  // namespace attn::cli
