//===- dlrm_model.cpp - A small DLRM plan and its reference ---------------===//
#include "support/dlrm_model.h"

#include "support/plan_builder.h"

#include <cmath>
#include <random>

namespace ember::testing {

namespace {
DlrmLayer makeLayer(int64_t in, int64_t out, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float scale = 1.0f / std::sqrt(static_cast<float>(in));
  DlrmLayer l;
  l.in = in;
  l.out = out;
  for (int64_t i = 0; i < in * out; ++i)
    l.weight.push_back(dist(rng) * scale);
  for (int64_t i = 0; i < out; ++i)
    l.bias.push_back(dist(rng) * 0.1f);
  return l;
}

std::vector<double> applyLayer(const DlrmLayer &l, const std::vector<double> &x,
                               const char *activation) {
  std::vector<double> y(l.out);
  for (int64_t o = 0; o < l.out; ++o) {
    double acc = l.bias[o];
    for (int64_t i = 0; i < l.in; ++i)
      acc += static_cast<double>(l.weight[o * l.in + i]) * x[i];
    if (std::string(activation) == "relu")
      acc = acc > 0 ? acc : 0;
    else if (std::string(activation) == "sigmoid")
      acc = 1.0 / (1.0 + std::exp(-acc));
    y[o] = acc;
  }
  return y;
}
} // namespace

DlrmModel makeDlrmModel(uint64_t seed) {
  std::mt19937_64 rng(seed);
  DlrmModel m;
  m.bottom.push_back(makeLayer(DlrmModel::kDenseIn, 8, rng));
  m.bottom.push_back(makeLayer(8, DlrmModel::kDim, rng));
  m.keys = {"f0", "f1", "f2"};
  m.pooling = {"sum", "mean", "sum"};
  m.tableRows = {10, 20, 5};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t rows : m.tableRows) {
    std::vector<float> t(rows * DlrmModel::kDim);
    for (float &v : t)
      v = dist(rng);
    m.tables.push_back(std::move(t));
  }
  int64_t f = m.numFeatures();
  int64_t interaction = DlrmModel::kDim + (f + 1) * f / 2;
  m.top.push_back(makeLayer(interaction, 8, rng));
  m.top.push_back(makeLayer(8, 1, rng));
  return m;
}

DlrmBatch makeDlrmBatch(const DlrmModel &model, int64_t batch, uint64_t seed,
                        int maxLen) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dense(-2.0f, 2.0f);
  DlrmBatch b;
  b.batch = batch;
  for (int64_t i = 0; i < batch * DlrmModel::kDenseIn; ++i)
    b.dense.push_back(dense(rng));
  for (int64_t f = 0; f < model.numFeatures(); ++f) {
    std::uniform_int_distribution<int64_t> len(0, maxLen);
    // Ids at both table edges are as likely as any other.
    std::uniform_int_distribution<int64_t> id(0, model.tableRows[f] - 1);
    for (int64_t s = 0; s < batch; ++s) {
      int64_t n = len(rng);
      b.lengths.push_back(n);
      for (int64_t k = 0; k < n; ++k)
        b.values.push_back(id(rng));
    }
  }
  return b;
}

Result<std::string> writeDlrmPlan(const DlrmModel &m, const std::string &dir,
                                  const std::string &base, bool text) {
  PlanBuilder b;
  const int64_t D = DlrmModel::kDim, F = m.numFeatures();
  int dense =
      b.input("dense", DType::kFloat32, {"B", Dim(DlrmModel::kDenseIn)});
  KjtSlotIds sparse = b.kjtInput("sparse", m.keys);
  auto mlp = [&](const std::vector<DlrmLayer> &layers, int x,
                 const std::string &prefix, const char *lastActivation) {
    for (size_t i = 0; i < layers.size(); ++i) {
      const DlrmLayer &l = layers[i];
      std::string name = prefix + "." + std::to_string(i);
      int w = b.constant(name + ".weight", DType::kFloat32, {l.out, l.in},
                         l.weight.data());
      int bias =
          b.constant(name + ".bias", DType::kFloat32, {l.out}, l.bias.data());
      int y = b.slot(name + ".out", DType::kFloat32, {"B", Dim(l.out)});
      bool last = i + 1 == layers.size();
      b.instruction("linear", {x, w, bias}, {y}, name)
          .attr("activation", last ? lastActivation : "relu");
      x = y;
    }
    return x;
  };
  int x = mlp(m.bottom, dense, "bottom_mlp", "relu");
  std::vector<int> lookupInputs = {sparse.values, sparse.lengths, -1};
  std::vector<std::string> formats;
  std::vector<int64_t> dims, featureTables, offsets;
  for (size_t t = 0; t < m.tables.size(); ++t) {
    lookupInputs.push_back(b.constant("sparse_arch.t" + std::to_string(t),
                                      DType::kFloat32, {m.tableRows[t], D},
                                      m.tables[t].data()));
    formats.push_back("float32");
    dims.push_back(D);
  }
  for (int64_t f = 0; f < F; ++f) {
    featureTables.push_back(f);
    offsets.push_back(f * D);
  }
  int e = b.slot("sparse_arch.out", DType::kFloat32, {"B", Dim(F * D)});
  b.instruction("grouped_embedding_bag", lookupInputs, {e}, "sparse_arch")
      .attr("feature_tables", featureTables)
      .attr("pooling", m.pooling)
      .attr("table_formats", formats)
      .attr("table_dims", dims)
      .attr("output_offsets", offsets)
      .attr("output_width", F * D)
      .attr("feature_names", m.keys);
  int z = b.slot("interaction.out", DType::kFloat32,
                 {"B", Dim(D + (F + 1) * F / 2)});
  b.instruction("dot_interaction", {x, e}, {z}, "interaction")
      .attr("num_features", F)
      .attr("self_interaction", int64_t{0});
  int prob = mlp(m.top, z, "over_arch", "sigmoid");
  b.output("prob", prob);
  return b.write(dir, base, text);
}

std::vector<float> referenceDlrm(const DlrmModel &m, const DlrmBatch &batch) {
  const int64_t B = batch.batch, D = DlrmModel::kDim, F = m.numFeatures();
  std::vector<int64_t> starts(F * B + 1, 0);
  for (int64_t i = 0; i < F * B; ++i)
    starts[i + 1] = starts[i] + batch.lengths[i];
  std::vector<float> out;
  for (int64_t s = 0; s < B; ++s) {
    std::vector<double> x(batch.dense.begin() + s * DlrmModel::kDenseIn,
                          batch.dense.begin() + (s + 1) * DlrmModel::kDenseIn);
    for (const DlrmLayer &l : m.bottom)
      x = applyLayer(l, x, "relu");
    std::vector<std::vector<double>> vecs = {x};
    for (int64_t f = 0; f < F; ++f) {
      std::vector<double> pooled(D, 0.0);
      int64_t begin = starts[f * B + s], end = starts[f * B + s + 1];
      for (int64_t k = begin; k < end; ++k)
        for (int64_t d = 0; d < D; ++d)
          pooled[d] += m.tables[f][batch.values[k] * D + d];
      if (m.pooling[f] == "mean" && end > begin)
        for (double &v : pooled)
          v /= static_cast<double>(end - begin);
      vecs.push_back(pooled);
    }
    std::vector<double> z = x;
    for (int64_t i = 0; i <= F; ++i)
      for (int64_t j = 0; j < i; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += vecs[i][d] * vecs[j][d];
        z.push_back(dot);
      }
    for (size_t i = 0; i < m.top.size(); ++i)
      z = applyLayer(m.top[i], z, i + 1 == m.top.size() ? "sigmoid" : "relu");
    out.push_back(static_cast<float>(z[0]));
  }
  return out;
}

} // namespace ember::testing
