//===- EmberShardingAttrs.td - sharding and process groups ---*- tablegen -*-===//

#ifndef EMBER_SHARDING_ATTRS_TD
#define EMBER_SHARDING_ATTRS_TD

include "ember/EmberDialect.td"

#endif // EMBER_SHARDING_ATTRS_TD
