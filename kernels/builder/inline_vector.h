#pragma once
// A vector of trivially copyable values that keeps its first N in place (no allocation).

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace neuronsim::kernels {

/// Elements live in `inline_` while there are at most N, else all of them in `heap_`.
template <class T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_.data() : heap_.data(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }

  void push_back(const T& value) {
    if (size_ < N) {
      inline_[size_] = value;
    } else {
      if (size_ == N) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(value);
    }
    ++size_;
  }

 private:
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  size_t size_ = 0;
};

}  // namespace neuronsim::kernels
