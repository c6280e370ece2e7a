#include "core/io/json_stream.h"

#include <cmath>

namespace attn {

void JsonStream::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ << ',';
  first_.back() = false;
}

JsonStream& JsonStream::begin_object() {
  separate();
  out_ << '{';
  first_.push_back(true);
  return *this;
}

JsonStream& JsonStream::end_object() {
  out_ << '}';
  first_.pop_back();
  return *this;
}

JsonStream& JsonStream::begin_array() {
  separate();
  out_ << '[';
  first_.push_back(true);
  return *this;
}

JsonStream& JsonStream::end_array() {
  out_ << ']';
  first_.pop_back();
  return *this;
}

JsonStream& JsonStream::key(std::string_view name) {
  separate();
  out_ << nlohmann::ordered_json(name) << ':';
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::value(const nlohmann::ordered_json& v) {
  separate();
  out_ << v;
  return *this;
}

JsonStream& JsonStream::row(const Eigen::Ref<const Eigen::RowVectorXd>& numbers) {
  row_.clear();
  for (Eigen::Index i = 0; i < numbers.size(); ++i) {
    const double x = numbers(i);
    row_.push_back(std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr));
  }
  return value(row_);
}

JsonStream& JsonStream::matrix(const Matrix& m) {
  return rows(m.rows(), [&m](Eigen::Index r) { return m.row(r); });
}

}  // namespace attn
