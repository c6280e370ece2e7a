#include "core/io/online_json.h"

#include <sstream>

#include "core/io/json_stream.h"
#include "core/io/trace_json.h"

namespace attn {

void write_online_json(std::ostream& out, const OnlineSoftmax& o) {
  JsonStream js(out);
  js.begin_object().field("head", o.head).field("row", o.row).field("block", o.block).key("blocks").begin_array();
  for (const OnlineBlock& b : o.blocks) {
    js.begin_object().field("start", b.start).field("end", b.end);
    js.field("block_max", number_to_json(b.block_max)).field("m", number_to_json(b.m));
    js.field("rescale", b.rescale).field("l", b.l).key("output").row(b.output.row(0)).end_object();
  }
  js.end_array().key("output").row(o.output.row(0)).key("dense_output").row(o.dense_output.row(0));
  js.field("max_difference", o.max_difference).end_object();
}

nlohmann::ordered_json online_to_json(const OnlineSoftmax& o) {
  std::ostringstream text;
  write_online_json(text, o);
  return nlohmann::ordered_json::parse(text.str());
}

}  // namespace attn
