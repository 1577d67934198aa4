//===- EmberDialect.td - The Ember dialect -------------------*- tablegen -*-===//
//
// Jagged and keyed jagged tensors, embedding tables and lookups, and the
// asynchronous collectives of sharded recommendation models.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_DIALECT_TD
#define EMBER_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Ember_Dialect : Dialect {
  let name = "ember";
  let cppNamespace = "::mlir::ember";
  let summary = "Jagged tensors, embedding bags and collectives for recommendation models";
  let description = [{
    The Ember dialect models what no upstream dialect has: jagged tensors and
    keyed jagged tensors (KJT), embedding tables and lookups over them, and the
    asynchronous collectives that move sparse features and pooled embeddings
    between the ranks of a sharded model. Dense math stays in `tosa`, `tensor`
    and `arith`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Ember_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Ember_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class Ember_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Ember_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Ember_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ember_Dialect, mnemonic, traits>;

#endif // EMBER_DIALECT_TD
