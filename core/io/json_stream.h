#pragma once
// JSON written as it is made, straight to a stream: the bytes nlohmann-json's dump() gives for the same document
// (compact, keys in the order written), but what is held at any time is one row of numbers, never the document. Every
// scalar and every row is written by nlohmann-json itself, so numbers and strings read exactly as its dump writes them.
#include <ostream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/matrix.h"

namespace attn {

class JsonStream {
 public:
  explicit JsonStream(std::ostream& out) : out_(out) {}

  JsonStream& begin_object();
  JsonStream& end_object();
  JsonStream& begin_array();
  JsonStream& end_array();
  // In an object: the key of the value written next.
  JsonStream& key(std::string_view name);
  // A value small enough to hold whole (a number, a string, a short list).
  JsonStream& value(const nlohmann::ordered_json& v);
  // A row of numbers as an array, -inf, inf and NaN as null.
  JsonStream& row(const Eigen::Ref<const Eigen::RowVectorXd>& numbers);
  // Rows 0..rows-1 of what row_of(r) gives, as an array of rows, each made when it is written.
  template <class RowOf>
  JsonStream& rows(Eigen::Index rows, RowOf row_of) {
    begin_array();
    for (Eigen::Index r = 0; r < rows; ++r) row(row_of(r));
    return end_array();
  }
  JsonStream& matrix(const Matrix& m);
  // key(name).matrix(m), key(name).value(v): the common pairs.
  JsonStream& matrix(std::string_view name, const Matrix& m) { return key(name).matrix(m); }
  JsonStream& field(std::string_view name, const nlohmann::ordered_json& v) { return key(name).value(v); }

 private:
  void separate();  // the comma before a value or key that is not the first of its object or array

  std::ostream& out_;
  std::vector<bool> first_;  // per open object or array: nothing written in it yet
  bool after_key_ = false;
  nlohmann::ordered_json row_ = nlohmann::ordered_json::array();  // reused, so a row costs no new allocation
};

}  // namespace attn
