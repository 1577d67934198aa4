//===- batch_split.h - One rank's part of a global batch --------*- C++ -*-===//
//
// ember-run --nproc N (and --split-batch) reads one global batch and gives
// rank r of W the samples [begin, end) with the first B % W ranks getting
// ceil(B / W) samples and the others floor(B / W). Split along the batch:
//   - dense inputs whose first dimension is a batch symbol (a KJT's batch
//     symbol, or "B"): rows [begin, end);
//   - KJT inputs (NAME.lengths or NAME.offsets, NAME.values, NAME.weights):
//     the bags of samples [begin, end) of every key, with their values.
// Every other input goes to every rank whole.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_EMBER_RUN_BATCH_SPLIT_H
#define EMBER_TOOLS_EMBER_RUN_BATCH_SPLIT_H

#include "ember/session.h"

#include <map>
#include <string>

namespace ember::tools {

/// The samples of `rank` among `world` for a batch of `batch`.
void batchPart(int64_t batch, int rank, int world, int64_t *begin,
               int64_t *end);

/// Replaces `arrays` (named as ember-run reads them) by rank's part.
Status splitGlobalBatch(const ModelSignature &signature,
                        std::map<std::string, Tensor> &arrays, int rank,
                        int world);

} // namespace ember::tools

#endif // EMBER_TOOLS_EMBER_RUN_BATCH_SPLIT_H
