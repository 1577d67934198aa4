//===- plan_builder.cpp - Building plans in tests -------------------------===//
#include "support/plan_builder.h"

#include "plan/plan_writer.h"

namespace ember::testing {

plan::DataType toPlanDType(DType dtype) {
  switch (dtype) {
  case DType::kFloat32:
    return plan::FLOAT32;
  case DType::kFloat16:
    return plan::FLOAT16;
  case DType::kBFloat16:
    return plan::BFLOAT16;
  case DType::kInt8:
    return plan::INT8;
  case DType::kUInt8:
    return plan::UINT8;
  case DType::kInt32:
    return plan::INT32;
  case DType::kInt64:
    return plan::INT64;
  case DType::kBool:
    return plan::BOOL;
  case DType::kFloat64:
    return plan::FLOAT64;
  }
  return plan::DATA_TYPE_UNSPECIFIED;
}

InstructionBuilder &InstructionBuilder::attr(const std::string &name,
                                             int64_t v) {
  auto *a = in_->add_attrs();
  a->set_name(name);
  a->set_i(v);
  return *this;
}
InstructionBuilder &InstructionBuilder::attr(const std::string &name,
                                             double v) {
  auto *a = in_->add_attrs();
  a->set_name(name);
  a->set_f(v);
  return *this;
}
InstructionBuilder &InstructionBuilder::attr(const std::string &name,
                                             const char *v) {
  return attr(name, std::string(v));
}
InstructionBuilder &InstructionBuilder::attr(const std::string &name,
                                             const std::string &v) {
  auto *a = in_->add_attrs();
  a->set_name(name);
  a->set_s(v);
  return *this;
}
InstructionBuilder &InstructionBuilder::attr(const std::string &name,
                                             const std::vector<int64_t> &v) {
  auto *a = in_->add_attrs();
  a->set_name(name);
  for (int64_t x : v)
    a->mutable_ints()->add_values(x);
  return *this;
}
InstructionBuilder &
InstructionBuilder::attr(const std::string &name,
                         const std::vector<std::string> &v) {
  auto *a = in_->add_attrs();
  a->set_name(name);
  for (const std::string &x : v)
    a->mutable_strings()->add_values(x);
  return *this;
}

PlanBuilder::PlanBuilder() {
  plan_.set_producer("ember tests");
  plan_.set_world_size(1);
  plan_.add_programs()->set_rank(0);
}

void PlanBuilder::setDims(google::protobuf::RepeatedPtrField<plan::Dim> *out,
                          const std::vector<Dim> &dims) {
  for (const Dim &d : dims) {
    plan::Dim *pd = out->Add();
    if (d.symbol.empty()) {
      pd->set_size(d.size);
    } else {
      pd->set_symbol(d.symbol);
      if (d.factor != 1)
        pd->set_factor(d.factor);
    }
  }
}

int PlanBuilder::slot(const std::string &name, DType dtype,
                      const std::vector<Dim> &dims) {
  plan::Slot *s = program().add_slots();
  s->set_name(name);
  s->set_dtype(toPlanDType(dtype));
  setDims(s->mutable_shape(), dims);
  return program().slots_size() - 1;
}

int PlanBuilder::input(const std::string &name, DType dtype,
                       const std::vector<Dim> &dims) {
  int id = slot(name, dtype, dims);
  plan::TensorSpec *spec = plan_.mutable_signature()->add_inputs();
  spec->set_name(name);
  spec->set_dtype(toPlanDType(dtype));
  setDims(spec->mutable_shape(), dims);
  program().add_input_slots(id);
  return id;
}

KjtSlotIds PlanBuilder::kjtInput(const std::string &name,
                                 const std::vector<std::string> &keys,
                                 DType valuesType, DType lengthsType,
                                 bool weights) {
  plan::KjtSpec *spec = plan_.mutable_signature()->add_kjt_inputs();
  spec->set_name(name);
  for (const std::string &k : keys)
    spec->add_keys(k);
  spec->set_values_dtype(toPlanDType(valuesType));
  spec->set_lengths_dtype(toPlanDType(lengthsType));
  spec->set_has_weights(weights);
  KjtSlotIds ids;
  std::string n = "N_" + name;
  ids.values = slot(name + ".values", valuesType, {Dim(n.c_str())});
  ids.lengths = slot(name + ".lengths", lengthsType,
                     {Dim("B", static_cast<int64_t>(keys.size()))});
  if (weights)
    ids.weights = slot(name + ".weights", DType::kFloat32, {Dim(n.c_str())});
  plan::KjtSlots *s = program().add_kjt_input_slots();
  s->set_values(ids.values);
  s->set_lengths(ids.lengths);
  s->set_weights(ids.weights);
  return ids;
}

int PlanBuilder::constant(const std::string &name, DType dtype,
                          const std::vector<int64_t> &dims, const void *data) {
  std::vector<Dim> d(dims.begin(), dims.end());
  int id = slot(name, dtype, d);
  int64_t numel = 1;
  for (int64_t x : dims)
    numel *= x;
  size_t nbytes = static_cast<size_t>(numel) * dtypeSize(dtype);
  plan::Constant *c = program().add_constants();
  c->set_slot(id);
  c->set_file(0);
  c->set_nbytes(nbytes);
  constants_.push_back({program().constants_size() - 1,
                        std::string(static_cast<const char *>(data), nbytes)});
  return id;
}

InstructionBuilder PlanBuilder::instruction(const std::string &kernel,
                                            const std::vector<int> &inputs,
                                            const std::vector<int> &outputs,
                                            const std::string &name) {
  plan::Instruction *in = program().add_instructions();
  in->set_kernel(kernel);
  in->set_name(name);
  for (int s : inputs)
    in->add_inputs(s);
  for (int s : outputs)
    in->add_outputs(s);
  return InstructionBuilder(in);
}

void PlanBuilder::output(const std::string &name, int slot) {
  const plan::Slot &s = program().slots(slot);
  plan::TensorSpec *spec = plan_.mutable_signature()->add_outputs();
  spec->set_name(name);
  spec->set_dtype(s.dtype());
  *spec->mutable_shape() = s.shape();
  program().add_output_slots(slot);
}

Status PlanBuilder::writeWeights(const std::string &dir,
                                 const std::string &weightsName) {
  std::string error;
  if (!constants_.empty()) {
    WeightsFileWriter writer;
    if (!writer.open(dir + "/" + weightsName, &error))
      return invalidArgument(error);
    for (const PendingConstant &c : constants_)
      program()
          .mutable_constants(c.constantIndex)
          ->set_offset(writer.append(c.bytes.data(), c.bytes.size()));
    program().clear_weight_files();
    if (!writer.finish(program().add_weight_files(), weightsName, &error))
      return invalidArgument(error);
    constants_.clear(); // written; a second write keeps the file entry
  }
  return Status::ok();
}

Result<std::string> PlanBuilder::write(const std::string &dir,
                                       const std::string &base, bool text) {
  std::string error;
  EMBER_RETURN_IF_ERROR(writeWeights(dir, base + ".rank0.weights"));
  std::string path = dir + "/" + base + (text ? ".plan.txt" : ".plan");
  if (!writePlanFile(plan_, path, &error))
    return invalidArgument(error);
  return path;
}

} // namespace ember::testing
