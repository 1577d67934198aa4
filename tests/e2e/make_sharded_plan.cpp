//===- make_sharded_plan.cpp - Multi-rank plans for ember-run's tests -----===//
//
//   ember-make-sharded-plan DIR [BATCH]
//     writes (support/sharded_model.h) DIR/tw.plan (single rank) and
//     DIR/tw{1,2,4}.plan (table-wise), DIR/rw.plan and DIR/rw{2,4}.plan
//     (row-wise, weighted KJT), with their weights files; one global batch
//     per model as DIR/tw_inputs.npz and DIR/rw_inputs.npz; and the table-wise
//     batch split over 2 ranks (ceil/floor) as DIR/tw_inputs.rank{0,1}.npz.
//
//===----------------------------------------------------------------------===//
#include "io/npy.h"
#include "support/sharded_model.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace ember;
using namespace ember::testing;

namespace {

Status writeInputs(const std::string &path, const ShardedTestModel &m,
                   ShardedTestBatch &b) {
  std::vector<std::pair<std::string, Tensor>> arrays = {
      {"dense", Tensor::view(b.dense.data(), DType::kFloat32,
                             {b.batch, ShardedTestModel::kDenseWidth})},
      {"sparse.values", Tensor::view(b.values.data(), DType::kInt64,
                                     {static_cast<int64_t>(b.values.size())})},
      {"sparse.lengths",
       Tensor::view(b.lengths.data(), DType::kInt64,
                    {static_cast<int64_t>(b.lengths.size())})}};
  if (m.weighted)
    arrays.push_back({"sparse.weights",
                      Tensor::view(b.weights.data(), DType::kFloat32,
                                   {static_cast<int64_t>(b.weights.size())})});
  return npy::writeNpz(path, arrays);
}

Status writeAll(const std::string &dir, int64_t batch) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return invalidArgument("cannot create '" + dir + "': " + ec.message());
  ShardedTestModel tw = makeTableWiseTestModel(5), rw = makeRowWiseTestModel(6);
  EMBER_RETURN_IF_ERROR(writeSingleRankTestPlan(tw, dir, "tw").status());
  EMBER_RETURN_IF_ERROR(writeSingleRankTestPlan(rw, dir, "rw").status());
  for (int w : {1, 2, 4})
    EMBER_RETURN_IF_ERROR(writeShardedTestPlan(tw, TestSharding::kTableWise, w,
                                               dir, "tw" + std::to_string(w))
                              .status());
  for (int w : {2, 4})
    EMBER_RETURN_IF_ERROR(writeShardedTestPlan(rw, TestSharding::kRowWise, w,
                                               dir, "rw" + std::to_string(w))
                              .status());
  ShardedTestBatch twBatch = makeShardedTestBatch(tw, batch, 91);
  ShardedTestBatch rwBatch = makeShardedTestBatch(rw, batch, 92);
  EMBER_RETURN_IF_ERROR(writeInputs(dir + "/tw_inputs.npz", tw, twBatch));
  EMBER_RETURN_IF_ERROR(writeInputs(dir + "/rw_inputs.npz", rw, rwBatch));
  int64_t first = (batch + 1) / 2;
  for (int r = 0; r < 2; ++r) {
    ShardedTestBatch part =
        sliceShardedTestBatch(twBatch, static_cast<int64_t>(tw.keys.size()),
                              r == 0 ? 0 : first, r == 0 ? first : batch);
    EMBER_RETURN_IF_ERROR(writeInputs(
        dir + "/tw_inputs.rank" + std::to_string(r) + ".npz", tw, part));
  }
  return Status::ok();
}

} // namespace

int main(int argc, char **argv) {
  // An option where DIR goes (--help, say) would become a directory.
  if ((argc != 2 && argc != 3) || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: ember-make-sharded-plan DIR [BATCH]\n");
    return 2;
  }
  int64_t batch = argc == 3 ? std::atoll(argv[2]) : 11;
  Status s = writeAll(argv[1], batch > 0 ? batch : 11);
  if (!s.isOk()) {
    std::fprintf(stderr, "ember-make-sharded-plan: %s\n", s.toString().c_str());
    return 1;
  }
  return 0;
}
