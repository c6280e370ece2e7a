#include "core/online_softmax.h"

#include <algorithm>
#include <cmath>

#include "core/validate.h"

namespace attn {
namespace {

void check_request(const Trace& t, int head, int row, int block) {
  if (t.attention.kernel != Kernel::Softmax)
    throw InputError("attention.kernel", "the online softmax needs kernel softmax (found " +
                                             std::string(to_string(t.attention.kernel)) + ")");
  check_range(head, 0, t.attention.heads - 1, "--head");
  check_range(row, 0, t.n_q() - 1, "--row");
  check_range(block, 1, limits::kMaxTokens, "--block");
}

}  // namespace

OnlineSoftmax online_softmax(const Trace& t, int head, int row, int block) {
  check_request(t, head, row, block);
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  const Eigen::RowVectorXd x = h.masked_row(row);  // (N_KV) scaled scores, -inf where hidden
  OnlineSoftmax o{head, row, block, {}, Matrix::Zero(1, h.v.cols()), h.output.row(row), 0.0};
  double m = kNegInf, l = 0.0;
  Matrix acc = Matrix::Zero(1, h.v.cols());  // sum over keys so far of e^(x_j - m) v_j
  for (int start = 0; start < t.n_kv(); start += block) {
    OnlineBlock b;
    b.start = start;
    b.end = std::min(start + block, t.n_kv());
    b.block_max = x.segment(b.start, b.end - b.start).maxCoeff();
    b.m = std::max(m, b.block_max);
    if (b.m != kNegInf) {
      b.rescale = std::exp(m - b.m);  // e^(-inf) = 0 on the first visible block: there was nothing yet
      l *= b.rescale;
      acc *= b.rescale;
      for (int j = b.start; j < b.end; ++j) {
        if (x(j) == kNegInf) continue;
        const double e = std::exp(x(j) - b.m);
        l += e;
        acc += e * h.v.row(j);
      }
    }
    m = b.m;
    b.l = l;
    b.output = l > 0.0 ? Matrix(acc / l) : Matrix::Zero(1, h.v.cols());
    o.blocks.push_back(std::move(b));
  }
  if (!o.blocks.empty()) o.output = o.blocks.back().output;
  o.max_difference = (o.output - o.dense_output).cwiseAbs().maxCoeff();
  return o;
}

}  // namespace attn
