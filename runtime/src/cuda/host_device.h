//===- host_device.h - Code shared by device kernels and host tests -*- C++ -*-===//
//
// Per-thread kernel bodies are written once as EMBER_HD functions in .cuh
// headers: nvcc compiles them for the device, and the emulation tests
// (tests/unit/gpu/*_emulation_test.cpp) compile them with the host compiler
// and run them over an emulated grid on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_HOST_DEVICE_H
#define EMBER_CUDA_HOST_DEVICE_H

#ifdef __CUDACC__
#define EMBER_HD __host__ __device__
#define EMBER_HD_INLINE __host__ __device__ __forceinline__
#else
#define EMBER_HD
#define EMBER_HD_INLINE inline
#endif

#endif // EMBER_CUDA_HOST_DEVICE_H
