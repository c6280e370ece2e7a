// What the scenario fuzzer (fuzz/, scripts/fuzz.sh) found, one test per fix; the inputs themselves are in
// tests/corpus/ and run through every invariant by the fuzz_corpus_regression test.
#include <string>

#include "core/io/scenario_json.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

std::string corpus(const std::string& name) { return std::string(ATTN_TEST_DATA_DIR) + "/../corpus/" + name; }

std::string mla_text(int heads, int latent_dim) {
  return R"({"tokens": ["a"], "embeddings": [[1]], "attention": {"variant": "mla", "heads": )" + std::to_string(heads) +
         R"(, "head_dim": 1, "latent_dim": )" + std::to_string(latent_dim) + "}}";
}

}  // namespace

// 110 bytes asked the absorbed form for blockdiag(W_UV^(h)) of (256 x 8192, 8192): 128 GiB in one allocation.
TEST_CASE("fuzz_findings: mla heads x latent_dim is bounded like heads x head_dim") {
  CHECK_THROWS_WITH_AS(load_scenario_file(corpus("oom-mla-256-heads-x-latent-8192-absorbed-form-128gib.json")),
                       "attention: heads x latent_dim must be <= 8192 (found 256 x 8192 = 2097152)", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(mla_text(8, 1025)),
                       "attention: heads x latent_dim must be <= 8192 (found 8 x 1025 = 8200)", InputError);
  const Scenario s = parse_scenario(mla_text(8, 1024));
  CHECK(s.attention.latent_dim == 1024);
  const Trace t = compute_trace(s);
  REQUIRE(t.absorbed.has_value());
  CHECK(t.absorbed->latent_output.cols() == 8192);
}

// A 16 KB file drew four 4096 x 8192 weights from the seed (1 GiB); 134 bytes of MLA with a query latent of
// 8192 drew a 1024 x 8192 W_UK and an 8192 x 8192 W_UQK.
TEST_CASE("fuzz_findings: no matrix, given, drawn from the seed or built by the absorbed form, above 4194304 numbers") {
  CHECK_THROWS_WITH_AS(
      compute_trace(load_scenario_file(corpus("oom-mha-d_model-4096-seeded-weights-1gib.json"))),
      "attention: W_Q (d_model by heads x head_dim = 8 x 1024) would be 4096 x 8192 = 33,554,432 numbers, "
      "more than the 4,194,304 a matrix may hold",
      InputError);
  CHECK_THROWS_WITH_AS(
      compute_trace(load_scenario_file(corpus("oom-mla-query-latent-8192-w_uq-and-w_uqk-512mib-each.json"))),
      "attention: W_UK (latent_dim by heads x head_dim = 8 x 1024) would be 1024 x 8192 = 8,388,608 numbers, "
      "more than the 4,194,304 a matrix may hold",
      InputError);
  // Every weight fits (W_UK and W_UV are 512 x 8192, at the limit), but blockdiag(W_UV) would be 4096 x 8192.
  const std::string absorbed =
      R"({"tokens": ["a"], "embeddings": [[1]], "attention": {"variant": "mla", "heads": 8, "head_dim": 1024, "latent_dim": 512}})";
  CHECK_THROWS_WITH_AS(
      compute_trace(parse_scenario(absorbed)),
      "attention: blockdiag(W_UV) of the absorbed form would be 4096 x 8192 = 33,554,432 numbers, more than "
      "the 4,194,304 a matrix may hold",
      InputError);
}
