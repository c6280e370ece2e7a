#pragma once
// A teacher's handout of one trace: every pipeline step with its formula, the app's own explanation and its
// matrices as tables with token labels, as Markdown or as a LaTeX document that plain pdflatex compiles.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/attention.h"

namespace attn::cli {

// Tables show at most this many rows and columns; an ellipsis row/column stands for the rest.
inline constexpr int kHandoutMaxCells = 16;

// Called when a head's part of the handout is written: the command frees what the head made on demand
// (forget_derived), so that one head's matrices are held at a time.
using HeadDone = std::function<void(int head)>;

// Numbers get `precision` digits, integers none, hidden scores "-inf" (Markdown) or $-\infty$ (LaTeX). Written as
// they are made: one block (a table of at most kHandoutMaxCells squared) at a time. Token labels are shortened
// (shorten_label).
void write_markdown(std::ostream& out, const Trace& t, int precision = 4, const HeadDone& head_done = {});
void write_latex(std::ostream& out, const Trace& t, int precision = 4, const HeadDone& head_done = {});
// The same as a string, for a small trace (tests).
std::string trace_to_markdown(const Trace& t, int precision = 4);
std::string trace_to_latex(const Trace& t, int precision = 4);

// Text for LaTeX's text mode: escapes & % $ # _ { } ~ ^ \ < > |, turns "..." into ``...'' and the
// explanations' math glyphs (× · √ ᵀ Σ → …) into commands that need no package.
std::string latex_escape(std::string_view text);

}  // namespace attn::cli
