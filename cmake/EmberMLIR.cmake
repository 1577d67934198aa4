# MLIR/LLVM 22 for the compiler side. Only the targets that link
# ember_mlir_settings (the dialect, passes, compiler and ember-opt) see MLIR;
# the runtime never does. HandleLLVMOptions is deliberately not included: it
# would change the flags of every target, the runtime's too.

find_package(MLIR REQUIRED CONFIG
  HINTS /usr/lib/llvm-22/lib/cmake/mlir)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "Ember needs MLIR/LLVM 22; found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}")
endif()
message(STATUS "Using MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

# Link against libMLIR.so rather than hundreds of static archives: links are
# much faster and the compiler runs only where MLIR is installed.
set(MLIR_LINK_MLIR_DYLIB ON)
set(LLVM_LINK_LLVM_DYLIB ON)

set(LLVM_EXTERNAL_LIT "${LLVM_TOOLS_BINARY_DIR}/lit" CACHE FILEPATH "lit")

separate_arguments(EMBER_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
add_library(ember_mlir_settings INTERFACE)
target_include_directories(ember_mlir_settings SYSTEM INTERFACE
  ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_definitions(ember_mlir_settings INTERFACE ${EMBER_LLVM_DEFINITIONS})
# LLVM is built without exceptions; compiler code reports errors through
# LogicalResult and diagnostics.
target_compile_options(ember_mlir_settings INTERFACE -fno-exceptions)
