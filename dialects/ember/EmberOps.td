//===- EmberOps.td - Ember operations ------------------------*- tablegen -*-===//

#ifndef EMBER_OPS_TD
#define EMBER_OPS_TD

include "dialects/ember/EmberDialect.td"
include "dialects/ember/EmberTypes.td"
include "dialects/ember/EmberAttrs.td"
include "dialects/ember/EmberShardingAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Ops are grouped by topic, one .td (and one .cpp for their C++ code) each.
include "dialects/ember/EmberEmbeddingOps.td"
include "dialects/ember/EmberJaggedOps.td"
include "dialects/ember/EmberMutationOps.td"
include "dialects/ember/EmberCollectiveOps.td"
include "dialects/ember/EmberDenseOps.td"

#endif // EMBER_OPS_TD
