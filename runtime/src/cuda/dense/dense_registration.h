//===- dense_registration.h - The CUDA dense kernel families ----*- C++ -*-===//
#ifndef EMBER_CUDA_DENSE_DENSE_REGISTRATION_H
#define EMBER_CUDA_DENSE_DENSE_REGISTRATION_H

#include "ember/status.h"

namespace ember {
class KernelRegistry;
namespace cuda::dense {

Status registerGemmKernels(KernelRegistry &r);        // linear matmul
Status registerCrossKernels(KernelRegistry &r);       // dcn_cross
Status registerInteractionKernels(KernelRegistry &r); // dot_interaction
Status
registerElementwiseKernels(KernelRegistry &r);   // unary binary compare where
Status registerCastKernels(KernelRegistry &r);   // cast
Status registerConcatKernels(KernelRegistry &r); // concat
Status registerNormKernels(KernelRegistry &r);   // softmax layer_norm
Status registerReduceKernels(KernelRegistry &r); // reduce_sum/max
Status registerShapeKernels(KernelRegistry &r);  // slice transpose shape
Status registerGatherKernels(KernelRegistry &r); // gather gather_elements
Status registerViewKernels(KernelRegistry &r);   // identity reshape flatten
                                                 // squeeze unsqueeze expand

} // namespace cuda::dense
} // namespace ember

#endif // EMBER_CUDA_DENSE_DENSE_REGISTRATION_H
