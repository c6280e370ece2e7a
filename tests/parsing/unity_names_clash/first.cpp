// The unity-name check must report `helper`: second.cpp has one too, with other parameters.
namespace {
int helper(int x) { return x + 1; }
constexpr int kOwn = 1;
}  // namespace

int first() { return helper(kOwn); }
