//===- npy.h - NumPy .npy and .npz files ------------------------*- C++ -*-===//
//
// Reading and writing the NumPy formats ember-run and the tests exchange
// tensors in. .npy: format versions 1, 2 and 3, little-endian ('<') or
// byte-order-free ('|') descriptors, C order only (fortran_order True is an
// error). Types: float32, float16, float64, int8, uint8, int32, int64, bool.
// .npz: a zip of .npy entries, stored (np.savez) or deflated
// (np.savez_compressed), zip64 included; CRCs are checked.
//
// Every malformed file gives a Status naming the file (and entry) and what
// is wrong; writers go through io/atomic_file.h (an unnamed temporary,
// fsync, rename), so a failed or killed write leaves nothing behind.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IO_NPY_H
#define EMBER_IO_NPY_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace ember::npy {

using NamedTensor = std::pair<std::string, Tensor>;

/// Parses .npy bytes into a newly allocated tensor. `what` names the source
/// in messages.
Result<Tensor> parseNpy(const void *data, size_t size, const std::string &what);
Result<Tensor> readNpy(const std::string &path);
/// The entries of an .npz, in archive order, names without ".npy".
Result<std::vector<NamedTensor>> readNpz(const std::string &path);
/// The same from the archive's bytes; `what` names the source in messages.
Result<std::vector<NamedTensor>> parseNpz(const std::string &bytes,
                                          const std::string &what);

/// The .npy (version 1) encoding of a tensor.
Result<std::string> encodeNpy(const Tensor &tensor);
/// Writes bytes to path whole or not at all (io/atomic_file.h).
Status writeFileAtomic(const std::string &path, const std::string &bytes);
Status writeNpy(const std::string &path, const Tensor &tensor);
/// Writes an .npz with stored (uncompressed) entries.
Status writeNpz(const std::string &path,
                const std::vector<NamedTensor> &entries);

} // namespace ember::npy

#endif // EMBER_IO_NPY_H
