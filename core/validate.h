#pragma once
// Checks a scenario before the engine runs it. The first problem is reported with the field it is in,
// in the same path syntax a scenario file uses, so the loader, the command line and the editor agree.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/scenario.h"

namespace attn {

// Something a user gave that cannot be used: a scenario, preset, lesson or settings file, a command-line
// override or an edit. `field` names where, in the path syntax of the files ("pages[2].step").
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, const std::string& problem)
      : std::runtime_error(field.empty() ? problem : field + ": " + problem), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// The same problem one level down in a larger file: e's field under `prefix` ("layers[1]." + "attention.heads").
InputError within(const std::string& prefix, const InputError& e);

// Throws InputError naming the first field that is wrong. The memory its trace would hold is not checked here (a file
// is valid whatever the machine): check_trace_budget (core/memory_budget.h) holds it to the budget. `checked`: a
// scenario validated before (the document before an edit); a weight s shares with it (the same matrix, never changed in
// place) has its values checked already.
// `absorbed`: mla's absorbed form will be computed, so its matrices are held to the scenario limits too.
void validate(const Scenario& s, const Scenario* checked = nullptr, bool absorbed = true);
// Learned positions shifted past W_P's limits::kMaxTokens rows. Past that limit max_positions was derived from
// position_offset and the tokens (a file or an override that writes it is range-checked where it is read), so
// the message names `field`, where the shift was written: "... but found 4095 + 2 = 4097".
void check_learned_shift(const Scenario& s, const std::string& field);
// The attention block alone: sizes, kv_heads for gqa, latent widths for mla, the window.
void check_config(const AttentionConfig& a, bool absorbed = true);
// Whether mla's absorbed form keeps within the limits validate holds it to (true for the other variants): a model
// converted to mla at a wide latent computes only the explicit form.
bool absorbed_form_fits(const AttentionConfig& a, int d_model);
// Llama 3's bands: a factor of at least 1, 0 < low_freq_factor < high_freq_factor, all finite, and
// original_max_positions in [1, 2^20]; fields named under `at` ("attention.rope_scaling.").
void check_rope_scaling(const RopeScaling& c, const std::string& at);

// "expected 4 rows (d_model) but found 3": the shared wording for every shape mismatch.
void check_shape(const Matrix& m, const std::string& field, int rows, const std::string& rows_meaning, int cols,
                 const std::string& cols_meaning);
// lo <= value <= hi, else "must be >= 1 (found 0)".
void check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& field);
// A token label heads rows and columns: not empty, no control characters (a newline or tab would tear the
// tables apart). `field` names it ("tokens[3]").
void check_label(const std::string& label, const std::string& field);
// A scenario's or a model's name (a line of a title) and description (text that may keep its newlines and tabs):
// UTF-8 without control characters, which would reach the terminal raw. `field` names it ("name").
void check_name(const std::string& name, const std::string& field);
void check_description(const std::string& description, const std::string& field);
// Every entry finite and within limits::kMaxAbsValue; names the first bad cell as field[r][c].
void check_values(const Matrix& m, const std::string& field);

}  // namespace attn
