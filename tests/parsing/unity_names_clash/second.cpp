#include <string>

namespace {
const std::string kText = "helper(";  // a string naming it is not a definition
// helper(double) in a comment is not one either
int helper(double x) { return static_cast<int>(x); }
int declared_only(int x);
int declared_only(int x) { return x; }
}  // namespace

int second() { return helper(2.0) + declared_only(1); }
