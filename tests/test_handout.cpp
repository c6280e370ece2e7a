// The handout (`trace --markdown`, `trace --latex`): each step's formula, the app's explanation and labelled tables.
#include <algorithm>

#include "app/cli/handout.h"
#include "helpers.h"
#include "ui/logic/step_text.h"

using namespace attn;
using namespace attn::test;

namespace {

Trace cat_trace(MaskKind mask = MaskKind::None) {
  Scenario s = cat_sat();
  s.attention.mask = mask;
  return compute_trace(s);
}

Trace asset_trace(const std::string& name) { return compute_trace(load_scenario_file(asset(name))); }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("the Markdown handout of the cat sat: configuration, then the worked example's numbers as labelled tables") {
  const std::string md = cli::trace_to_markdown(cat_trace());
  CHECK(md.starts_with(
      "# the cat sat\n\n"
      "Self-attention over 3 tokens: the, cat, sat. Configuration: variant MHA, 1 head, head_dim 3, mask none, "
      "scale 1/\u221A3 = 0.5774, kernel softmax, no W_O.\n\n"));
  CHECK(contains(md,
                 "**scores** (3\u00D73)\n\n"
                 "|  | the | cat | sat |\n"
                 "| --- | ---: | ---: | ---: |\n"
                 "| the | 2 | 8 | 6 |\n"
                 "| cat | 6 | 16 | 14 |\n"
                 "| sat | 5 | 16 | 13 |\n"));
  CHECK(contains(md, "| the | 1.1547 | 4.6188 | 3.4641 |\n"));
  CHECK(contains(md,
                 "| the | 0.0232 | 0.7427 | 0.2341 |\n"
                 "| cat | 0.0024 | 0.7586 | 0.2391 |\n"
                 "| sat | 0.0015 | 0.8484 | 0.1501 |\n"));
  CHECK(contains(
      md,
      "**per row: shift m (largest visible score), Z = sum of exp(masked - m), entropy in nats** (3\u00D73)\n\n"
      "|  | m | Z | entropy |\n"
      "| --- | ---: | ---: | ---: |\n"
      "| the | 4.6188 | 1.3465 | 0.6483 |\n"));
  CHECK(contains(md,
                 "## 10. Output\n\n"
                 "`output = concat   [3\u00D73]   (no W_O)`\n\n"
                 "This is what attention hands on: one new row per token. The output row carries what each token read "
                 "from the others.\n\n"
                 "**output** (3\u00D73)\n\n"
                 "|  | 0 | 1 | 2 |\n"
                 "| --- | ---: | ---: | ---: |\n"
                 "| the | 1.9768 | 7.3924 | 0.7719 |\n"
                 "| cat | 1.9976 | 7.5077 | 0.7243 |\n"
                 "| sat | 1.9985 | 7.6909 | 0.4548 |\n"));
  CHECK(md.ends_with("| sat | 1.9985 | 7.6909 | 0.4548 |\n"));
  CHECK(contains(md, "## 5. Mask\n\n"));
  CHECK(contains(md, "Nothing is hidden: masked = scaled.\n"));
  CHECK_FALSE(contains(md, "**masked**"));
  CHECK_FALSE(contains(md, "-inf |"));
}

TEST_CASE("the handout walks the app's steps in order, each with the app's formula and first sentences") {
  const Trace t = cat_trace();
  const std::string md = cli::trace_to_markdown(t);
  std::size_t at = 0;
  for (const ui::Step step : ui::pipeline_steps(t.attention)) {
    const ui::StepText text = ui::explain_step(t, step, 0);
    const std::string heading =
        "## " + std::to_string(ui::step_index(step, t.attention) + 1) + ". " + text.title + "\n";
    CAPTURE(heading);
    const std::size_t next = md.find(heading, at);
    REQUIRE(next != std::string::npos);
    CHECK(md.find("`" + text.formula + "`\n", next) == next + heading.size() + 1);
    CHECK(contains(md, text.what.substr(0, text.what.find(". ") + 1)));
    at = next;
  }
  // Scale's reason opens with a premise ("If ..."), so its conclusion comes along.
  CHECK(contains(
      md,
      "Every score is divided by \u221A3 = 1.732: the largest, 16, becomes 9.238. If the 3 numbers of q and "
      "of k were random with variance 1, q \u00B7 k would have variance 3, a spread of \u221A3 = 1.732. "
      "Dividing by \u221A3 brings the spread back to 1, so the softmax does not saturate (nearly all weight on "
      "one key, where learning stalls).\n"));
}

TEST_CASE("the causal handout shows -inf where the mask hides a score, and exact 0 and 1 weights without decimals") {
  const std::string md = cli::trace_to_markdown(cat_trace(MaskKind::Causal));
  CHECK(contains(md,
                 "**masked** (3\u00D73)\n\n"
                 "|  | the | cat | sat |\n"
                 "| --- | ---: | ---: | ---: |\n"
                 "| the | 1.1547 | -inf | -inf |\n"
                 "| cat | 3.4641 | 9.2376 | -inf |\n"
                 "| sat | 2.8868 | 9.2376 | 7.5056 |\n"));
  CHECK(contains(md,
                 "**weights** (3\u00D73)\n\n"
                 "|  | the | cat | sat |\n"
                 "| --- | ---: | ---: | ---: |\n"
                 "| the | 1 | 0 | 0 |\n"
                 "| cat | 0.0031 | 0.9969 | 0 |\n"
                 "| sat | 0.0015 | 0.8484 | 0.1501 |\n"));
  CHECK(contains(md, "| the | 1 | 2 | 3 |\n| cat | 1.9969 | 7.9814 | 0.0093 |\n"));
  CHECK(contains(md, "mask causal,"));
}

TEST_CASE("precision sets the decimals of every table") {
  const std::string md = cli::trace_to_markdown(cat_trace(), 2);
  CHECK(contains(md, "| the | 0.02 | 0.74 | 0.23 |\n"));
  CHECK(contains(md, "| the | 2 | 8 | 6 |\n"));
  CHECK(contains(md, "scale 1/\u221A3 = 0.58,"));
}

TEST_CASE("multi-head with W_O: each head under its own heading, explained once, then the heads' contributions") {
  const std::string md = cli::trace_to_markdown(asset_trace("the_lazy_dog.json"));
  CHECK(contains(md,
                 "variant MHA, 4 heads, head_dim 2, mask causal, scale 1/\u221A2 = 0.7071, kernel softmax, with W_O."));
  CHECK(contains(
      md, "## Head 3 (reads KV head 3)\n\n### 3. Scores  Q K\u1D40\n\n`scores = q k\u1D40   [4\u00D74] = [4\u00D72]"));
  CHECK(count(md, "### 3. Scores  Q K\u1D40\n") == 4);
  CHECK(count(md, "Each cell is the dot product of one query") == 1);
  CHECK(contains(md, "**W_O** (8\u00D78)\n\n|  | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |\n"));
  CHECK(contains(md, "| h3.1 |"));
  CHECK(contains(md,
                 "### Contributions of the heads\n\n"
                 "W_O^(h) is the block of 2 rows of W_O that meets head h's columns, and output = \u03A3_h output_h "
                 "\u00B7 W_O^(h): these tables add up to the output above.\n\n"
                 "**head 0: output_0 \u00B7 W_O^(0)** (4\u00D78)\n\n"));
  CHECK(contains(md, "**head 3: output_3 \u00B7 W_O^(3)** (4\u00D78)\n\n"));
  CHECK(contains(md, "| the | -1.1190 | -0.9050 | -0.2030 | 0.9920 | -0.2280 | 0.9090 | -1.1240 | -0.3080 |\n"));
  CHECK(md.ends_with("Check, column 0 of \"the\": 0.4270 + (-1.1930) + 0.0520 + (-0.4050) = -1.1190.\n"));
}

TEST_CASE("GQA headings name the shared KV head each query head reads") {
  const std::string md = cli::trace_to_markdown(asset_trace("the_lazy_dog_gqa.json"));
  CHECK(contains(md, "variant GQA, 4 heads sharing 2 KV heads, head_dim 2,"));
  CHECK(contains(md, "## Head 1 (reads KV head 0)\n"));
  CHECK(contains(md, "## Head 3 (reads KV head 1)\n"));
  CHECK(contains(md, "**W_K** (8\u00D74)\n\n|  | g0.0 | g0.1 | g1.0 | g1.1 |\n"));
}

TEST_CASE("MLA's handout has the latent, the only thing its KV cache keeps") {
  const std::string md = cli::trace_to_markdown(asset_trace("the_lazy_dog_mla.json"));
  CHECK(contains(md, "variant MLA, 4 heads, head_dim 2, latent_dim 4, mask causal,"));
  CHECK(contains(md,
                 "**latent = X W_DKV (all the KV cache keeps per token)** (4\u00D74)\n\n"
                 "|  | 0 | 1 | 2 | 3 |\n"
                 "| --- | ---: | ---: | ---: | ---: |\n"
                 "| the | -0.5700 | -0.9400 | 0.4900 | 0.0700 |\n"
                 "| lazy | -1.8300 | 0.7300 | -0.2400 | 1.0900 |\n"));
  CHECK(contains(md, "**K = latent W_UK** (4\u00D78)\n"));
  CHECK(contains(md, "**V = latent W_UV** (4\u00D78)\n"));
}

TEST_CASE("more than 16 tokens: tables keep the first 16 rows and columns and say so") {
  Scenario s = cat_sat();
  s.input.tokens.clear();
  s.input.embeddings.resize(17, 4);
  for (int i = 0; i < 17; ++i) {
    s.input.tokens.push_back("t" + std::to_string(i));
    s.input.embeddings.row(i) = cat_sat().input.embeddings.row(i % 3);
  }
  const std::string md = cli::trace_to_markdown(compute_trace(s));
  CHECK(contains(md, "With 17 tokens, tables show only their first 16 rows and columns.\n"));
  CHECK(contains(
      md,
      "Self-attention over 17 tokens: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, \u2026."));
  CHECK(contains(md, "**scores** (17\u00D717, first 16 rows and columns shown)\n\n|  | t0 | t1 |"));
  CHECK(contains(md, "| t14 | t15 | \u2026 |\n"));
  CHECK(contains(md, "| t15 | 2 | 8 | 6 | 2 |"));
  CHECK(contains(md, "**X: input embeddings** (17\u00D74, first 16 rows shown)\n"));
  std::string vdots = "|";
  for (int i = 0; i < 18; ++i) vdots += " \u22EE |";
  CHECK(contains(md, "| 8 | 6 | 2 | \u2026 |\n" + vdots + "\n"));
  CHECK_FALSE(contains(md, "| t16 |"));
}

TEST_CASE("Markdown escapes token labels that would read as markup") {
  Scenario s = cat_sat();
  s.input.tokens = {"a|b", "*c*", "<s>"};
  const std::string md = cli::trace_to_markdown(compute_trace(s));
  CHECK(contains(md, "|  | a\\|b | \\*c\\* | \\<s> |\n"));
  CHECK(contains(md, "| a\\|b | 2 | 8 | 6 |\n"));
  CHECK(contains(md,
                 "Self-attention over 3 tokens: a|b, \\*c\\*, \\<s>. Configuration: variant MHA, 1 head, head_dim 3,"));
}

TEST_CASE("latex_escape: LaTeX's special characters, quotes and the explanations' math glyphs") {
  CHECK(cli::latex_escape("a_b&c") == "a\\_b\\&c");
  CHECK(cli::latex_escape("& % $ # _ { } ~ ^ \\") ==
        "\\& \\% \\$ \\# \\_ \\{ \\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}");
  CHECK(cli::latex_escape("<s> a|b") == "\\textless{}s\\textgreater{} a\\textbar{}b");
  CHECK(cli::latex_escape("\"the\" sees \"cat\"") == "``the'' sees ``cat''");
  CHECK(cli::latex_escape("q k\u1D40   [3\u00D73] \u00B7 \u221A3 \u03A3 \u2192 \u2026") ==
        "q k\\textsuperscript{T}\\quad [3$\\times$3] $\\cdot$ $\\surd$3 $\\Sigma$ $\\rightarrow$ \\dots{}");
}

TEST_CASE("the LaTeX handout is a complete document: amsmath and booktabs only, tables in math mode, ASCII only") {
  const std::string tex = cli::trace_to_latex(cat_trace(MaskKind::Causal));
  CHECK(tex.starts_with("\\documentclass[10pt,a4paper]{article}\n\\usepackage{amsmath}\n\\usepackage{booktabs}\n"));
  CHECK(count(tex, "\\usepackage") == 2);
  CHECK(count(tex, "\\begin{document}") == 1);
  CHECK(tex.ends_with("\\end{document}\n"));
  CHECK(count(tex, "\\begin{tabular}") == count(tex, "\\end{tabular}"));
  CHECK(count(tex, "\\begin{center}") == count(tex, "\\end{center}"));
  CHECK(std::all_of(tex.begin(), tex.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  CHECK(contains(tex, "\\begin{document}\n\n\\begin{center}\n{\\LARGE the cat sat}\n\\end{center}\n"));
  CHECK(contains(tex, "\\section*{3. Scores\\quad Q K\\textsuperscript{T}}\n"));
  CHECK(contains(tex,
                 "\\textbf{scores} ($3\\times3$)\\\\[2pt]\n"
                 "\\begin{tabular}{lrrr}\n"
                 "\\toprule\n"
                 " & the & cat & sat \\\\\n"
                 "\\midrule\n"
                 "the & $2$ & $8$ & $6$ \\\\\n"
                 "cat & $6$ & $16$ & $14$ \\\\\n"
                 "sat & $5$ & $16$ & $13$ \\\\\n"
                 "\\bottomrule\n"
                 "\\end{tabular}\n"));
  CHECK(contains(tex, "the & $1.1547$ & $-\\infty$ & $-\\infty$ \\\\\n"));
  CHECK(contains(tex, "cat & $0.0031$ & $0.9969$ & $0$ \\\\\n"));
  CHECK(contains(tex, "mask causal, scale 1/$\\surd$3 = 0.5774, kernel softmax, no W\\_O."));
}

TEST_CASE("LaTeX escapes token labels in tables, and a row label opening with a bracket or a star stays a label") {
  Scenario s = cat_sat();
  s.input.tokens = {"a_b&c", "[CLS]", "*"};
  const std::string tex = cli::trace_to_latex(compute_trace(s));
  CHECK(contains(tex, " & a\\_b\\&c & [CLS] & * \\\\\n"));
  CHECK(contains(tex,
                 "a\\_b\\&c & $2$ & $8$ & $6$ \\\\\n{}[CLS] & $6$ & $16$ & $14$ \\\\\n{}* & $5$ & $16$ & $13$ \\\\\n"));
}

TEST_CASE("trace --markdown and --latex print the handouts, with the overriding options applied") {
  const std::string cat = asset("the_cat_sat.json");
  const CliRun md = run_cli_capture({"trace", cat, "--markdown", "--mask", "causal", "--precision", "3"});
  CHECK(md.code == 0);
  CHECK(md.err.empty());
  CHECK(md.out == cli::trace_to_markdown(cat_trace(MaskKind::Causal), 3));
  const CliRun tex = run_cli_capture({"trace", "--latex", cat});
  CHECK(tex.code == 0);
  CHECK(tex.err.empty());
  CHECK(tex.out == cli::trace_to_latex(cat_trace()));
  const CliRun twice = run_cli_capture({"trace", cat, "--markdown", "--markdown"});
  CHECK(twice.code == 0);
}

TEST_CASE("--json, --markdown and --latex exclude each other: exit 2 naming the two given") {
  const std::string cat = asset("the_cat_sat.json");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"trace", cat, "--json", "--markdown"},
       "attention-lab: trace: --json and --markdown cannot be combined: choose one of --json, --markdown or --latex\n"},
      {{"trace", "--markdown", cat, "--latex"},
       "attention-lab: trace: --markdown and --latex cannot be combined: choose one of --json, --markdown or "
       "--latex\n"},
      {{"trace", cat, "--latex", "--json", "--markdown"},
       "attention-lab: trace: --latex and --json cannot be combined: choose one of --json, --markdown or --latex\n"},
  };
  for (const auto& [args, message] : cases) {
    const std::string captured = message;  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(captured);
    const CliRun r = run_cli_capture(args);
    CHECK(r.code == 2);
    CHECK(r.err == message);
    CHECK(r.out.empty());
  }
}

TEST_CASE("--precision is for the text output: with --json it is refused, not ignored") {
  const std::string cat = asset("the_cat_sat.json");
  const std::string model = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const std::string why =
      " --json and --precision cannot be combined: --precision sets the digits of the text output, and JSON writes "
      "every number in full\n";
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"trace", cat, "--json", "--precision", "3"}, "attention-lab: trace:" + why},
      {{"decode", "--precision", "3", cat, "--json"}, "attention-lab: decode:" + why},
      {{"online", cat, "--json", "--precision", "3"}, "attention-lab: online:" + why},
      {{"run", model, "--tokens", "a", "--json", "--precision", "3"}, "attention-lab: run:" + why},
  };
  for (const auto& [args, message] : cases) {
    const std::string captured = message;
    CAPTURE(captured);
    const CliRun r = run_cli_capture(args);
    CHECK(r.code == 2);
    CHECK(r.err == message);
    CHECK(r.out.empty());
  }
  CHECK(run_cli_capture({"trace", cat, "--json"}).code == 0);
  CHECK(run_cli_capture({"trace", cat, "--precision", "3"}).code == 0);
}

TEST_CASE("trace --help and attention-lab --help document --markdown and --latex") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"trace", "--help"}, std::vector<std::string>{"--help"}}) {
    const CliRun r = run_cli_capture(args);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "  --markdown        a handout instead, in Markdown:"));
    CHECK(contains(r.out,
                   "  --latex           the same handout as a LaTeX document (pdflatex; amsmath and booktabs only)\n"));
    CHECK(contains(r.out, "--json, --markdown and --latex exclude each other"));
  }
}

TEST_CASE("the handout has the positions, rope and selection steps where the scenario has them") {
  Scenario s = load_scenario_file(asset("the_lazy_dog.json"));
  s.attention.positions = Positions::Rope;
  s.attention.sparse = SparseConfig{2, 1, 2};
  const std::string md = cli::trace_to_markdown(compute_trace(s));
  CHECK(contains(md, "rope positions, sparse: each query keeps the top 2 keys of an indexer with 1 head of width 2"));
  CHECK(contains(md, "### 3. RoPE  turn q and k\n"));
  CHECK(contains(md, "### 7. Selection  top-k keys\n"));
  CHECK(contains(md, "I: the indexer's scores (-inf where the mask hides)"));
  s.attention.positions = Positions::Sinusoidal;
  s.attention.sparse.reset();
  const std::string sin = cli::trace_to_markdown(compute_trace(s));
  CHECK(contains(sin, "## 2. Positions  X + P\n"));
  CHECK(contains(sin, "## 3. Projections  Q, K, V\n"));
  CHECK_FALSE(contains(sin, "Selection"));
}
