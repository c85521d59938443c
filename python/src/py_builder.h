#pragma once
// The kernel builder as a Python kernel reaches it: valid only while its build runs.

#include <memory>

#include "kernels/builder/kernel_builder.h"
#include "python/src/py_tile.h"

namespace neuronsim::python {

/// A handle on the builder of the kernel being built (see BuildSession).
class PyBuilder {
 public:
  explicit PyBuilder(std::shared_ptr<BuildSession> session) : session_(std::move(session)) {}
  /// The builder; throws neuronsim::Error once its build has ended.
  kernels::KernelBuilder& get() const;
  /// A new tile in `space`, freed when its last view is gone.
  PyTile allocate(isa::Space space, const std::vector<int64_t>& shape, isa::Dtype dtype,
                  const std::string& name);

 private:
  std::shared_ptr<BuildSession> session_;
};

/// Makes `builder` reachable from Python for the lifetime of this object (one build).
class BuildScope {
 public:
  explicit BuildScope(kernels::KernelBuilder& builder)
      : session_(std::make_shared<BuildSession>(BuildSession{&builder})) {}
  ~BuildScope() { session_->builder = nullptr; }
  BuildScope(const BuildScope&) = delete;
  BuildScope& operator=(const BuildScope&) = delete;
  PyBuilder handle() const { return PyBuilder(session_); }

 private:
  std::shared_ptr<BuildSession> session_;
};

}  // namespace neuronsim::python
