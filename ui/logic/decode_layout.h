#pragma once
// How the Decode view fits a panel without a window: where a line of small matrices breaks (K and V of one KV
// head stay side by side), and which cell size and open sections let what a lesson page talks about be read
// without scrolling.
#include <cstddef>
#include <span>
#include <vector>

namespace attn::ui {

// A line of terms [first, last).
struct FlowBreak {
  std::size_t first = 0, last = 0;
  bool operator==(const FlowBreak&) const = default;
};

// Terms of widths `widths` filled into lines `avail` wide, as text wraps, at least one term a line, and then as even
// as that many lines allow (filled at the narrowest width that needs no more lines). op_widths[i] is
// the operator between terms i and i+1 (its gaps included); a line after the first starts with the operator that
// leads into its first term, lead_widths[i] wide before term i + 1 (0 for a space, which is not written there). A
// term with joined[i] set never starts a line: it moves to the next line with the terms it is joined to (a pair
// wider than the line still stays together). joined may be empty. first_widths[i], where given, is term i's width
// when it starts a line (its row labels, which a term beside one with the same rows leaves out).
std::vector<FlowBreak> flow_breaks(std::span<const float> widths, std::span<const float> op_widths,
                                   std::span<const float> lead_widths, const std::vector<bool>& joined, float avail,
                                   std::span<const float> first_widths = {});

// A stack of numbered sections under a header, each either open or folded to its heading.
struct SectionFitInput {
  float top = 0;                           // the height already used above the sections (controls, counters)
  float view_h = 0;                        // the visible height of the panel's content, from its top
  std::vector<float> folded_h;             // each section's height folded (its heading)
  std::vector<std::vector<float>> open_h;  // open_h[c][s]: section s open at candidate cell c, largest cell first
  int focus = -1;                          // the first section (0-based) a lesson page is about; -1 without a page
  int focus_last = -1;                     // the last section it is about; -1: every section from the focus on
  int preferred = -1;                      // a section before the focus opened first where it fits (the cache)
  std::vector<bool> forced_open;           // sections the user opened (may be empty)
};

struct SectionFit {
  std::size_t cell = 0;    // index of the candidate cell chosen
  std::vector<bool> open;  // per section
  float scroll = 0;        // where the panel is scrolled to as the page opens
  bool operator==(const SectionFit&) const = default;
};

// The largest cell at which every section fits; else, with a page, the sections from its focus to its last (by
// default the output and its check line: the point of most decode pages) stay open, and each of the others that
// still fits at the smallest cell opens, the preferred one first, then the nearest before the focus, then those
// after its last; the cell is then the largest
// they all fit at. When even the focus does not fit at the smallest cell, it is scrolled to: its end in sight, but
// never past its start. Without a page every section is open at the smallest cell and the panel scrolls from the
// top.
SectionFit fit_sections(const SectionFitInput& in);

}  // namespace attn::ui
