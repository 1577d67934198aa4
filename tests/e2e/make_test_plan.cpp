//===- make_test_plan.cpp - Plans and inputs for ember-run's tests --------===//
//
//   ember-make-test-plan DIR [BATCH]
//     creates DIR if needed and writes the test DLRM (support/dlrm_model.h) as
//     DIR/dlrm.plan, DIR/dlrm.plan.txt and DIR/dlrm.rank0.weights, a batch as
//     DIR/inputs.npz (dense, sparse.values, sparse.lengths) and as separate
//     DIR/dense.npy, DIR/sparse_values.npy, DIR/sparse_lengths.npy, and the
//     reference output DIR/expected_prob.npy.
//   ember-make-test-plan --compare ACTUAL.npy EXPECTED.npy
//     exits 0 when the arrays have the same shape and agree to 1e-5 + 1e-4|x|.
//
//===----------------------------------------------------------------------===//
#include "io/npy.h"
#include "support/dlrm_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

using namespace ember;
using namespace ember::testing;

namespace {

int compare(const char *actualPath, const char *expectedPath) {
  auto actual = npy::readNpy(actualPath);
  auto expected = npy::readNpy(expectedPath);
  if (!actual || !expected) {
    std::fprintf(stderr, "%s\n",
                 (!actual ? actual : expected).status().toString().c_str());
    return 1;
  }
  if (actual->dtype() != DType::kFloat32 ||
      actual->shape() != expected->shape()) {
    std::fprintf(stderr, "mismatch: %s vs expected %s\n",
                 actual->describe().c_str(), expected->describe().c_str());
    return 1;
  }
  for (int64_t i = 0; i < actual->numel(); ++i) {
    float a = actual->data<float>()[i], e = expected->data<float>()[i];
    if (!(std::fabs(a - e) <= 1e-5f + 1e-4f * std::fabs(e))) {
      std::fprintf(stderr, "element %lld: %g vs expected %g\n",
                   static_cast<long long>(i), a, e);
      return 1;
    }
  }
  std::printf("%lld elements match\n", static_cast<long long>(actual->numel()));
  return 0;
}

Status writeAll(const std::string &dir, int64_t batchSize) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return invalidArgument("cannot create '" + dir + "': " + ec.message());
  DlrmModel model = makeDlrmModel(42);
  EMBER_RETURN_IF_ERROR(writeDlrmPlan(model, dir, "dlrm").status());
  EMBER_RETURN_IF_ERROR(
      writeDlrmPlan(model, dir, "dlrm", /*text=*/true).status());
  DlrmBatch batch = makeDlrmBatch(model, batchSize, 4242);
  Tensor dense = Tensor::view(batch.dense.data(), DType::kFloat32,
                              {batchSize, DlrmModel::kDenseIn});
  Tensor values = Tensor::view(batch.values.data(), DType::kInt64,
                               {static_cast<int64_t>(batch.values.size())});
  Tensor lengths = Tensor::view(batch.lengths.data(), DType::kInt64,
                                {static_cast<int64_t>(batch.lengths.size())});
  EMBER_RETURN_IF_ERROR(
      npy::writeNpz(dir + "/inputs.npz", {{"dense", dense},
                                          {"sparse.values", values},
                                          {"sparse.lengths", lengths}}));
  EMBER_RETURN_IF_ERROR(npy::writeNpy(dir + "/dense.npy", dense));
  EMBER_RETURN_IF_ERROR(npy::writeNpy(dir + "/sparse_values.npy", values));
  EMBER_RETURN_IF_ERROR(npy::writeNpy(dir + "/sparse_lengths.npy", lengths));
  std::vector<float> expected = referenceDlrm(model, batch);
  return npy::writeNpy(
      dir + "/expected_prob.npy",
      Tensor::view(expected.data(), DType::kFloat32, {batchSize, 1}));
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--compare") == 0)
    return compare(argv[2], argv[3]);
  // An option where DIR goes (--help, say) would become a directory.
  if ((argc != 2 && argc != 3) || argv[1][0] == '-') {
    std::fprintf(
        stderr,
        "usage: ember-make-test-plan DIR [BATCH]\n"
        "       ember-make-test-plan --compare ACTUAL.npy EXPECTED.npy\n");
    return 2;
  }
  int64_t batch = argc == 3 ? std::atoll(argv[2]) : 16;
  Status s = writeAll(argv[1], batch > 0 ? batch : 16);
  if (!s.isOk()) {
    std::fprintf(stderr, "ember-make-test-plan: %s\n", s.toString().c_str());
    return 1;
  }
  return 0;
}
