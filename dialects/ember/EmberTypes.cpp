//===- EmberTypes.cpp - Ember types ---------------------------------------===//
#include "dialects/ember/EmberTypes.h"
#include "dialects/ember/EmberDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ember;

#define GET_TYPEDEF_CLASSES
#include "dialects/ember/EmberTypes.cpp.inc"

void EmberDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/ember/EmberTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Key lists (shared by KJT and keyed tensor)
//===----------------------------------------------------------------------===//

static ArrayAttr getKeysAttr(MLIRContext *ctx, ArrayRef<StringRef> keys) {
  SmallVector<Attribute> attrs;
  for (StringRef key : keys)
    attrs.push_back(StringAttr::get(ctx, key));
  return ArrayAttr::get(ctx, attrs);
}

static LogicalResult verifyKeys(function_ref<InFlightDiagnostic()> emitError,
                                ArrayAttr keys, StringRef typeName) {
  llvm::DenseSet<StringRef> seen;
  for (auto [i, attr] : llvm::enumerate(keys)) {
    auto key = dyn_cast<StringAttr>(attr);
    if (!key)
      return emitError() << typeName << " key #" << i
                         << " must be a string, got " << attr;
    if (key.getValue().empty())
      return emitError() << typeName << " key #" << i << " is empty";
    if (!seen.insert(key.getValue()).second)
      return emitError() << typeName << " key \"" << key.getValue()
                         << "\" appears more than once";
  }
  return success();
}

static std::optional<unsigned> findKey(ArrayAttr keys, StringRef key) {
  for (auto [i, attr] : llvm::enumerate(keys))
    if (cast<StringAttr>(attr).getValue() == key)
      return i;
  return std::nullopt;
}

static SmallVector<StringRef> keyNames(ArrayAttr keys) {
  SmallVector<StringRef> names;
  for (Attribute attr : keys)
    names.push_back(cast<StringAttr>(attr).getValue());
  return names;
}

/// Parses `[` key-entry (`,` key-entry)* `]` where key-entry is a string
/// followed by whatever `parseEntry` reads.
static ParseResult parseKeyList(AsmParser &parser, SmallVector<StringRef> &keys,
                                function_ref<ParseResult()> parseEntry) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        std::string key;
        if (parser.parseString(&key))
          return failure();
        keys.push_back(StringAttr::get(parser.getContext(), key).getValue());
        return parseEntry();
      });
}

//===----------------------------------------------------------------------===//
// JaggedTensorType
//===----------------------------------------------------------------------===//

LogicalResult
JaggedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                         Type elementType, ArrayRef<int64_t> denseShape) {
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "jagged element type must be an integer, index or "
                          "float type, got "
                       << elementType;
  for (auto [i, dim] : llvm::enumerate(denseShape))
    if (dim <= 0)
      return emitError() << "jagged dense dim #" << i
                         << " must be positive, got " << dim;
  return success();
}

RankedTensorType JaggedTensorType::getValuesType() const {
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  llvm::append_range(shape, getDenseShape());
  return RankedTensorType::get(shape, getElementType());
}

RankedTensorType JaggedTensorType::getOffsetsType() const {
  return RankedTensorType::get({ShapedType::kDynamic},
                               IntegerType::get(getContext(), 64));
}

//===----------------------------------------------------------------------===//
// KeyedJaggedTensorType
//===----------------------------------------------------------------------===//

static bool isIndexIntType(Type type) {
  return type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

KeyedJaggedTensorType KeyedJaggedTensorType::get(MLIRContext *ctx,
                                                 ArrayRef<StringRef> keys,
                                                 Type valueType,
                                                 Type lengthType, bool weighted,
                                                 bool variableBatch) {
  return get(ctx, getKeysAttr(ctx, keys), valueType, lengthType, weighted,
             variableBatch);
}

LogicalResult
KeyedJaggedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayAttr keys, Type valueType, Type lengthType,
                              bool weighted, bool variableBatch) {
  if (failed(verifyKeys(emitError, keys, "kjt")))
    return failure();
  if (!isIndexIntType(valueType))
    return emitError() << "kjt value type must be i32 or i64, got "
                       << valueType;
  if (!isIndexIntType(lengthType))
    return emitError() << "kjt length type must be i32 or i64, got "
                       << lengthType;
  return success();
}

StringRef KeyedJaggedTensorType::getKey(unsigned i) const {
  return cast<StringAttr>(getKeys()[i]).getValue();
}
SmallVector<StringRef> KeyedJaggedTensorType::getKeyNames() const {
  return keyNames(getKeys());
}
std::optional<unsigned>
KeyedJaggedTensorType::getKeyIndex(StringRef key) const {
  return findKey(getKeys(), key);
}
KeyedJaggedTensorType
KeyedJaggedTensorType::withKeys(ArrayRef<StringRef> keys) const {
  return get(getContext(), keys, getValueType(), getLengthType(), isWeighted(),
             isVariableBatch());
}

std::string KeyedJaggedTensorType::getBucketKey(StringRef key, int64_t bucket) {
  return (key + "@" + Twine(bucket)).str();
}

std::optional<std::pair<StringRef, int64_t>>
KeyedJaggedTensorType::parseBucketKey(StringRef bucketKey) {
  size_t at = bucketKey.rfind('@');
  if (at == StringRef::npos || at == 0)
    return std::nullopt;
  int64_t bucket;
  if (bucketKey.drop_front(at + 1).getAsInteger(10, bucket) || bucket < 0)
    return std::nullopt;
  return std::make_pair(bucketKey.take_front(at), bucket);
}

// !ember.kjt<["a", "b"], values = i64, lengths = i32 (, weighted)?
//            (, variable_batch)?>
Type KeyedJaggedTensorType::parse(AsmParser &parser) {
  SmallVector<StringRef> keys;
  Type valueType, lengthType;
  bool weighted = false, variableBatch = false;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parseKeyList(parser, keys, [] { return success(); }) ||
      parser.parseComma() || parser.parseKeyword("values") ||
      parser.parseEqual() || parser.parseType(valueType) ||
      parser.parseComma() || parser.parseKeyword("lengths") ||
      parser.parseEqual() || parser.parseType(lengthType))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef flag;
    SMLoc flagLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&flag))
      return {};
    if (flag == "weighted" && !weighted) {
      weighted = true;
    } else if (flag == "variable_batch" && !variableBatch) {
      variableBatch = true;
    } else {
      parser.emitError(flagLoc) << "expected 'weighted' or 'variable_batch' "
                                   "(each at most once), got '"
                                << flag << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  return getChecked([&] { return parser.emitError(loc); }, ctx,
                    getKeysAttr(ctx, keys), valueType, lengthType, weighted,
                    variableBatch);
}

static void printKeyString(AsmPrinter &printer, StringRef key) {
  printer << '"';
  llvm::printEscapedString(key, printer.getStream());
  printer << '"';
}

void KeyedJaggedTensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getKeyNames(), printer,
                        [&](StringRef key) { printKeyString(printer, key); });
  printer << "], values = " << getValueType()
          << ", lengths = " << getLengthType();
  if (isWeighted())
    printer << ", weighted";
  if (isVariableBatch())
    printer << ", variable_batch";
  printer << '>';
}

//===----------------------------------------------------------------------===//
// KeyedTensorType
//===----------------------------------------------------------------------===//

KeyedTensorType KeyedTensorType::get(MLIRContext *ctx, ArrayRef<StringRef> keys,
                                     ArrayRef<int64_t> dims, Type elementType) {
  return get(ctx, getKeysAttr(ctx, keys), dims, elementType);
}

LogicalResult
KeyedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayAttr keys, ArrayRef<int64_t> dims,
                        Type elementType) {
  if (failed(verifyKeys(emitError, keys, "keyed_tensor")))
    return failure();
  if (keys.size() != dims.size())
    return emitError() << "keyed_tensor has " << keys.size() << " keys but "
                       << dims.size() << " dims";
  for (auto [i, dim] : llvm::enumerate(dims))
    if (dim <= 0)
      return emitError() << "keyed_tensor dim of key \""
                         << cast<StringAttr>(keys[i]).getValue()
                         << "\" must be positive, got " << dim;
  if (!isa<FloatType>(elementType))
    return emitError() << "keyed_tensor element type must be a float type, got "
                       << elementType;
  return success();
}

StringRef KeyedTensorType::getKey(unsigned i) const {
  return cast<StringAttr>(getKeys()[i]).getValue();
}
SmallVector<StringRef> KeyedTensorType::getKeyNames() const {
  return keyNames(getKeys());
}
std::optional<unsigned> KeyedTensorType::getKeyIndex(StringRef key) const {
  return findKey(getKeys(), key);
}
int64_t KeyedTensorType::getTotalDim() const {
  int64_t total = 0;
  for (int64_t dim : getDims())
    total += dim;
  return total;
}
int64_t KeyedTensorType::getColumnOffset(unsigned i) const {
  int64_t offset = 0;
  for (int64_t dim : getDims().take_front(i))
    offset += dim;
  return offset;
}
RankedTensorType KeyedTensorType::getValuesType() const {
  return RankedTensorType::get({ShapedType::kDynamic, getTotalDim()},
                               getElementType());
}

// !ember.keyed_tensor<["a" : 16, "b" : 32], f32>
Type KeyedTensorType::parse(AsmParser &parser) {
  SmallVector<StringRef> keys;
  SmallVector<int64_t> dims;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parseKeyList(parser, keys,
                   [&]() -> ParseResult {
                     int64_t dim;
                     if (parser.parseColon() || parser.parseInteger(dim))
                       return failure();
                     dims.push_back(dim);
                     return success();
                   }) ||
      parser.parseComma() || parser.parseType(elementType) ||
      parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  return getChecked([&] { return parser.emitError(loc); }, ctx,
                    getKeysAttr(ctx, keys), dims, elementType);
}

void KeyedTensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::seq<unsigned>(0, getNumKeys()), printer,
                        [&](unsigned i) {
                          printKeyString(printer, getKey(i));
                          printer << " : " << getDims()[i];
                        });
  printer << "], " << getElementType() << '>';
}

//===----------------------------------------------------------------------===//
// TableType
//===----------------------------------------------------------------------===//

LogicalResult TableType::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t rows, int64_t dim, TableFormat format) {
  if (rows <= 0)
    return emitError() << "table rows must be positive, got " << rows;
  if (dim <= 0)
    return emitError() << "table dim must be positive, got " << dim;
  if (format == TableFormat::int4_rowwise && dim % 2 != 0)
    return emitError() << "int4_rowwise table needs an even dim, got " << dim;
  return success();
}

bool TableType::isQuantized() const {
  return getFormat() == TableFormat::int8_rowwise ||
         getFormat() == TableFormat::int4_rowwise;
}

Type TableType::getElementType() const {
  MLIRContext *ctx = getContext();
  switch (getFormat()) {
  case TableFormat::f16:
    return Float16Type::get(ctx);
  case TableFormat::bf16:
    return BFloat16Type::get(ctx);
  default:
    return Float32Type::get(ctx);
  }
}

int64_t TableType::getRowBytes() const {
  switch (getFormat()) {
  case TableFormat::f32:
    return getDim() * 4;
  case TableFormat::f16:
  case TableFormat::bf16:
    return getDim() * 2;
  case TableFormat::int8_rowwise:
    return getDim() + 8;
  case TableFormat::int4_rowwise:
    return getDim() / 2 + 8;
  }
  llvm_unreachable("unknown table format");
}

RankedTensorType TableType::getStorageType() const {
  if (isQuantized())
    return RankedTensorType::get({getRows(), getRowBytes()},
                                 IntegerType::get(getContext(), 8));
  return RankedTensorType::get({getRows(), getDim()}, getElementType());
}

// !ember.table<1000x64, f32>
Type TableType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (shape.size() != 2) {
    parser.emitError(loc) << "expected table shape ROWSxDIM, got "
                          << shape.size() << " dims";
    return {};
  }
  StringRef formatName;
  SMLoc formatLoc;
  if (parser.parseComma())
    return {};
  formatLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&formatName))
    return {};
  std::optional<TableFormat> format = symbolizeTableFormat(formatName);
  if (!format) {
    parser.emitError(formatLoc)
        << "unknown table format '" << formatName
        << "'; expected f32, f16, bf16, int8_rowwise or int4_rowwise";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    shape[0], shape[1], *format);
}

void TableType::print(AsmPrinter &printer) const {
  printer << '<' << getRows() << 'x' << getDim() << ", "
          << stringifyTableFormat(getFormat()) << '>';
}
