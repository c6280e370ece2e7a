#pragma once
// Numbers and words as people read them, written once for every view, explanation, chart tick, export, message and
// report: "3 heads", "10,737,418,240 bytes (10.0 GiB)", "0.462", "MLA". Nothing else in the lab writes a number with
// printf (scripts/check_number_text.py fails the build's tests when ui/ or app/ does).
//
// One rule per kind of number, wherever it is shown, so the same value reads the same in a cell, a hover, a sentence,
// a bar, a tick and the command line:
// - Activations: X, W, q, k, v, RoPE(q), scores, outputs, any matrix or vector of reals drawn in cells or quoted
//   from them. activation_decimals decides the decimals from the magnitude of the largest value: 3, fewer so it
//   keeps at most 4 significant digits (18.91, 123.5), and two significant digits of the largest when everything
//   would read 0.000 (4e-4 as 0.00040). Numbers typed by hand read as typed: none when every value is whole (a
//   one-hot X reads 1 and 0), one when every value is in tenths (an X of 0.9 and -0.2). Computed operands of the
//   same size therefore agree, whatever digits they happen to need: q [-0.060, 0.950] (which needs two) beside
//   RoPE(q) [-0.075, -0.949]. A matrix's cells, its hover texts and the sentences quoting it all use its decimals
//   (ui/logic/cell_format.h: matrix_decimals, format_fixed).
// - Probabilities and attention weights in text, lists and bars: probability_text, always three decimals, so a list
//   reads 0.462, 0.098, 0.000 and never mixes 0.462, 0.0977 and 3.85e-4; exactly 0 (a hidden key) is "0".
//   A weights matrix in cells follows the activation rule, which gives the same three decimals.
// - Other reals in a sentence (an entropy, a ratio, a loss): short_number, at most three decimals, trailing zeros
//   dropped ("4.619", "0.5"), scientific beyond 10^7 and below 10^-3 ("1.23e+09").
// - Counts: every digit, grouped by thousands ("1,048,576"; thousands, whole_number); a bound in a message as typed
//   below 10,000 (limit_text).
// - Sizes and FLOPs as a value (a bar, a sentence, a table, the command line): three significant digits, zeros kept,
//   in the largest unit that keeps it at 1 or more, so 2.26 GB sits beside 2.30 GB and never 2.3 GB (format_value,
//   binary_size). Bytes count in powers of two as KiB, MiB, GiB (2^30) ... or in powers of ten as kB, MB, GB (10^9)
//   ..., each named as such; FLOPs in powers of ten. The exact form adds every digit: "10,737,418,240 bytes
//   (10.0 GiB)" (format_exact, bytes_text).
// - Chart ticks sit at round values and drop trailing zeros: "10 GiB", "0.25", "128k", "1M" (tick_text).
// - Shares: two decimals and a percent sign, halves up ("12.50%"; percent, percent_text).
// - Timings: milliseconds with a fixed number of decimals (milliseconds_text).
// - Everywhere: "-0.00" reads "0.00" (a negative value that is not there), -inf (a hidden score) reads "-inf".
// - Settings and limits in messages: general_number, as typed; exports: round_trip_number, every digit a double has.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// "1 head", "3 heads", "0 heads": the count as digits, then the word, with an "s" unless it is one.
std::string plural(std::int64_t n, std::string_view word);

// 10737418240 -> "10,737,418,240"; -1234 -> "-1,234". group_digits does it to a string of digits of any length.
std::string group_digits(std::string_view digits);
std::string thousands(std::uint64_t n);
std::string thousands_signed(std::int64_t n);
// A bound in a message: grouped from 10,000 on ("1,048,576"), as typed below it ("4096", "-17").
std::string limit_text(std::int64_t n);

// "10.0 GiB", "976 KiB" (KiB .. EiB, format_value's three significant digits); under 1 KiB: "512 bytes".
std::string binary_size(std::uint64_t bytes);
// "10,737,418,240 bytes (10.0 GiB)"; under 1 KiB just "512 bytes". Every byte count of a message.
std::string bytes_text(std::uint64_t bytes);
// ---- Numbers with units (charts, bars, tooltips, reports) ----
enum class NumberUnit {
  Plain,         // up to 3 significant digits: "0.25", "83", "1230", "1.5e9"
  Bytes,         // 1024-based: "512 B", "320 KiB", "10 GiB", "1.5 TiB"
  DecimalBytes,  // 1000-based, as accelerator memory is sold: "512 B", "320 kB", "10 GB", "1.5 TB"
  Tokens,        // context lengths: exact multiples of 1024 as "128k", of 1024^2 as "1M"; others "1,000"
  Flops,         // 1000-based: "512 FLOP", "262 kFLOP", "2.6 MFLOP", "1.2 TFLOP"
  Probability,   // values as probability_text ("0.462", "0.098", "0.000"); ticks as Plain
};

// A tick label: `significant` digits at most, trailing zeros dropped ("1.5 TiB", not "1.50 TiB"); a 1024-based value
// of 1000..1023 units stays whole ("1023 KiB") rather than turning into "0.999 MiB". Non-integral token counts round
// to whole tokens ("244,141"), except below 100, which keep their significant digits.
std::string tick_text(double v, NumberUnit u, int significant);
// tick_text with 3 digits, and a probability as probability_text.
std::string format_unit(double v, NumberUnit u);
// A value (a bar's, a sentence's): bytes and FLOPs keep their 3 significant digits, zeros included, so values side by
// side follow one rule: "2.30 GB" beside "2.26 GB", "10.0 GB", "537 MB". Other units as format_unit.
std::string format_value(double v, NumberUnit u);
// The exact value for tooltips: "10,737,418,240 bytes (10.0 GiB)", "131,072 tokens (128k)", "262,144 FLOP (262
// kFLOP)"; the part in brackets only where it says something shorter. Plain whole numbers keep every digit
// ("1,234,567"), other plain values 6 significant digits.
std::string format_exact(double v, NumberUnit u);
// A whole number of any size with thousands separators (rounded): 1.8e19 -> "18,000,000,000,000,000,000".
std::string whole_number(double v);

// A count of bits in bytes, exact, for int4's half bytes: 12 -> "1.5", 8 -> "1", 8,196 -> "1,024.5".
std::string bits_in_bytes(std::uint64_t bits);
// A count of bits as bytes with the word: "0.5 bytes", "1 byte", "1,024.5 bytes".
std::string bits_text(std::uint64_t bits);
// bytes_text for a count of bits: bits_text, and from 1 KiB on its binary size: "1,024.5 bytes (1.00 KiB)".
std::string bits_size_text(std::uint64_t bits);
// part / whole as "12.50%" (two decimals, halves up).
std::string percent(std::uint64_t part, std::uint64_t whole);
// A share as a percentage, the same way: 0.9545 -> "95.45%", 0.125 -> "12.50%".
std::string percent_text(double share);
// A duration in milliseconds: 0.01234 s, 2 -> "12.34 ms".
std::string milliseconds_text(double seconds, int decimals);

// {"a", "b", "c"}, ", " -> "a, b, c".
std::string join(std::span<const std::string_view> parts, std::string_view separator);

// 0.5 -> "0.5", 1e12 -> "1e+12": a number in a message, as C++ streams print it (6 significant digits).
std::string general_number(double x);

// general_number with more significant digits (up to 17) until it reads differently from `limit` when it differs:
// 1000000000000.001 beside the limit 1e12 -> "1000000000000.001", never "1e+12"; 2 beside 1 -> "2".
std::string general_number_beside(double x, double limit);

// A printed number without what misleads: "-0.00" as "0.00" (a negative value that is not there), and
// without_trailing_zeros "2.500" as "2.5", "3.000" as "3" (only after a decimal point: "100" stays).
std::string without_negative_zero(std::string s);
std::string without_trailing_zeros(std::string s);

// A number as the explanations print it: "8", "-2", "4.619", "0.5", "1.23e+09", "4.56e-05", "inf", "-inf".
std::string short_number(double x);
// Scientific with `digits` significant digits, as printf's %e: 12345, 3 -> "1.23e+04"; -0 as 0.
std::string scientific_text(double x, int digits);
// Every digit a double has (17 significant, as printf's %.17g), so a file read back gives the same bits.
std::string round_trip_number(double x);
// An unsigned value in lower-case hexadecimal with at least `digits` digits: 255, 4 -> "00ff".
std::string hex_text(std::uint64_t value, int digits);

// Fixed-point with `precision` digits: 0.7426921, 4 -> "0.7427"; -inf (a hidden score) prints as "-inf", -0 as 0.
std::string format_number(double x, int precision);

// The activation rule (see the top of this file): the decimals of numbers whose largest magnitude is `largest`
// (finite values only), `all_whole` when every one is a whole number, `all_tenths` when every one is a whole number
// of tenths.
inline constexpr int kActivationDecimals = 3;
inline constexpr int kSignificantDigits = 4;
inline constexpr int kTinyActivationDecimals = 8;
int activation_decimals(double largest, bool all_whole, bool all_tenths = false);

// x > 0 to `digits` significant digits, trailing zeros kept: 2.3, 3 -> "2.30"; 10.74, 3 -> "10.7"; 537.2, 3 -> "537";
// 1234.5, 3 -> "1235" (a whole number keeps its digits). 0 is "0"; negative numbers get a sign.
std::string significant_text(double x, int digits);

// The probability rule: 0.4623 -> "0.462", 0.0977 -> "0.098", 3.85e-4 -> "0.000", 1 -> "1.000", 0 and -0 -> "0".
inline constexpr int kProbabilityDecimals = 3;
std::string probability_text(double p);
// A probability in a list of predictions, where a knocked-out model's may all be under a thousandth: probability_text
// from 0.0005 on, else two significant digits, 2.1e-05, so that the list still tells its rows apart.
std::string prediction_text(double p);

// A number as written, quoted in a message: up to kMaxQuotedNumber characters as they are; past that the first
// kMaxQuotedNumber, "…" and how many digits it has ("1000000000…, 5,001 digits").
inline constexpr std::size_t kMaxQuotedNumber = 40;
std::string quoted_number(std::string_view written);

// Where the byte at 1-based position `byte` of `text` is, as messages say it: "line 3, column 7".
std::string line_and_column(std::string_view text, std::size_t byte);

// The offset of the first byte that is not part of a well-formed UTF-8 sequence, or npos when `text` is UTF-8
// (JSON output and the window's fonts need it).
std::size_t invalid_utf8_at(std::string_view text);

// "mla" -> "MLA" (ASCII letters only; other bytes as they are).
std::string upper(std::string_view s);

// "a  b\tc" -> {"a", "b", "c"}: the words between runs of white space.
std::vector<std::string> split_words(std::string_view text);

// The length of the well-formed UTF-8 character at s[i] (no overlong forms, surrogates or code points past U+10FFFF),
// 0 when the byte there does not start one.
std::size_t utf8_length_at(std::string_view s, std::size_t i);
inline bool is_utf8(std::string_view bytes) { return invalid_utf8_at(bytes) == std::string_view::npos; }
// The code point of the character at s[i], moving i past it; U+FFFD for bytes that are not one (i moves one byte).
char32_t next_code_point(std::string_view s, std::size_t& i);
// c written in UTF-8 at the end of s.
void append_utf8(std::string& s, char32_t c);
// Bytes for a message or a title: well-formed UTF-8 as it is, every other byte and every control character as \xhh
// ("b\xff.json"). Paths are bytes; only what shows them decodes them. Past 1,024 bytes the text is cut at a whole
// character and says how long it was ("…(5,000,000 bytes)").
std::string escaped_text(std::string_view bytes);

// Token labels in text tables (trace, decode, handouts) and beside the window's matrices take at most this many
// columns: a longer one is cut and ends in "…", so a table's size is bounded by its rows x columns, and a matrix keeps
// its cells, whatever the labels.
inline constexpr std::size_t kMaxLabelColumns = 24;
// Columns on a terminal: one a UTF-8 code point (continuation bytes take no room of their own: "é" is one column,
// two bytes).
std::size_t display_width(std::string_view s);
// `label` itself when it fits `columns`, else its first columns - 1 code points and "…".
std::string shorten_label(const std::string& label, std::size_t columns = kMaxLabelColumns);
inline std::string shown_path(const std::filesystem::path& path) { return escaped_text(path.native()); }

}  // namespace attn
