#pragma once
// An optional value kept on the heap: one pointer inline, so that rarely present operands cost
// an instruction 8 bytes instead of the whole access pattern. The boxes come from the program
// pool (isa/pooled_allocator.h).

#include <optional>
#include <utility>

#include "isa/pooled_allocator.h"

namespace neuronsim::isa {

/// std::optional's interface for the uses the ISA makes of it (test, dereference, assign a value
/// or std::nullopt, compare), with the value boxed. Copies are deep.
template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}
  HeapOptional(const T& value) : box_(makePooled<T>(value)) {}
  HeapOptional(T&& value) : box_(makePooled<T>(std::move(value))) {}
  HeapOptional(const std::optional<T>& value) {
    if (value) box_ = makePooled<T>(*value);
  }
  HeapOptional(const HeapOptional& other) : HeapOptional() {
    if (other.box_) box_ = makePooled<T>(*other.box_);
  }
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) box_ = other.box_ ? makePooled<T>(*other.box_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(std::nullopt_t) {
    box_.reset();
    return *this;
  }

  bool has_value() const { return box_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *box_; }
  T& operator*() { return *box_; }
  const T* operator->() const { return box_.get(); }
  T* operator->() { return box_.get(); }
  /// The value; throws std::bad_optional_access when empty.
  const T& value() const {
    if (!box_) throw std::bad_optional_access();
    return *box_;
  }
  void reset() { box_.reset(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    box_ = makePooled<T>(std::forward<Args>(args)...);
    return *box_;
  }
  /// The value as a std::optional (a copy).
  std::optional<T> toOptional() const { return box_ ? std::optional<T>(*box_) : std::nullopt; }

  friend bool operator==(const HeapOptional& a, const HeapOptional& b) {
    if (!a.box_ || !b.box_) return !a.box_ && !b.box_;
    return *a.box_ == *b.box_;
  }

 private:
  PooledPtr<T> box_;
};

}  // namespace neuronsim::isa
