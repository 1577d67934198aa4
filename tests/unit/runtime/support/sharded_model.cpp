//===- sharded_model.cpp - Hand-built multi-rank embedding plans ----------===//
#include "support/sharded_model.h"

#include "plan/plan_writer.h"
#include "support/plan_builder.h"

#include <random>

namespace ember::testing {

namespace {

ShardedTestModel makeModel(uint64_t seed, std::vector<int64_t> rows,
                           std::vector<int64_t> dims,
                           std::vector<std::string> pooling, bool weighted) {
  ShardedTestModel m;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t t = 0; t < rows.size(); ++t) {
    m.keys.push_back("f" + std::to_string(t));
    std::vector<float> table(rows[t] * dims[t]);
    for (float &x : table)
      x = u(rng);
    m.tables.push_back(std::move(table));
  }
  m.rows = std::move(rows);
  m.dims = std::move(dims);
  m.pooling = std::move(pooling);
  m.weighted = weighted;
  return m;
}

/// Inputs and the dense path every variant shares.
struct Common {
  int dense = -1;
  int denseRelu = -1;
  KjtSlotIds sparse;
};

/// Output "pooled", and "interaction" when the model has it.
void addPooledOutputs(PlanBuilder &b, const ShardedTestModel &m,
                      const Common &c, int pooled) {
  b.output("pooled", pooled);
  if (!m.interaction)
    return;
  int both = b.slot("interaction", DType::kFloat32,
                    {"B", Dim(ShardedTestModel::kDenseWidth + m.pooledWidth())});
  b.instruction("concat", {c.denseRelu, pooled}, {both}, "interaction")
      .attr("axis", int64_t{1});
  b.output("interaction", both);
}

Common addCommon(PlanBuilder &b, const ShardedTestModel &m) {
  Common c;
  c.dense = b.input("dense", DType::kFloat32,
                    {"B", Dim(ShardedTestModel::kDenseWidth)});
  c.sparse =
      b.kjtInput("sparse", m.keys, DType::kInt64, DType::kInt64, m.weighted);
  int relu = b.slot("dense_relu", DType::kFloat32,
                    {"B", Dim(ShardedTestModel::kDenseWidth)});
  b.instruction("relu", {c.dense}, {relu}, "dense_arch");
  b.output("dense_relu", relu);
  c.denseRelu = relu;
  return c;
}

/// A grouped lookup of features [first, first + count) over the given
/// tables (already constants), one table per feature.
void addLookup(PlanBuilder &b, const ShardedTestModel &m, int values,
               int lengths, int weights, const std::vector<int> &tables,
               int64_t first, int64_t count, int out, const std::string &name) {
  std::vector<int> inputs = {values, lengths, weights};
  std::vector<std::string> formats, pooling, names;
  std::vector<int64_t> dims, featureTables, offsets;
  int64_t width = 0;
  for (int64_t i = 0; i < count; ++i) {
    inputs.push_back(tables[i]);
    formats.push_back("float32");
    dims.push_back(m.dims[first + i]);
    featureTables.push_back(i);
    offsets.push_back(width);
    pooling.push_back(m.pooling[first + i]);
    names.push_back(m.keys[first + i]);
    width += m.dims[first + i];
  }
  b.instruction("grouped_embedding_bag", inputs, {out}, name)
      .attr("feature_tables", featureTables)
      .attr("pooling", pooling)
      .attr("table_formats", formats)
      .attr("table_dims", dims)
      .attr("output_offsets", offsets)
      .attr("output_width", width)
      .attr("feature_names", names);
}

std::vector<int64_t> evenSplits(int64_t n, int world) {
  std::vector<int64_t> s(world);
  for (int r = 0; r < world; ++r)
    s[r] = n / world + (r < n % world ? 1 : 0);
  return s;
}

void buildTableWiseRank(PlanBuilder &b, const ShardedTestModel &m, int world,
                        int rank) {
  Common c = addCommon(b, m);
  std::vector<int64_t> splits = evenSplits(m.keys.size(), world);
  int64_t first = 0;
  for (int r = 0; r < rank; ++r)
    first += splits[r];
  const int64_t mine = splits[rank];
  std::vector<int64_t> dimPerRank(world, 0);
  for (int r = 0, f = 0; r < world; ++r)
    for (int64_t i = 0; i < splits[r]; ++i, ++f)
      dimPerRank[r] += m.dims[f];

  int l2 = b.slot("input_dist.lengths", DType::kInt64, {Dim("BT", mine)});
  int v2 = b.slot("input_dist.values", DType::kInt64, {"NT"});
  b.instruction("kjt_all_to_all", {c.sparse.lengths, c.sparse.values, -1},
                {l2, v2}, "sparse_arch.input_dist")
      .attr("key_splits", splits)
      .proto()
      .set_collective(1);
  std::vector<int> tables;
  for (int64_t i = 0; i < mine; ++i)
    tables.push_back(b.constant(
        "sparse_arch.t" + std::to_string(first + i), DType::kFloat32,
        {m.rows[first + i], m.dims[first + i]}, m.tables[first + i].data()));
  int local = b.slot("sparse_arch.local", DType::kFloat32,
                     {"BT", Dim(dimPerRank[rank])});
  addLookup(b, m, v2, l2, -1, tables, first, mine, local, "sparse_arch.lookup");
  int pooled = b.slot("pooled", DType::kFloat32, {"B", Dim(m.pooledWidth())});
  b.instruction("pooled_all_to_all", {local, c.dense}, {pooled},
                "sparse_arch.output_dist")
      .attr("dim_per_rank", dimPerRank)
      .proto()
      .set_collective(2);
  addPooledOutputs(b, m, c, pooled);
}

int64_t blockSize(int64_t rows, int world) {
  return (rows + world - 1) / world;
}

void buildRowWiseRank(PlanBuilder &b, const ShardedTestModel &m, int world,
                      int rank) {
  Common c = addCommon(b, m);
  const int64_t F = static_cast<int64_t>(m.keys.size());
  std::vector<int64_t> blocks;
  for (int64_t rows : m.rows)
    blocks.push_back(blockSize(rows, world));
  int vb = b.slot("bucketize.values", DType::kInt64, {"NB"});
  int lb = b.slot("bucketize.lengths", DType::kInt64, {Dim("B", world * F)});
  int wb = b.slot("bucketize.weights", DType::kFloat32, {"NB"});
  int perm = b.slot("bucketize.permute", DType::kInt64, {"NB"});
  b.instruction("kjt_bucketize",
                {c.sparse.values, c.sparse.lengths, c.sparse.weights},
                {vb, lb, wb, perm}, "sparse_arch.bucketize")
      .attr("block_sizes", blocks)
      .attr("num_buckets", int64_t{world});
  int l2 = b.slot("input_dist.lengths", DType::kInt64, {Dim("BT", F)});
  int v2 = b.slot("input_dist.values", DType::kInt64, {"NT"});
  int w2 = b.slot("input_dist.weights", DType::kFloat32, {"NT"});
  b.instruction("kjt_all_to_all", {lb, vb, wb}, {l2, v2, w2},
                "sparse_arch.input_dist")
      .attr("key_splits", std::vector<int64_t>(world, F))
      .proto()
      .set_collective(1);
  std::vector<int> tables;
  ShardedTestModel shard = m;
  for (int64_t f = 0; f < F; ++f) {
    int64_t begin = std::min(m.rows[f], rank * blocks[f]);
    int64_t end = std::min(m.rows[f], begin + blocks[f]);
    shard.rows[f] = end - begin;
    tables.push_back(b.constant("sparse_arch.t" + std::to_string(f) + ".shard" +
                                    std::to_string(rank),
                                DType::kFloat32, {end - begin, m.dims[f]},
                                m.tables[f].data() + begin * m.dims[f]));
  }
  int partial = b.slot("sparse_arch.partial", DType::kFloat32,
                       {"BT", Dim(m.pooledWidth())});
  addLookup(b, shard, v2, l2, w2, tables, 0, F, partial, "sparse_arch.lookup");
  int pooled = b.slot("pooled", DType::kFloat32, {"B", Dim(m.pooledWidth())});
  b.instruction("reduce_scatter", {partial, c.dense}, {pooled},
                "sparse_arch.output_dist")
      .attr("reduce", "sum")
      .proto()
      .set_collective(2);
  addPooledOutputs(b, m, c, pooled);
}

} // namespace

int64_t ShardedTestModel::pooledWidth() const {
  int64_t w = 0;
  for (int64_t d : dims)
    w += d;
  return w;
}

ShardedTestModel makeTableWiseTestModel(uint64_t seed) {
  return makeModel(seed, {10, 20, 7, 13, 5}, {4, 8, 4, 2, 6},
                   {"sum", "mean", "max", "sum", "mean"}, false);
}

ShardedTestModel makeRowWiseTestModel(uint64_t seed) {
  return makeModel(seed, {10, 7, 16}, {4, 2, 8}, {"sum", "sum", "sum"}, true);
}

Result<std::string> writeSingleRankTestPlan(const ShardedTestModel &m,
                                            const std::string &dir,
                                            const std::string &base) {
  PlanBuilder b;
  Common c = addCommon(b, m);
  std::vector<int> tables;
  for (size_t t = 0; t < m.tables.size(); ++t)
    tables.push_back(b.constant("sparse_arch.t" + std::to_string(t),
                                DType::kFloat32, {m.rows[t], m.dims[t]},
                                m.tables[t].data()));
  int pooled = b.slot("pooled", DType::kFloat32, {"B", Dim(m.pooledWidth())});
  addLookup(b, m, c.sparse.values, c.sparse.lengths, c.sparse.weights, tables,
            0, static_cast<int64_t>(m.keys.size()), pooled,
            "sparse_arch.lookup");
  addPooledOutputs(b, m, c, pooled);
  return b.write(dir, base);
}

Result<std::string> writeShardedTestPlan(const ShardedTestModel &m,
                                         TestSharding sharding, int world,
                                         const std::string &dir,
                                         const std::string &base) {
  plan::Plan plan;
  for (int r = 0; r < world; ++r) {
    PlanBuilder b;
    if (sharding == TestSharding::kTableWise)
      buildTableWiseRank(b, m, world, r);
    else
      buildRowWiseRank(b, m, world, r);
    EMBER_RETURN_IF_ERROR(
        b.writeWeights(dir, base + ".rank" + std::to_string(r) + ".weights"));
    if (r == 0)
      plan = b.proto();
    else
      *plan.add_programs() = b.program();
    plan.mutable_programs(r)->set_rank(r);
  }
  plan.set_world_size(world);
  const char *names[] = {"sparse_arch.input_dist", "sparse_arch.output_dist"};
  for (int i = 0; i < 2; ++i) {
    plan::CollectiveDescriptor *c = plan.add_collectives();
    c->set_kind(i == 0 ? plan::CollectiveDescriptor::KJT_ALL_TO_ALL
                : sharding == TestSharding::kTableWise
                    ? plan::CollectiveDescriptor::ALL_TO_ALL
                    : plan::CollectiveDescriptor::REDUCE_SCATTER);
    for (int r = 0; r < world; ++r)
      c->add_group_ranks(r);
    c->set_name(names[i]);
  }
  std::string path = dir + "/" + base + ".plan", error;
  if (!writePlanFile(plan, path, &error))
    return invalidArgument(error);
  return path;
}

ShardedTestBatch makeShardedTestBatch(const ShardedTestModel &m, int64_t batch,
                                      uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  ShardedTestBatch out;
  out.batch = batch;
  for (int64_t i = 0; i < batch * ShardedTestModel::kDenseWidth; ++i)
    out.dense.push_back(u(rng));
  for (size_t f = 0; f < m.keys.size(); ++f)
    for (int64_t s = 0; s < batch; ++s) {
      int64_t len = static_cast<int64_t>(rng() % 5);
      out.lengths.push_back(len);
      for (int64_t j = 0; j < len; ++j) {
        // Table edges often: first and last row.
        uint64_t pick = rng() % 8;
        int64_t id = pick == 0   ? 0
                     : pick == 1 ? m.rows[f] - 1
                                 : static_cast<int64_t>(rng() % m.rows[f]);
        out.values.push_back(id);
        if (m.weighted)
          out.weights.push_back(u(rng));
      }
    }
  return out;
}

ShardedTestBatch sliceShardedTestBatch(const ShardedTestBatch &in,
                                       int64_t numKeys, int64_t begin,
                                       int64_t end) {
  ShardedTestBatch out;
  out.batch = end - begin;
  const int64_t w = ShardedTestModel::kDenseWidth;
  out.dense.assign(in.dense.begin() + begin * w, in.dense.begin() + end * w);
  int64_t pos = 0;
  for (int64_t f = 0; f < numKeys; ++f)
    for (int64_t s = 0; s < in.batch; ++s) {
      int64_t len = in.lengths[f * in.batch + s];
      if (s >= begin && s < end) {
        out.lengths.push_back(len);
        out.values.insert(out.values.end(), in.values.begin() + pos,
                          in.values.begin() + pos + len);
        if (!in.weights.empty())
          out.weights.insert(out.weights.end(), in.weights.begin() + pos,
                             in.weights.begin() + pos + len);
      }
      pos += len;
    }
  return out;
}

} // namespace ember::testing
