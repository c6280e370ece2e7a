#pragma once
// A weight as a document holds it: absent, or an immutable matrix shared by every copy of the struct that holds it.
// Copying a model or a scenario (an undo step, an edit of one cell, the worker's request) then copies pointers, not
// millions of numbers. It reads like std::optional<Matrix>; a change replaces the whole matrix.
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/matrix.h"

namespace attn {

class SharedMatrix {
 public:
  SharedMatrix() = default;
  SharedMatrix(std::nullopt_t) {}                                               // NOLINT: as std::optional
  SharedMatrix(Matrix m) : m_(std::make_shared<const Matrix>(std::move(m))) {}  // NOLINT: as std::optional
  SharedMatrix(const std::optional<Matrix>& m) {                                // NOLINT: as std::optional
    if (m) m_ = std::make_shared<const Matrix>(*m);
  }

  template <class Derived>  // an Eigen expression: Matrix::Identity(n, n), a * b, ...
  SharedMatrix(const Eigen::EigenBase<Derived>& e) : m_(std::make_shared<const Matrix>(e.derived())) {}  // NOLINT
  // A matrix about to be dropped is moved in, not copied: a copy would hold its numbers twice for a moment.
  SharedMatrix& operator=(Matrix&& m) {
    m_ = std::make_shared<const Matrix>(std::move(m));
    return *this;
  }
  template <class Derived>
  SharedMatrix& operator=(const Eigen::EigenBase<Derived>& e) {
    m_ = std::make_shared<const Matrix>(e.derived());
    return *this;
  }

  bool has_value() const { return m_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const Matrix& operator*() const { return *m_; }
  const Matrix* operator->() const { return m_.get(); }
  const Matrix& value() const {
    if (!m_) throw std::bad_optional_access();
    return *m_;
  }
  void reset() { m_.reset(); }
  // The very same matrix (not a copy of its numbers): both hold it, as a document and its edit share a weight.
  bool same_object(const SharedMatrix& o) const { return m_ && m_ == o.m_; }
  std::optional<Matrix> optional() const { return m_ ? std::optional<Matrix>(*m_) : std::nullopt; }

  // Equal when both are absent, or both hold the same numbers (the same shape).
  friend bool operator==(const SharedMatrix& a, const SharedMatrix& b) {
    if (a.m_ == b.m_) return true;
    if (!a.m_ || !b.m_ || a.m_->rows() != b.m_->rows() || a.m_->cols() != b.m_->cols()) return false;
    return *a.m_ == *b.m_;
  }
  friend bool operator==(const SharedMatrix& a, const Matrix& b) {
    return a.m_ && a.m_->rows() == b.rows() && a.m_->cols() == b.cols() && *a.m_ == b;
  }

 private:
  std::shared_ptr<const Matrix> m_;
};

}  // namespace attn
