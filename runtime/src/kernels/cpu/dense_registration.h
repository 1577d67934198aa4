//===- dense_registration.h - The dense kernel families ---------*- C++ -*-===//
//
// registerDenseKernels (register_dense_kernels.cpp) and registerShapeKernels
// (register_shape_kernels.cpp) call these, one per file/family. The contract of
// every kernel is in docs/kernels-dense.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_DENSE_REGISTRATION_H
#define EMBER_KERNELS_CPU_DENSE_REGISTRATION_H

#include "ember/status.h"

namespace ember {
class KernelRegistry;
namespace cpu {

// Dense math (registerDenseKernels).
Status registerGemmKernels(KernelRegistry &registry); // linear, matmul
Status
registerBinaryKernels(KernelRegistry &registry); // add sub mul div max min
Status registerUnaryKernels(
    KernelRegistry &registry); // relu sigmoid tanh ... identity
Status registerCompareKernels(KernelRegistry &registry); // equal greater where
Status registerSoftmaxKernels(KernelRegistry &registry); // softmax
Status registerNormKernels(KernelRegistry &registry);    // layer_norm
Status registerReduceKernels(KernelRegistry &registry);  // reduce_sum/max
Status registerInteractionKernels(KernelRegistry &registry); // dot_interaction
Status registerCrossKernels(KernelRegistry &registry);       // dcn_cross

// Data movement (registerShapeKernels).
Status registerConcatKernels(KernelRegistry &registry); // concat
Status registerReshapeKernels(
    KernelRegistry &registry); // reshape flatten squeeze unsqueeze shape
Status registerStridedViewKernels(KernelRegistry &registry); // slice transpose
Status registerExpandKernels(KernelRegistry &registry);      // expand
Status
registerGatherKernels(KernelRegistry &registry); // gather gather_elements
Status registerScatterKernels(KernelRegistry &registry); // scatter_nd
Status registerFillKernels(KernelRegistry &registry);    // constant_of_shape
Status registerCastKernels(KernelRegistry &registry);    // cast

} // namespace cpu
} // namespace ember

#endif // EMBER_KERNELS_CPU_DENSE_REGISTRATION_H
