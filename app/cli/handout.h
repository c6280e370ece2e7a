#pragma once
// A teacher's handout of one trace: every pipeline step with its formula, the app's own explanation and its
// matrices as tables with token labels, as Markdown or as a LaTeX document that plain pdflatex compiles.
#include <string>
#include <string_view>

#include "core/attention.h"

namespace attn::cli {

// Tables show at most this many rows and columns; an ellipsis row/column stands for the rest.
inline constexpr int kHandoutMaxCells = 16;

// Numbers get `precision` digits, integers none, hidden scores "-inf" (Markdown) or $-\infty$ (LaTeX).
std::string trace_to_markdown(const Trace& t, int precision = 4);
std::string trace_to_latex(const Trace& t, int precision = 4);

// Text for LaTeX's text mode: escapes & % $ # _ { } ~ ^ \ < > |, turns "..." into ``...'' and the
// explanations' math glyphs (× · √ ᵀ Σ → …) into commands that need no package.
std::string latex_escape(std::string_view text);

}  // namespace attn::cli
