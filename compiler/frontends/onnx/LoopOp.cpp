//===- LoopOp.cpp - ONNX Loop as scf.for
//-----------------------------------===//
//
// torch.onnx.export turns each nn.EmbeddingBag into a Loop over the bags: a
// trip count, a condition that is constant true, no or few loop-carried
// values, and scan outputs (one pooled row per bag). Such a Loop becomes
//
//   %init = tensor.empty(%M) : tensor<?xDxf32>          // one per scan output
//   %r:... = scf.for %i = 0 to %M step 1 iter_args(carried..., %init) {
//     <body, with the iteration number as a 0-D i64 tensor>
//     %row = tensor.expand_shape %scan -> tensor<1xDxf32>
//     %next = tensor.insert_slice %row into %acc[%i, 0] [1, D] [1, 1]
//     scf.yield carried'..., %next
//   }
//
// a structured form a raise-embedding-bags pass can match. Loops whose
// condition depends on data (while loops) and scan outputs without a static
// per-iteration shape are errors naming the node.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/TypeConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// True when `v` is known at import time to be a (single) true value.
bool isConstantTrue(ImportContext &ctx, Value v) {
  DenseElementsAttr attr = ctx.getConstant(v);
  if (!attr || attr.getNumElements() != 1 ||
      !attr.getElementType().isSignlessInteger())
    return false;
  return !(*attr.getValues<APInt>().begin()).isZero();
}

LogicalResult convertLoop(ImportContext &ctx) {
  const ::onnx::NodeProto &node = ctx.node();
  std::string name = ctx.nodeName().str();
  const auto *bodyAttr = ctx.attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return ctx.emitError() << "needs a 'body' graph";
  const ::onnx::GraphProto &body = bodyAttr->g();
  int numCarried = node.input_size() - 2;
  if (numCarried < 0 || body.input_size() != numCarried + 2 ||
      body.output_size() < numCarried + 1)
    return ctx.emitError() << "body signature does not match the node ("
                           << node.input_size() << " inputs, body has "
                           << body.input_size() << " inputs and "
                           << body.output_size() << " outputs)";
  int numScans = body.output_size() - 1 - numCarried;
  if (node.output_size() > numCarried + numScans)
    return ctx.emitError() << "has more outputs than its body produces";
  if (!ctx.hasInput(0))
    return ctx.emitError() << "loops without a trip count (while loops) are "
                              "not supported";
  if (ctx.hasInput(1)) {
    Value cond = ctx.input(1);
    if (!cond)
      return failure();
    if (!isConstantTrue(ctx, cond))
      return ctx.emitError() << "the initial condition must be constant true "
                                "(data-dependent termination is not "
                                "supported)";
  }
  Value tripCount = ctx.input(0);
  if (!tripCount)
    return failure();
  llvm::SmallVector<Value> carried;
  for (int i = 0; i < numCarried; ++i) {
    Value v = ctx.input(2 + i);
    if (!v)
      return failure();
    carried.push_back(v);
  }

  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  // Trip count: a one-element int64 tensor.
  auto tripType = tensorTypeOf(tripCount);
  if (tripType.getNumElements() != 1 || !tripType.hasStaticShape())
    return ctx.emitError() << "trip count must hold one element, got "
                           << tripCount.getType();
  llvm::SmallVector<Value> zeros(tripType.getRank(),
                                 arith::ConstantIndexOp::create(b, loc, 0));
  Value trip = tensor::ExtractOp::create(b, loc, tripCount, zeros);
  Value upper =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), trip).getResult();
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);

  // Import the body into a detached block first: the scan output types are
  // only known afterwards.
  auto tmp = std::make_unique<Block>();
  Value ivArg = tmp->addArgument(b.getIndexType(), loc);
  llvm::SmallVector<Value> carriedArgs;
  for (Value v : carried)
    carriedArgs.push_back(tmp->addArgument(v.getType(), loc));
  OpBuilder::InsertPoint outer = b.saveInsertionPoint();
  const ::onnx::NodeProto *loopNode = &node;
  ctx.pushScope();
  auto finish = [&](LogicalResult result) {
    if (failed(result))
      for (Operation &op : *tmp)
        op.dropAllReferences();
    ctx.popScope();
    ctx.setCurrentNode(loopNode, name);
    b.restoreInsertionPoint(outer);
    return result;
  };
  b.setInsertionPointToStart(tmp.get());
  Value iterNum = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, b.getI64Type()),
      ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), ivArg)});
  ctx.define(body.input(0).name(), iterNum);
  auto trueType = RankedTensorType::get({}, b.getI1Type());
  auto trueAttr = DenseElementsAttr::get(trueType, true);
  Value condIn = arith::ConstantOp::create(b, loc, trueAttr);
  ctx.setConstant(condIn, trueAttr);
  ctx.define(body.input(1).name(), condIn);
  for (int i = 0; i < numCarried; ++i)
    ctx.define(body.input(2 + i).name(), carriedArgs[i]);
  for (const auto &tensor : body.initializer()) {
    auto attr = convertTensorProto(tensor, ctx.getContext(),
                                   ctx.nodeLocation(tensor.name()));
    if (failed(attr))
      return finish(failure());
    Value c = arith::ConstantOp::create(b, loc, *attr);
    ctx.setConstant(c, *attr);
    ctx.define(tensor.name(), c);
  }
  if (failed(importNodes(body, ctx)))
    return finish(failure());
  ctx.setCurrentNode(loopNode, name);

  llvm::SmallVector<Value> bodyOutputs;
  for (const auto &output : body.output()) {
    Value v = ctx.lookup(output.name());
    if (!v) {
      ctx.emitError() << "body output '" << output.name()
                      << "' is not produced by the body";
      return finish(failure());
    }
    bodyOutputs.push_back(v);
  }
  if (!isConstantTrue(ctx, bodyOutputs[0])) {
    ctx.emitError() << "the body's condition output must be constant true "
                       "(data-dependent termination is not supported)";
    return finish(failure());
  }
  for (int i = 0; i < numCarried; ++i) {
    Value v = bodyOutputs[1 + i];
    if (v.getType() == carried[i].getType())
      continue;
    if (!tensor::CastOp::areCastCompatible(v.getType(), carried[i].getType())) {
      ctx.emitError() << "loop-carried value " << i << " changes type from "
                      << carried[i].getType() << " to " << v.getType();
      return finish(failure());
    }
    bodyOutputs[1 + i] =
        tensor::CastOp::create(b, loc, carried[i].getType(), v);
  }
  llvm::SmallVector<RankedTensorType> scanTypes;
  for (int i = 0; i < numScans; ++i) {
    auto type = tensorTypeOf(bodyOutputs[1 + numCarried + i]);
    if (!type.hasStaticShape()) {
      ctx.emitError() << "scan output " << i << " has type " << type
                      << "; only a static per-iteration shape is supported";
      return finish(failure());
    }
    scanTypes.push_back(type);
  }

  // The loop, with the scan accumulators as extra iter_args.
  b.restoreInsertionPoint(outer);
  llvm::SmallVector<Value> inits(carried);
  for (RankedTensorType type : scanTypes) {
    llvm::SmallVector<int64_t> shape{ShapedType::kDynamic};
    shape.append(type.getShape().begin(), type.getShape().end());
    inits.push_back(tensor::EmptyOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()),
        ValueRange{upper}));
  }
  auto forOp = scf::ForOp::create(b, loc, lower, upper, step, inits);
  Block *loopBody = forOp.getBody();
  loopBody->getOperations().splice(loopBody->end(), tmp->getOperations());
  ivArg.replaceAllUsesWith(forOp.getInductionVar());
  for (int i = 0; i < numCarried; ++i)
    carriedArgs[i].replaceAllUsesWith(forOp.getRegionIterArgs()[i]);

  b.setInsertionPointToEnd(loopBody);
  llvm::SmallVector<Value> yields(bodyOutputs.begin() + 1,
                                  bodyOutputs.begin() + 1 + numCarried);
  for (int i = 0; i < numScans; ++i) {
    Value scan = bodyOutputs[1 + numCarried + i];
    Value acc = forOp.getRegionIterArgs()[numCarried + i];
    int64_t rank = scanTypes[i].getRank();
    llvm::SmallVector<OpFoldResult> offsets{forOp.getInductionVar()};
    llvm::SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
    for (int64_t d = 0; d < rank; ++d) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(scanTypes[i].getDimSize(d)));
    }
    llvm::SmallVector<OpFoldResult> strides(rank + 1, b.getIndexAttr(1));
    Value row = insertUnitDims(b, loc, scan, {0});
    yields.push_back(tensor::InsertSliceOp::create(b, loc, row, acc, offsets,
                                                   sizes, strides));
  }
  scf::YieldOp::create(b, loc, yields);
  LogicalResult result = finish(success());
  for (int i = 0; i < node.output_size(); ++i)
    ctx.setOutput(i, forOp.getResult(i));
  return result;
}

} // namespace

void registerLoopConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Loop", convertLoop, {"body"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
