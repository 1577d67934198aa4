# Linker, warnings and sanitizers shared by every Ember target.

include(CheckCXXSourceCompiles)
include(CheckLinkerFlag)

# ccache where it is installed and no launcher was chosen (the presets choose
# it; a `pip install .` build does not).
find_program(EMBER_CCACHE ccache)
foreach(lang C CXX CUDA)
  if(EMBER_CCACHE AND NOT CMAKE_${lang}_COMPILER_LAUNCHER)
    set(CMAKE_${lang}_COMPILER_LAUNCHER "${EMBER_CCACHE}")
  endif()
endforeach()

# lld links the MLIR tools several times faster than GNU ld.
check_linker_flag(CXX "-fuse-ld=lld" EMBER_HAVE_LLD)
if(EMBER_HAVE_LLD)
  add_link_options("-fuse-ld=lld")
endif()

if(EMBER_SANITIZE)
  add_compile_options("-fsanitize=${EMBER_SANITIZE}" "-fno-omit-frame-pointer"
                      "-fno-sanitize-recover=all")
  add_link_options("-fsanitize=${EMBER_SANITIZE}")
endif()

# libFuzzer (EMBER_FUZZ): every target gets coverage instrumentation; only the
# fuzz targets themselves link libFuzzer's main (fuzz/CMakeLists.txt).
if(EMBER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EMBER_FUZZ needs clang (cmake --preset fuzz uses "
                        "Debian's clang-22; scripts/setup.sh installs it)")
  endif()
  add_compile_options("-fsanitize=fuzzer-no-link")
endif()

# Warnings for Ember's own code (not applied to third-party headers, which are
# included as SYSTEM).
add_library(ember_warnings INTERFACE)
target_compile_options(ember_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
