//===- embedding_attrs.cpp - Attributes of the embedding lookups ----------===//
#include "kernels/shared/embedding_attrs.h"

#include <string>

#include <utility>

namespace ember::embedding {

Result<GroupedAttrs> readGroupedAttrs(const Attributes &attrs, int numTables) {
  GroupedAttrs a;
  EMBER_ASSIGN_OR_RETURN(a.featureTables, attrs.getInts("feature_tables"));
  EMBER_ASSIGN_OR_RETURN(auto pooling, attrs.getStrings("pooling"));
  EMBER_ASSIGN_OR_RETURN(a.tableFormats, attrs.getStrings("table_formats"));
  EMBER_ASSIGN_OR_RETURN(a.tableDims, attrs.getInts("table_dims"));
  EMBER_ASSIGN_OR_RETURN(a.outputOffsets, attrs.getInts("output_offsets"));
  EMBER_ASSIGN_OR_RETURN(a.outputWidth, attrs.getInt("output_width"));
  EMBER_ASSIGN_OR_RETURN(a.featureNames, attrs.getStrings("feature_names"));
  const size_t F = a.featureTables.size();
  if (F == 0)
    return invalidArgument(
        "attribute 'feature_tables' is empty: a grouped lookup "
        "needs at least one feature");
  auto sizeError = [&](const char *name, size_t got, size_t want,
                       const char *of) {
    return invalidArgument("attribute '" + std::string(name) + "' has " +
                           std::to_string(got) + " entries, expected " +
                           std::to_string(want) + " (" + of + ")");
  };
  if (pooling.size() != F)
    return sizeError("pooling", pooling.size(), F, "one per feature");
  if (a.outputOffsets.size() != F)
    return sizeError("output_offsets", a.outputOffsets.size(), F,
                     "one per feature");
  if (!a.featureNames.empty() && a.featureNames.size() != F)
    return sizeError("feature_names", a.featureNames.size(), F,
                     "one per feature");
  if (a.tableFormats.size() != static_cast<size_t>(numTables))
    return sizeError("table_formats", a.tableFormats.size(), numTables,
                     "one per table input");
  if (a.tableDims.size() != static_cast<size_t>(numTables))
    return sizeError("table_dims", a.tableDims.size(), numTables,
                     "one per table input");
  if (a.outputWidth < 0)
    return invalidArgument("attribute 'output_width' is negative");
  for (int t = 0; t < numTables; ++t) {
    if (a.tableDims[t] <= 0)
      return invalidArgument("table_dims[" + std::to_string(t) +
                             "] must be positive");
    EMBER_RETURN_IF_ERROR(checkTableAttrs(a.tableFormats[t], a.tableDims[t],
                                          "table " + std::to_string(t)));
  }
  std::vector<std::pair<int64_t, int64_t>> ranges; // [begin, end) per feature
  for (size_t f = 0; f < F; ++f) {
    auto mode = parsePooling(pooling[f]);
    if (!mode)
      return invalidArgument("pooling of " + a.featureLabel(f) +
                             " must be sum, mean or max, got '" + pooling[f] +
                             "'");
    a.pooling.push_back(*mode);
    int64_t t = a.featureTables[f];
    if (t < 0 || t >= numTables)
      return invalidArgument("feature_tables: " + a.featureLabel(f) +
                             " uses table " + std::to_string(t) +
                             " but there are " + std::to_string(numTables) +
                             " table inputs");
    int64_t begin = a.outputOffsets[f], end = begin + a.tableDims[t];
    if (begin < 0 || end > a.outputWidth)
      return invalidArgument("output columns [" + std::to_string(begin) + ", " +
                             std::to_string(end) + ") of " + a.featureLabel(f) +
                             " are outside output_width " +
                             std::to_string(a.outputWidth));
    ranges.emplace_back(begin, end);
  }
  for (size_t f = 0; f < F; ++f)
    for (size_t g = f + 1; g < F; ++g)
      if (ranges[f].first < ranges[g].second &&
          ranges[g].first < ranges[f].second)
        return invalidArgument("output columns of " + a.featureLabel(f) +
                               " and " + a.featureLabel(g) + " overlap");
  return a;
}

Result<BagAttrs> readBagAttrs(const Attributes &attrs) {
  BagAttrs a;
  EMBER_ASSIGN_OR_RETURN(std::string pooling, attrs.getString("pooling"));
  auto mode = parsePooling(pooling);
  if (!mode)
    return invalidArgument(
        "attribute 'pooling' must be sum, mean or max, got '" + pooling + "'");
  a.pooling = *mode;
  EMBER_ASSIGN_OR_RETURN(a.format, attrs.getString("format"));
  EMBER_ASSIGN_OR_RETURN(a.dim, attrs.getInt("dim"));
  EMBER_RETURN_IF_ERROR(checkTableAttrs(a.format, a.dim, "embedding_bag"));
  EMBER_ASSIGN_OR_RETURN(a.paddingIdx, attrs.getInt("padding_idx"));
  if (a.paddingIdx < -1)
    return invalidArgument("attribute 'padding_idx' must be -1 (none) or a row "
                           "index, got " +
                           std::to_string(a.paddingIdx));
  EMBER_ASSIGN_OR_RETURN(int64_t includeLast,
                         attrs.getInt("include_last_offset"));
  if (includeLast != 0 && includeLast != 1)
    return invalidArgument(
        "attribute 'include_last_offset' must be 0 or 1, got " +
        std::to_string(includeLast));
  a.includeLastOffset = includeLast == 1;
  EMBER_ASSIGN_OR_RETURN(auto names, attrs.getStrings("feature_names"));
  if (names.size() > 1)
    return invalidArgument("attribute 'feature_names' of embedding_bag has " +
                           std::to_string(names.size()) + " names, expected 1");
  if (!names.empty())
    a.featureName = names[0];
  return a;
}

Result<SequenceAttrs> readSequenceAttrs(const Attributes &attrs) {
  SequenceAttrs a;
  EMBER_ASSIGN_OR_RETURN(a.format, attrs.getString("format"));
  EMBER_ASSIGN_OR_RETURN(a.dim, attrs.getInt("dim"));
  EMBER_RETURN_IF_ERROR(checkTableAttrs(a.format, a.dim, "embedding_sequence"));
  EMBER_ASSIGN_OR_RETURN(auto names, attrs.getStrings("feature_names"));
  if (names.size() > 1)
    return invalidArgument(
        "attribute 'feature_names' of embedding_sequence has " +
        std::to_string(names.size()) + " names, expected 1");
  if (!names.empty())
    a.featureName = names[0];
  return a;
}

} // namespace ember::embedding
