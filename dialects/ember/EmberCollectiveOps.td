//===- EmberCollectiveOps.td ------------------------------------------*- tablegen -*-===//

#ifndef EMBER_COLLECTIVE_OPS_TD
#define EMBER_COLLECTIVE_OPS_TD

#endif // EMBER_COLLECTIVE_OPS_TD
