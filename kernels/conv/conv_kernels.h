#pragma once
// Registry entries of the convolution kernels.

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// `conv3d`: x_in, filters, optional bias -> out (torch.nn.functional.conv3d + activation).
KernelSpec conv3dSpec();
/// `conv3d_transpose`: x_in, filters, optional bias -> out (conv_transpose3d + activation).
KernelSpec conv3dTransposeSpec();
/// `conv3d_bwd`: dy, x_in, filters -> dx, dw, db (those requested).
KernelSpec conv3dBwdSpec();

}  // namespace neuronsim::kernels
