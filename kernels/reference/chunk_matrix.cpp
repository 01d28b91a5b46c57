// Dense float64 matrix products for the chunked reference (sizes <= 128: plain loops).
#include <stdexcept>
#include <string>

#include "gdn/reference_chunk.hpp"

namespace gdn::ref::chunk {

namespace {
void require(bool ok, const char* op, const Mat& x, const Mat& y) {
  if (!ok)
    throw std::invalid_argument(std::string("gdn::ref::chunk::") + op +
                                ": operands: expected matching inner dimensions, got " +
                                std::to_string(x.rows) + "x" + std::to_string(x.cols) + " and " +
                                std::to_string(y.rows) + "x" + std::to_string(y.cols));
}
}  // namespace

double row_dot(const Mat& x, const Mat& y, int64_t r) {
  double acc = 0;
  for (int64_t j = 0; j < x.cols; ++j) acc += x(r, j) * y(r, j);
  return acc;
}

Mat matmul(const Mat& x, const Mat& y) {
  require(x.cols == y.rows, "matmul", x, y);
  Mat z(x.rows, y.cols);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t p = 0; p < x.cols; ++p) {
      const double xi = x(i, p);
      if (xi == 0) continue;
      for (int64_t j = 0; j < y.cols; ++j) z(i, j) += xi * y(p, j);
    }
  return z;
}

Mat matmul_tn(const Mat& x, const Mat& y) {
  require(x.rows == y.rows, "matmul_tn", x, y);
  Mat z(x.cols, y.cols);
  for (int64_t p = 0; p < x.rows; ++p)
    for (int64_t i = 0; i < x.cols; ++i) {
      const double xi = x(p, i);
      if (xi == 0) continue;
      for (int64_t j = 0; j < y.cols; ++j) z(i, j) += xi * y(p, j);
    }
  return z;
}

Mat matmul_nt(const Mat& x, const Mat& y) {
  require(x.cols == y.cols, "matmul_nt", x, y);
  Mat z(x.rows, y.rows);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < y.rows; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < x.cols; ++p) acc += x(i, p) * y(j, p);
      z(i, j) = acc;
    }
  return z;
}

Mat transpose(const Mat& x) {
  Mat z(x.cols, x.rows);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) z(j, i) = x(i, j);
  return z;
}

void add_scaled(Mat& acc, const Mat& x, double alpha) {
  require(acc.rows == x.rows && acc.cols == x.cols, "add_scaled", acc, x);
  for (size_t i = 0; i < acc.a.size(); ++i) acc.a[i] += alpha * x.a[i];
}

}  // namespace gdn::ref::chunk
