#pragma once
// The math glyphs the explanations use, as UTF-8 escapes so the sources stay ASCII.
#include <string>

namespace attn::ui::glyph {

inline const std::string kArrow = "\u2192";       // →
inline const std::string kDot = "\u00B7";         // ·
inline const std::string kEllipsis = "\u2026";    // …
inline const std::string kSigma = "\u03A3";       // Σ
inline const std::string kTimes = "\u00D7";       // ×
inline const std::string kRoot = "\u221A";        // √
inline const std::string kTransposed = "\u1D40";  // ᵀ

}  // namespace attn::ui::glyph
