//===- EmberMutationOps.td ------------------------------------------*- tablegen -*-===//

#ifndef EMBER_MUTATION_OPS_TD
#define EMBER_MUTATION_OPS_TD

#endif // EMBER_MUTATION_OPS_TD
