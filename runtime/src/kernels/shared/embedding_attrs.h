//===- embedding_attrs.h - Attributes of the embedding lookups -*- C++ -*-===//
//
// Parsing and validation of the attributes of embedding_bag,
// grouped_embedding_bag and embedding_sequence, shared by the CPU kernels and
// the CUDA kernels of the same names (runtime/src/cuda/embedding/).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_EMBEDDING_ATTRS_H
#define EMBER_KERNELS_SHARED_EMBEDDING_ATTRS_H

#include "ember/status.h"
#include "kernels/attributes.h"
#include "kernels/shared/embedding_table.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::embedding {

/// grouped_embedding_bag: feature_tables, pooling, table_formats, table_dims,
/// output_offsets, output_width, feature_names.
struct GroupedAttrs {
  std::vector<int64_t> featureTables;
  std::vector<Pooling> pooling;
  std::vector<std::string> tableFormats;
  std::vector<int64_t> tableDims;
  std::vector<int64_t> outputOffsets;
  int64_t outputWidth = 0;
  std::vector<std::string> featureNames;

  int64_t numFeatures() const {
    return static_cast<int64_t>(featureTables.size());
  }
  std::string featureLabel(int64_t f) const {
    std::string s = "feature " + std::to_string(f);
    if (!featureNames.empty())
      s += " '" + featureNames[f] + "'";
    return s;
  }
};

/// Reads and checks them for `numTables` table inputs.
Result<GroupedAttrs> readGroupedAttrs(const Attributes &attrs, int numTables);

/// embedding_bag: pooling, format, dim, padding_idx, include_last_offset,
/// feature_names.
struct BagAttrs {
  Pooling pooling = Pooling::kSum;
  std::string format;
  int64_t dim = -1;
  int64_t paddingIdx = -1;
  bool includeLastOffset = true;
  std::string featureName;
};

Result<BagAttrs> readBagAttrs(const Attributes &attrs);

/// embedding_sequence: format, dim, feature_names.
struct SequenceAttrs {
  std::string format;
  int64_t dim = -1;
  std::string featureName;
};

Result<SequenceAttrs> readSequenceAttrs(const Attributes &attrs);

} // namespace ember::embedding

#endif // EMBER_KERNELS_SHARED_EMBEDDING_ATTRS_H
