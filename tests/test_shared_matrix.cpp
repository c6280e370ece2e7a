// SharedMatrix (core/shared_matrix.h): a weight shared by every copy of the struct that holds it, replaced whole.
#include <doctest/doctest.h>

#include "core/model.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("a shared weight: copies share its numbers, a change replaces it for one holder only") {
  SharedMatrix a;
  CHECK_FALSE(a.has_value());
  CHECK_THROWS_AS((void)a.value(), std::bad_optional_access);
  a = Matrix::Identity(2, 2);  // an Eigen expression
  REQUIRE(a);
  const SharedMatrix b = a;
  CHECK(&*a == &*b);  // shared, not copied
  a = with_cell(*a, 0, 1, 5.0);
  CHECK((*a)(0, 1) == 5.0);
  CHECK((*b)(0, 1) == 0.0);  // the other holder keeps the old numbers
  CHECK_FALSE(a == b);
  CHECK(b == mat({{1, 0}, {0, 1}}));
  CHECK_FALSE(b == mat({{1, 0, 0}, {0, 1, 0}}));    // another shape is never equal
  CHECK(SharedMatrix(mat({{1, 0}, {0, 1}})) == b);  // equal numbers, different matrices
  a.reset();
  CHECK(a == SharedMatrix());
  CHECK_FALSE(a == b);
  CHECK(SharedMatrix(std::optional<Matrix>(mat({{2}}))).optional() == std::optional<Matrix>(mat({{2}})));
}

TEST_CASE("copying a model copies no weight: an edit of one weight leaves the others shared") {
  Model m;
  m.embedding = Matrix::Ones(64, 256);
  m.layers.resize(2);
  m.layers[1].own.W_1 = Matrix::Zero(256, 1024);
  Model copy = m;
  CHECK(&*copy.embedding == &*m.embedding);
  CHECK(&*copy.layers[1].own.W_1 == &*m.layers[1].own.W_1);
  copy.layers[1].own.W_1 = with_cell(*m.layers[1].own.W_1, 3, 4, 1.0);
  CHECK((*m.layers[1].own.W_1)(3, 4) == 0.0);
  CHECK(&*copy.embedding == &*m.embedding);
}
