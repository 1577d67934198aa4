# EMBER_ENABLE_CUDA=AUTO|ON|OFF decides whether the CUDA backend is built.
# AUTO builds it when nvcc is found (the CUDA toolkit is preinstalled under
# /usr/local/cuda on the development and GPU machines). Only the runtime uses
# CUDA; the compiler never links it. The driver library (libcuda) is never
# linked: a binary that links it does not start on a machine without a GPU.

set(EMBER_HAVE_CUDA OFF)
if(NOT EMBER_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(EMBER_HAVE_CUDA ON)
  elseif(EMBER_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
