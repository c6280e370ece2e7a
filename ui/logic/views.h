#pragma once
// The main views the window switches between, and their names, written once.
#include <optional>
#include <string>
#include <string_view>

namespace attn::ui {

// The main views, one at a time beside the inputs panel.
enum class View {
  Pipeline,  // every step of the computation, for one head
  Decode,    // token by token through the KV cache
  Compare,   // the cache of MHA, GQA, MQA and MLA side by side
  Memory,    // cache bytes of real models against context length
  Cost,      // FLOPs per generated token, with and without a cache, and sparse attention
  Model,     // a small transformer around attention, layer by layer
  Train,     // a small model trained live on a task: the loss, the heads as they learn
  Real,      // a Hugging Face model folder on the class's text: every head named, heads knocked out
};
inline constexpr int kViewCount = 8;
std::string_view view_name(View v);   // "pipeline"
std::string_view view_title(View v);  // "Pipeline"
std::optional<View> parse_view(std::string_view name);
// "pipeline, decode, compare, memory, cost, model, train, real": every view's name, for messages.
std::string view_names(std::string_view separator = ", ");

}  // namespace attn::ui
