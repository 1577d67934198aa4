//===- read_file.h - Reading whole input files ------------------*- C++ -*-===//
#ifndef EMBER_IO_READ_FILE_H
#define EMBER_IO_READ_FILE_H

#include "ember/status.h"

#include <string>

namespace ember::npy {

/// The bytes of a regular file; kNotFound when it does not exist.
Result<std::string> readWholeFile(const std::string &path);

} // namespace ember::npy

#endif // EMBER_IO_READ_FILE_H
