# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Ember"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ember_obj_root, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%python", "/usr/bin/python3"))
llvm_config.add_tool_substitutions(["ember-opt", "ember-translate", "ember-compile", "ember-run"], [config.ember_tools_dir])
