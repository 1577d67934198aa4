//===- EmberEmbeddingOps.td ------------------------------------------*- tablegen -*-===//

#ifndef EMBER_EMBEDDING_OPS_TD
#define EMBER_EMBEDDING_OPS_TD

#endif // EMBER_EMBEDDING_OPS_TD
