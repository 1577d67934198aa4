//===- collective_info.h - A collective as an instruction sees it -*- C++
//-*-===//
#ifndef EMBER_COMM_COLLECTIVE_INFO_H
#define EMBER_COMM_COLLECTIVE_INFO_H

#include <string>
#include <vector>

namespace ember {

/// A validated CollectiveDescriptor of the plan, seen from one rank.
struct CollectiveInfo {
  /// Values of plan::CollectiveDescriptor::Kind.
  enum class Kind {
    kNone = 0,
    kAllToAll = 1,
    kKjtAllToAll = 2,
    kReduceScatter = 3,
    kAllGather = 4,
    kAllReduce = 5
  };
  Kind kind = Kind::kNone;
  std::vector<int> groupRanks; // ascending global ranks
  int position = 0;            // index of this rank in groupRanks
  std::string name;
};

} // namespace ember

#endif // EMBER_COMM_COLLECTIVE_INFO_H
