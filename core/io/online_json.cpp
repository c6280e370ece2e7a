#include "core/io/online_json.h"

#include "core/io/trace_json.h"

namespace attn {

nlohmann::ordered_json online_to_json(const OnlineSoftmax& o) {
  using nlohmann::ordered_json;
  ordered_json blocks = ordered_json::array();
  for (const OnlineBlock& b : o.blocks) {
    ordered_json block;
    block["start"] = b.start;
    block["end"] = b.end;
    block["block_max"] = number_to_json(b.block_max);
    block["m"] = number_to_json(b.m);
    block["rescale"] = b.rescale;
    block["l"] = b.l;
    block["output"] = matrix_to_json(b.output)[0];
    blocks.push_back(std::move(block));
  }
  ordered_json j;
  j["head"] = o.head;
  j["row"] = o.row;
  j["block"] = o.block;
  j["blocks"] = std::move(blocks);
  j["output"] = matrix_to_json(o.output)[0];
  j["dense_output"] = matrix_to_json(o.dense_output)[0];
  j["max_difference"] = o.max_difference;
  return j;
}

}  // namespace attn
