//===- GraphImporter.cpp - Walk an ONNX graph into a func.func ------------===//

#include "frontends/onnx/GraphImporter.h"

#include "frontends/onnx/ConstantFolding.h"
#include "frontends/onnx/KjtInputs.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/TypeConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// The declared type of a graph output, or null when it is absent or not a
/// ranked tensor of a supported element type (the computed type is used).
RankedTensorType declaredType(const ::onnx::ValueInfoProto &info,
                              MLIRContext *context) {
  if (!info.type().has_tensor_type() ||
      !info.type().tensor_type().has_shape() ||
      !convertElementType(context, info.type().tensor_type().elem_type()))
    return {};
  return convertValueType(info.type(), context, UnknownLoc::get(context),
                          info.name());
}

std::string nodeNameOf(const ::onnx::NodeProto &node, int index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index);
}

LogicalResult importNode(const ::onnx::NodeProto &node, ImportContext &ctx) {
  const OpConverterRegistry &registry = OpConverterRegistry::get();
  if (!OpConverterRegistry::isKnownDomain(node.domain()))
    return ctx.emitError() << "unknown operator domain '" << node.domain()
                           << "' (Ember imports the ONNX domain and 'ember')";
  const OpConverter *converter = registry.lookup(node.domain(), node.op_type());
  if (!converter)
    return ctx.emitError() << "unsupported operator '"
                           << (node.domain().empty() ? std::string()
                                                     : node.domain() + ".")
                           << node.op_type() << "'";
  for (const auto &attribute : node.attribute())
    if (!converter->acceptsAttribute(attribute.name()))
      return ctx.emitError()
             << "unsupported attribute '" << attribute.name() << "'";
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !ctx.lookup(node.input(i)))
      return ctx.emitError()
             << "input '" << node.input(i)
             << "' is not defined before the node (missing initializer or "
                "graph input, or the graph is not topologically sorted / has "
                "a cycle)";
  // Only ember-domain nodes read KJT values; ONNX operators take tensors.
  if (node.domain() != kEmberDomain)
    for (int i = 0; i < node.input_size(); ++i)
      if (Value v = node.input(i).empty() ? Value() : ctx.lookup(node.input(i));
          v && !isa<TensorType>(v.getType()))
        return ctx.emitError()
               << "input '" << node.input(i) << "' is a " << v.getType()
               << " (made by an ember node), not a tensor";
  if (failed(converter->convert(ctx)))
    return failure();
  // Every tensor that flows between nodes holds at most kMaxTensorElements
  // (static dims): so no converter's shape arithmetic over its inputs
  // overflows, whatever shapes a model makes (Expand, broadcasting, ...).
  for (int i = 0; i < node.output_size(); ++i)
    if (Value v = node.output(i).empty() ? Value() : ctx.lookup(node.output(i)))
      if (auto type = dyn_cast<RankedTensorType>(v.getType());
          type && !staticElementsWithinLimit(type.getShape()))
        return ctx.emitError()
               << "output " << i << " ('" << node.output(i) << "') is "
               << v.getType() << ", more than 2^48 elements";
  if (node.output_size() > 0 && !node.output(0).empty())
    if (Value result = ctx.lookup(node.output(0)))
      propagateConstant(ctx, result);
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !ctx.lookup(node.output(i)))
      return ctx.emitError() << "output " << i << " ('" << node.output(i)
                             << "') is not supported";
  return success();
}

} // namespace

LogicalResult importNodes(const ::onnx::GraphProto &graph, ImportContext &ctx) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const ::onnx::NodeProto &node = graph.node(i);
    ctx.setCurrentNode(&node, nodeNameOf(node, i));
    if (failed(importNode(node, ctx)))
      return failure();
  }
  return success();
}

FailureOr<func::FuncOp> importMainGraph(::onnx::GraphProto &graph,
                                        ModuleOp module, ImportContext &ctx,
                                        llvm::StringRef name,
                                        const MappedTensors &mapped) {
  MLIRContext *context = ctx.getContext();
  OpBuilder &b = ctx.builder;

  llvm::StringSet<> initializerNames;
  for (const auto &tensor : graph.initializer())
    initializerNames.insert(tensor.name());

  // Signature: graph inputs that are not initializers (IR < 4 lists
  // initializers among the inputs too).
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<const ::onnx::ValueInfoProto *> args;
  for (const auto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    Location loc = ctx.nodeLocation(input.name());
    RankedTensorType type = convertValueType(
        input.type(), context, loc, "graph input '" + input.name() + "'");
    if (!type)
      return failure();
    argTypes.push_back(type);
    args.push_back(&input);
  }

  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, ctx.fileLoc, name,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [i, input] : llvm::enumerate(args)) {
    ctx.define(input->name(), entry->getArgument(i));
    func.setArgAttr(i, "onnx.name", b.getStringAttr(input->name()));
    llvm::SmallVector<Attribute> dimParams;
    bool symbolic = false;
    for (const auto &dim : input->type().tensor_type().shape().dim()) {
      dimParams.push_back(b.getStringAttr(dim.dim_param()));
      symbolic |= !dim.dim_param().empty();
    }
    if (symbolic)
      func.setArgAttr(i, "onnx.dim_params", b.getArrayAttr(dimParams));
  }

  for (auto &tensor : *graph.mutable_initializer()) {
    Location loc = ctx.nodeLocation(tensor.name());
    if (auto it = mapped.find(tensor.name()); it != mapped.end()) {
      // Its external data, mapped: a constant over the file's bytes (the
      // loader checked type, size and alignment). Not an import-time
      // constant: no converter folds a table.
      Type elementType = convertElementType(context, tensor.data_type());
      llvm::SmallVector<int64_t> shape(tensor.dims().begin(),
                                       tensor.dims().end());
      auto type = RankedTensorType::get(shape, elementType);
      Value value = arith::ConstantOp::create(b, loc,
                                              mappedWeights(type, tensor.name(),
                                                            it->second.file,
                                                            it->second.offset))
                        .getResult();
      ctx.define(tensor.name(), value);
      continue;
    }
    FailureOr<DenseElementsAttr> attr =
        convertTensorProto(tensor, context, loc);
    if (failed(attr))
      return failure();
    // The attribute owns a copy now; do not keep the weights twice.
    tensor.clear_raw_data();
    Value value = arith::ConstantOp::create(b, loc, *attr).getResult();
    ctx.define(tensor.name(), value);
    ctx.setConstant(value, *attr);
  }

  if (failed(importNodes(graph, ctx)))
    return failure();

  llvm::SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    Location loc = ctx.nodeLocation(output.name());
    Value value = ctx.lookup(output.name());
    if (!value)
      return emitError(loc)
             << "graph output '" << output.name()
             << "' is not produced by any node, input or initializer";
    if (!isa<RankedTensorType>(value.getType()))
      return emitError(loc) << "graph output '" << output.name() << "' is a "
                            << value.getType()
                            << ", not a tensor (read its parts with ember "
                               "nodes)";
    // The declared output type must agree with the computed one; where it
    // knows a dim the computation does not, a tensor.cast refines it.
    if (RankedTensorType declared = declaredType(output, context)) {
      auto computed = cast<RankedTensorType>(value.getType());
      if (!tensor::CastOp::areCastCompatible(computed, declared))
        return emitError(loc)
               << "graph output '" << output.name() << "' is declared as "
               << declared << " but the graph computes " << computed;
      llvm::SmallVector<int64_t> shape(computed.getShape());
      for (auto [i, dim] : llvm::enumerate(declared.getShape()))
        if (ShapedType::isDynamic(shape[i]))
          shape[i] = dim;
      auto refined = computed.clone(shape);
      if (refined != computed)
        value = tensor::CastOp::create(b, loc, refined, value);
    }
    results.push_back(value);
  }
  func::ReturnOp::create(b, ctx.fileLoc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "onnx.name", b.getStringAttr(output.name()));
  if (failed(promoteKjtInputs(func)))
    return failure();
  return func;
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
