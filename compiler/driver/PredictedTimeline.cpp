//===- PredictedTimeline.cpp - ember-compile --emit timeline --------------===//
#include "driver/PredictedTimeline.h"

#include "io/atomic_file.h"
#include "plan/ember_plan.pb.h"
#include "sharding/ShardingDriver.h"
#include "timeline/TimelineSimulator.h"
#include "timeline/TraceJson.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::ember::driver {

LogicalResult writePredictedTimeline(ModuleOp module,
                                     const CompileOptions &options,
                                     const TimelineRequest &request,
                                     llvm::StringRef outputPath) {
  ::ember::plan::Plan plan;
  if (failed(plan_emitter::emitPlanMessage(module, planEmitterOptions(options),
                                           plan)))
    return failure();
  // The topology as the planner read it (the same file and overrides).
  ::ember::sharding::ShardingRequest sharding;
  sharding.worldSize = plan.world_size();
  sharding.ranksPerNode = options.ranksPerNode;
  sharding.batchSizePerRank = options.batchPerRank;
  sharding.topologyFile = options.topologyFile;
  std::vector<::ember::sharding::TableSpec> noTables;
  llvm::Expected<::ember::sharding::PlannerOptions> planner =
      ::ember::sharding::preparePlannerOptions(sharding, noTables);
  if (!planner)
    return module.emitError("--emit timeline: ")
           << llvm::toString(planner.takeError());
  ::ember::timeline::SizeAssumptions sizes;
  sizes.batchPerRank = planner->batchSizePerRank;
  sizes.idsPerBag = request.idsPerBag;
  llvm::Expected<::ember::timeline::Timeline> timeline =
      ::ember::timeline::simulatePlan(plan, planner->topology, sizes);
  if (!timeline)
    return module.emitError("--emit timeline: ")
           << llvm::toString(timeline.takeError());
  ::ember::timeline::TraceProvenance provenance;
  provenance.model = request.modelFile;
  provenance.target =
      options.target == plan_emitter::PlanTarget::Cuda ? "cuda" : "cpu";
  provenance.topologyFile = options.topologyFile;
  std::string text = ::ember::timeline::traceJson(*timeline, planner->topology,
                                                  sizes, provenance);
  if (outputPath == "-") {
    llvm::outs() << text;
    return success();
  }
  std::string error;
  if (!::ember::writeFileAtomically(outputPath.str(), text, &error))
    return module.emitError("--emit timeline: ") << error;
  return success();
}

} // namespace mlir::ember::driver
