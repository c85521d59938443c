#pragma once
// SBUF/PSUM tiles as Python holds them: a view plus a shared handle that frees the allocation
// when the last Python view of it is gone.

#include <memory>

#include "kernels/builder/kernel_builder.h"

namespace neuronsim::python {

/// The builder of the kernel being built; `builder` is null once that build has ended, so
/// Python objects that outlive it cannot reach it.
struct BuildSession {
  kernels::KernelBuilder* builder = nullptr;
};

/// One SBUF/PSUM allocation. Released by its destructor (when the last view goes away) unless
/// released explicitly or its build has ended.
class Allocation {
 public:
  Allocation(std::weak_ptr<BuildSession> session, kernels::Tile tile)
      : session_(std::move(session)), tile_(std::move(tile)) {}
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  /// Frees the bytes now (later use of any view throws in the builder). Idempotent.
  void release();

 private:
  std::weak_ptr<BuildSession> session_;
  kernels::Tile tile_;
  bool released_ = false;
};

/// A tile view and the allocation it belongs to (shared by every view of it).
struct PyTile {
  kernels::Tile tile;
  std::shared_ptr<Allocation> allocation;
  PyTile with(kernels::Tile view) const { return PyTile{std::move(view), allocation}; }
};

}  // namespace neuronsim::python
