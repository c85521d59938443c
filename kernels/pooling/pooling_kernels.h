#pragma once
// Registry entries of the 3D pooling kernels (forward and backward, average and max).

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// `avg_pooling_3d`: input_tensor -> out.
KernelSpec avgPooling3dSpec();
/// `max_pooling_3d`: input_tensor -> out.
KernelSpec maxPooling3dSpec();
/// `avg_pooling_3d_backward`: grad_output, input_tensor -> grad_input.
KernelSpec avgPooling3dBackwardSpec();
/// `max_pooling_3d_backward`: grad_output, input_tensor, output_tensor -> grad_input.
KernelSpec maxPooling3dBackwardSpec();

}  // namespace neuronsim::kernels
