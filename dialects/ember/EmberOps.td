//===- EmberOps.td - Ember operations ------------------------*- tablegen -*-===//

#ifndef EMBER_OPS_TD
#define EMBER_OPS_TD

include "ember/EmberDialect.td"
include "ember/EmberTypes.td"
include "ember/EmberAttrs.td"
include "ember/EmberShardingAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Ops are grouped by topic, one .td (and one .cpp for their C++ code) each.
include "ember/EmberEmbeddingOps.td"
include "ember/EmberJaggedOps.td"
include "ember/EmberMutationOps.td"
include "ember/EmberCollectiveOps.td"
include "ember/EmberDenseOps.td"

#endif // EMBER_OPS_TD
