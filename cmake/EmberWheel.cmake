# Install rules of the `ember` wheel (pyproject.toml, scikit-build-core sets
# SKBUILD). Component ember_wheel, relative to the wheel's platlib:
#   ember/_ember_runtime*.so      the runtime's Python module
#   ember/bin/ember-compile       the commands, run by the entry points in
#   ember/bin/ember-run           ember/_commands.py
# The Python sources come from wheel.packages. The commands and the module
# keep the directories of the system libraries they linked (MLIR/LLVM 22,
# protobuf, Gloo, CUDA) in their RPATH: the wheel runs where the build's
# libraries are, as docs/python.md says.
foreach(target ember-compile ember-run _ember_runtime)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "the ember wheel needs the target ${target}: "
      "ember-compile needs MLIR 22 (EMBER_BUILD_COMPILER=ON), _ember_runtime "
      "needs pybind11-dev and python3-dev (scripts/setup.sh installs both)")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()
install(TARGETS ember-compile ember-run RUNTIME DESTINATION ember/bin
        COMPONENT ember_wheel)
install(TARGETS _ember_runtime LIBRARY DESTINATION ember COMPONENT ember_wheel)
