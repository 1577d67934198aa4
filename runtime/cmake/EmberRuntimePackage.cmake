# The EmberRuntime CMake package: an outside project does
#
#   find_package(EmberRuntime REQUIRED)      # EmberRuntime_DIR=<prefix>/lib/cmake/EmberRuntime
#   target_link_libraries(app PRIVATE Ember::runtime)
#
# and gets the public headers (ember/session.h, ember/c_api.h, ...) and every
# static library the runtime needs. Both an install tree (cmake --install) and
# the build tree (<build>/runtime/EmberRuntimeTargets.cmake via
# EmberRuntime_DIR=<build>/runtime) work.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(EMBER_RUNTIME_EXPORTED ember_runtime ember_executor ember_cpu_kernels
    ember_core ember_kernel_contract ember_comm ember_comm_backend
    ember_plan_proto ember_atomic_file ember_progress ember_protobuf ember_warnings)
if(EMBER_HAVE_CUDA)
  list(APPEND EMBER_RUNTIME_EXPORTED ember_cuda)
endif()
set_target_properties(ember_runtime PROPERTIES EXPORT_NAME runtime)
install(TARGETS ${EMBER_RUNTIME_EXPORTED} EXPORT EmberRuntimeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ember
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT EmberRuntimeTargets NAMESPACE Ember::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/EmberRuntime)
export(EXPORT EmberRuntimeTargets NAMESPACE Ember::
  FILE ${CMAKE_CURRENT_BINARY_DIR}/EmberRuntimeTargets.cmake)

set(EMBER_RUNTIME_BLAS_LIBRARIES "${BLAS_LIBRARIES}")
configure_package_config_file(
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmberRuntimeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/EmberRuntimeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/EmberRuntime)
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/EmberRuntimeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/EmberRuntimeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/EmberRuntimeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/EmberRuntime)
