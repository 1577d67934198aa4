//===- cuda_session.cpp - Running a program on a CUDA device --------------===//
#include "cuda/cuda_session.h"

#include "comm/nccl/nccl_communicator.h"
#include "cuda/blas_lt.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_status.h"
#include "cuda/device.h"
#include "cuda/device_memory.h"
#include "cuda/host_fallback.h"
#include "cuda/kernel_env.h"
#include "executor/executor.h"
#include "executor/input_binding.h"
#include "executor/run_context.h"
#include "kernels/kernel_context.h"
#include "plan/program.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace ember::cuda {

Result<int> parseCudaDevice(const std::string &device) {
  if (device == "cuda")
    return 0;
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      device.size() <= 9) {
    int index = 0;
    for (size_t i = 5; i < device.size(); ++i) {
      if (device[i] < '0' || device[i] > '9')
        return invalidArgument("device '" + device +
                               "': expected cuda or cuda:N");
      index = index * 10 + (device[i] - '0');
    }
    return index;
  }
  return invalidArgument("device '" + device + "': expected cuda or cuda:N");
}

namespace {
constexpr size_t kKernelStagingBytes = 1 << 20;

/// Where the end of a run reads the error record and the invalid-id count.
struct RunReport {
  DeviceErrorRecord record;
  unsigned long long invalidIds;
};
} // namespace

struct CudaSession::Impl final : public ExecutionDevice {
  std::shared_ptr<const Program> program;
  int device = 0;
  std::string description;
  std::unique_ptr<DeviceMemory> memory;
  Communicator *hostComm = nullptr;
  double collectiveTimeoutSeconds = 60;
  /// Multi-rank sessions: the collectives' payload goes through NCCL.
  std::unique_ptr<NcclCommunicator> nccl;

  std::vector<Tensor> constants; // device copies, by slot
  std::vector<void *> constantBuffers;
  int64_t constantBytes = 0;
  std::vector<const KernelDef *> deviceKernels; // null: host fallback

  std::vector<cudaStream_t> streams; // the plan's streams
  cudaStream_t copyStream = nullptr;
  std::vector<cudaEvent_t> events; // the plan's events
  cudaEvent_t inputsReady = nullptr;
  std::vector<cudaEvent_t> streamDone;

  DeviceErrorRecord *errors = nullptr;
  unsigned long long *invalidIds = nullptr;
  RunReport *report = nullptr;   // pinned
  void *kernelStaging = nullptr; // pinned
  PinnedBuffer inputStaging, outputStaging;
  std::unique_ptr<BlasLt> blas;
  KernelEnv env;

  std::unique_ptr<RunContext> hostCtx, deviceCtx;
  std::mutex runMutex;

  /// CUDA graphs (SessionOptions.cudaGraphs): the steady state captured on
  /// the second run with the same input shapes, replayed while they stay.
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    std::vector<int64_t> key;    // input shapes + symbols it was taken for
    int64_t arenaGrowths = 0;    // the arena may not move memory since
    std::vector<Tensor> inputs;  // device buffers, by inputSlots order
    std::vector<Tensor> outputs; // by program.outputs order
  } graph;
  bool graphsEnabled = false;
  bool capturable = false;
  bool deviceSelected = false; // init() got as far as cudaSetDevice
  int64_t replays = 0;
  std::vector<int64_t> lastKey;
  cudaEvent_t forkEvent = nullptr;
  /// Where this run's outputs are (deviceCtx slots or the graph's).
  std::vector<Tensor> runOutputs;

  ~Impl() override {
    // A session whose device was never selected holds nothing on a device;
    // setting an invalid one would leave its error for the next CUDA call.
    if (!deviceSelected)
      return;
    cudaSetDevice(device);
    dropGraph();
    if (forkEvent)
      cudaEventDestroy(forkEvent);
    for (cudaStream_t s : streams)
      if (s)
        cudaStreamSynchronize(s);
    if (copyStream)
      cudaStreamSynchronize(copyStream);
    nccl.reset();
    deviceCtx.reset(); // its arenas free device memory
    blas.reset();
    for (void *p : constantBuffers)
      cudaFree(p);
    if (errors)
      cudaFree(errors);
    if (invalidIds)
      cudaFree(invalidIds);
    if (report)
      cudaFreeHost(report);
    if (kernelStaging)
      cudaFreeHost(kernelStaging);
    for (cudaEvent_t e : events)
      if (e)
        cudaEventDestroy(e);
    for (cudaEvent_t e : streamDone)
      if (e)
        cudaEventDestroy(e);
    if (inputsReady)
      cudaEventDestroy(inputsReady);
    for (cudaStream_t s : streams)
      if (s)
        cudaStreamDestroy(s);
    if (copyStream)
      cudaStreamDestroy(copyStream);
  }

  // --- ExecutionDevice ------------------------------------------------------
  const Tensor &constant(int slot) const override { return constants[slot]; }
  cuda::KernelEnv *kernelEnv() override { return &env; }
  bool reusesMemoryWithinRun() const override { return streams.size() == 1; }

  Status runInstruction(int index, const InstructionInfo &instr,
                        KernelContext &ctx) override {
    cudaStream_t stream = streams[instr.stream];
    for (int e : instr.waitEvents)
      EMBER_RETURN_IF_ERROR(cudaStatus(cudaStreamWaitEvent(stream, events[e]),
                                       instr.location + ": waiting for event " +
                                           std::to_string(e)));
    env.stream = stream;
    env.instruction = index;
    const KernelDef *def = deviceKernels[index];
    Status status =
        def ? def->run(ctx)
            : runOnHost(*program, instr, ctx, stream,
                        [this](cudaStream_t s, const std::string &what) {
                          return syncStream(s, what);
                        });
    if (!status.isOk())
      return status;
    for (int e : instr.recordEvents)
      EMBER_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(events[e], stream),
                                       instr.location + ": recording event " +
                                           std::to_string(e)));
    return Status::ok();
  }

  // --- set-up ---------------------------------------------------------------
  Status init() {
    EMBER_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, listDevices());
    if (device < 0 || device >= static_cast<int>(devices.size()))
      return invalidArgument("device cuda:" + std::to_string(device) +
                             " does not exist: this process sees " +
                             std::to_string(devices.size()) + " CUDA device" +
                             (devices.size() == 1 ? "" : "s"));
    const DeviceInfo &info = devices[device];
    std::string sm = "sm_" + std::to_string(info.computeCapabilityMajor) +
                     std::to_string(info.computeCapabilityMinor);
    description =
        info.name + " (cuda:" + std::to_string(device) + ", " + sm + ")";
    if (!isSupported(info))
      return failedPrecondition(description +
                                " is not supported: Ember's CUDA kernels need "
                                "compute capability 8.0 or newer");
    EMBER_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    deviceSelected = true;
    memory = std::make_unique<DeviceMemory>(device);

    const Program &program0 = *program;
    if (hostComm && hostComm->worldSize() > 1) {
      // The unique id travels through the host communicator; every rank
      // splits the world for the plan's groups once, here.
      EMBER_ASSIGN_OR_RETURN(
          nccl,
          createNcclCommunicator(*hostComm, device, collectiveTimeoutSeconds));
      std::vector<std::vector<int>> groups;
      for (const CollectiveInfo &c : program0.collectives)
        if (std::find(groups.begin(), groups.end(), c.groupRanks) ==
            groups.end())
          groups.push_back(c.groupRanks);
      EMBER_RETURN_IF_ERROR(nccl->prepareGroups(groups));
      env.nccl = nccl.get();
    }

    const Program &p = *program;
    constants.resize(p.slots.size());
    for (size_t s = 0; s < p.slots.size(); ++s) {
      if (p.slots[s].kind != SlotInfo::Kind::kConstant)
        continue;
      const Tensor &h = p.constants[s];
      EMBER_ASSIGN_OR_RETURN(void *d, memory->allocate(h.nbytes()));
      constantBuffers.push_back(d);
      constantBytes += static_cast<int64_t>(h.nbytes());
      if (h.nbytes())
        EMBER_RETURN_IF_ERROR(cudaStatus(
            cudaMemcpy(d, h.data(), h.nbytes(), cudaMemcpyHostToDevice),
            "uploading constant " + p.describeSlot(static_cast<int>(s))));
      constants[s] = Tensor::view(d, h.dtype(), h.shape());
    }

    const KernelRegistry &kernels = cudaKernels();
    for (const InstructionInfo &instr : p.instructions) {
      const KernelDef *def = kernels.find(instr.kernelName);
      if (def && def->collectiveKind != 0 && instr.collective >= 0 &&
          p.collectives[instr.collective].groupRanks.size() > 1 && !env.nccl)
        def = nullptr; // no NCCL communicator: the CPU kernel over Gloo
      if (def) {
        int ni = static_cast<int>(instr.inputs.size());
        int no = static_cast<int>(instr.outputs.size());
        if (ni < def->minInputs || ni > def->maxInputs ||
            no < def->minOutputs || no > def->maxOutputs)
          def = nullptr; // arity the CUDA kernel does not take: on the host
        else if (def->validate)
          EMBER_RETURN_IF_ERROR(def->validate(instr.attrs, ni, no)
                                    .withContext(instr.location + " (CUDA)"));
      }
      deviceKernels.push_back(def);
    }

    streams.assign(p.numStreams, nullptr);
    for (cudaStream_t &s : streams)
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithFlags(&copyStream, cudaStreamNonBlocking));
    events.assign(p.numEvents, nullptr);
    for (cudaEvent_t &e : events)
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    streamDone.assign(p.numStreams, nullptr);
    for (cudaEvent_t &e : streamDone)
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&inputsReady, cudaEventDisableTiming));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&forkEvent, cudaEventDisableTiming));
    capturable = !p.instructions.empty();
    for (const KernelDef *def : deviceKernels)
      if (!def || def->syncsHost || def->collectiveKind != 0)
        capturable = false;

    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMalloc(reinterpret_cast<void **>(&errors), sizeof(*errors)));
    EMBER_CUDA_RETURN_IF_ERROR(cudaMalloc(
        reinterpret_cast<void **>(&invalidIds), sizeof(*invalidIds)));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMallocHost(reinterpret_cast<void **>(&report), sizeof(*report)));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMallocHost(&kernelStaging, kKernelStagingBytes));
    EMBER_ASSIGN_OR_RETURN(blas, BlasLt::create());

    env.device = device;
    env.multiprocessors = info.multiprocessors;
    env.computeCapability =
        info.computeCapabilityMajor * 10 + info.computeCapabilityMinor;
    env.errors = errors;
    env.invalidIds = invalidIds;
    env.hostStaging = kernelStaging;
    env.hostStagingBytes = kKernelStagingBytes;
    env.blas = blas.get();

    collectInputSlots();
    hostCtx = std::make_unique<RunContext>(p);
    deviceCtx = std::make_unique<RunContext>(p, *memory);
    return Status::ok();
  }

  // --- one run --------------------------------------------------------------
  /// The slots of the program's inputs (dense, then each KJT's parts), in
  /// the order inputs are staged and graphs keep their buffers.
  std::vector<int> inputSlots;

  void collectInputSlots() {
    for (const DenseInputBinding &in : program->inputs)
      inputSlots.push_back(in.slot);
    for (const KjtInputBinding &k : program->kjtInputs)
      for (int s : {k.valuesSlot, k.lengthsSlot, k.weightsSlot})
        if (s >= 0)
          inputSlots.push_back(s);
  }

  static size_t padded(size_t bytes) { return (bytes + 255) / 256 * 256; }

  /// The dtypes and dims of the bound inputs and the symbol values: a run
  /// may replay a graph taken for the same key.
  std::vector<int64_t> shapeKey() const {
    std::vector<int64_t> key;
    for (int s : inputSlots) {
      const Tensor &t = hostCtx->slots[s].tensor;
      key.push_back(t.defined() ? static_cast<int64_t>(t.dtype()) : -1);
      key.push_back(t.rank());
      for (int d = 0; d < t.rank(); ++d)
        key.push_back(t.dim(d));
    }
    key.insert(key.end(), hostCtx->symbolValues.begin(),
               hostCtx->symbolValues.end());
    return key;
  }

  /// Copies the bound inputs to the device: into new arena blocks bound to
  /// the device context's slots, or (`targets`, a graph's) into fixed
  /// buffers. Then clears the error record and lets every stream go.
  Status uploadInputs(const std::vector<Tensor> *targets = nullptr) {
    RunContext &host = *hostCtx, &dev = *deviceCtx;
    const std::vector<int> &slots = inputSlots;
    size_t total = 0;
    for (int s : slots)
      total += padded(host.slots[s].tensor.nbytes());
    EMBER_RETURN_IF_ERROR(inputStaging.reserve(total));
    size_t offset = 0;
    for (size_t i = 0; i < slots.size(); ++i) {
      int s = slots[i];
      const Tensor &h = host.slots[s].tensor;
      if (!h.defined())
        continue;
      void *target = nullptr;
      if (targets) {
        target = const_cast<void *>((*targets)[i].data());
      } else {
        EMBER_ASSIGN_OR_RETURN(int block, dev.arena.allocate(h.nbytes()));
        dev.slots[s].block = block;
        dev.slots[s].tensor =
            Tensor::view(dev.arena.data(block), h.dtype(), h.shape());
        target = dev.arena.data(block);
      }
      if (h.nbytes() == 0)
        continue;
      std::memcpy(inputStaging.data() + offset, h.data(), h.nbytes());
      EMBER_RETURN_IF_ERROR(cudaStatus(
          cudaMemcpyAsync(target, inputStaging.data() + offset, h.nbytes(),
                          cudaMemcpyHostToDevice, copyStream),
          "copying input " + program->describeSlot(s) + " to " + description));
      offset += padded(h.nbytes());
    }
    dev.symbolValues = host.symbolValues;
    dev.symbolSources = host.symbolSources;
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(errors, 0, sizeof(*errors), copyStream));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(invalidIds, 0, sizeof(*invalidIds), copyStream));
    EMBER_CUDA_RETURN_IF_ERROR(cudaEventRecord(inputsReady, copyStream));
    for (cudaStream_t s : streams)
      EMBER_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, inputsReady));
    return Status::ok();
  }

  /// Waits for `stream`; with NCCL, without hanging on a dead peer (its
  /// collectives fail within the timeout instead).
  Status syncStream(cudaStream_t stream, const std::string &what) {
    if (nccl)
      return nccl->synchronize(stream, what);
    return cudaStatus(cudaStreamSynchronize(stream), what);
  }

  /// Makes stream 0 wait for every other stream.
  Status joinStreams() {
    for (size_t i = 1; i < streams.size(); ++i) {
      EMBER_CUDA_RETURN_IF_ERROR(cudaEventRecord(streamDone[i], streams[i]));
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaStreamWaitEvent(streams[0], streamDone[i]));
    }
    return Status::ok();
  }

  /// Synchronizes and turns a device error into a Status (ok when none).
  Status collectReport(int64_t *deviceInvalidIds) {
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(&report->record, errors, sizeof(*errors),
                        cudaMemcpyDeviceToHost, streams[0]));
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(&report->invalidIds, invalidIds, sizeof(*invalidIds),
                        cudaMemcpyDeviceToHost, streams[0]));
    EMBER_RETURN_IF_ERROR(
        syncStream(streams[0], "running the plan on " + description));
    *deviceInvalidIds = static_cast<int64_t>(report->invalidIds);
    const DeviceErrorRecord &r = report->record;
    if (r.code == 0)
      return Status::ok();
    std::string where =
        r.instruction >= 0 &&
                r.instruction < static_cast<int>(program->instructions.size())
            ? program->instructions[r.instruction].location
            : "instruction " + std::to_string(r.instruction);
    return Status(statusCodeOf(static_cast<DeviceErrorCode>(r.code)),
                  where + ": " + describeDeviceError(r));
  }

  /// After a failure: nothing may still be running on the run's memory.
  void drain() {
    for (cudaStream_t s : streams)
      (void)syncStream(s, "draining after a failed run");
    cudaStreamSynchronize(copyStream);
  }

  Status downloadOutputs() {
    const Program &p = *program;
    size_t total = 0;
    for (const Tensor &d : runOutputs)
      total += padded(d.nbytes());
    EMBER_RETURN_IF_ERROR(outputStaging.reserve(total));
    size_t offset = 0;
    for (size_t i = 0; i < runOutputs.size(); ++i) {
      const Tensor &d = runOutputs[i];
      if (d.nbytes())
        EMBER_RETURN_IF_ERROR(cudaStatus(
            cudaMemcpyAsync(outputStaging.data() + offset, d.data(), d.nbytes(),
                            cudaMemcpyDeviceToHost, streams[0]),
            "copying output '" + p.outputs[i].name + "' from " + description));
      offset += padded(d.nbytes());
    }
    return Status::ok();
  }

  void takeOutputsFromContext() {
    runOutputs.clear();
    for (const OutputBinding &out : program->outputs)
      runOutputs.push_back(deviceCtx->slots[out.slot].tensor);
  }

  // --- CUDA graphs ----------------------------------------------------------
  void dropGraph() {
    if (graph.exec)
      cudaGraphExecDestroy(graph.exec);
    graph = Graph();
  }

  bool canReplay(const std::vector<int64_t> &key) const {
    return graph.exec && key == graph.key &&
           deviceCtx->arena.growths() == graph.arenaGrowths;
  }

  /// Runs the program once under stream capture (the inputs are on the
  /// device already), keeps the graph for `key` and launches it. A kernel
  /// that cannot be captured leaves the run to be redone without a graph
  /// (`*retry`).
  Status captureAndLaunch(const std::vector<int64_t> &key, ThreadPool &pool,
                          const KernelSettings &settings, bool *retry) {
    *retry = false;
    dropGraph();
    // The input buffers the graph will read, taken now: the run releases a
    // slot after its last use (its tensor is cleared, its memory reused).
    std::vector<Tensor> inputs;
    for (int s : inputSlots)
      inputs.push_back(deviceCtx->slots[s].tensor);
    // Stream 0 waits for the inputs outside the capture; the other streams
    // fork from it inside.
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeRelaxed));
    Status status = cudaStatus(cudaEventRecord(forkEvent, streams[0]),
                               "forking the captured streams");
    for (size_t i = 1; status.isOk() && i < streams.size(); ++i)
      status = cudaStatus(cudaStreamWaitEvent(streams[i], forkEvent),
                          "forking the captured streams");
    if (status.isOk())
      status =
          executeProgram(*program, *deviceCtx, pool, settings, hostComm, this);
    if (status.isOk())
      status = joinStreams();
    cudaGraph_t captured = nullptr;
    cudaError_t end = cudaStreamEndCapture(streams[0], &captured);
    if (!status.isOk() || end != cudaSuccess || !captured) {
      if (captured)
        cudaGraphDestroy(captured);
      cudaGetLastError();
      *retry = true; // not capturable after all: run it the ordinary way
      return status.isOk() ? cudaStatus(end, "cudaStreamEndCapture") : status;
    }
    cudaGraphExec_t exec = nullptr;
    cudaError_t err = cudaGraphInstantiate(&exec, captured, 0);
    cudaGraphDestroy(captured);
    if (err != cudaSuccess) {
      cudaGetLastError();
      *retry = true;
      return cudaStatus(err, "cudaGraphInstantiate");
    }
    graph.exec = exec;
    graph.key = key;
    graph.arenaGrowths = deviceCtx->arena.growths();
    graph.inputs = std::move(inputs);
    takeOutputsFromContext();
    graph.outputs = runOutputs;
    return cudaStatus(cudaGraphLaunch(graph.exec, streams[0]),
                      "cudaGraphLaunch");
  }
};

CudaSession::CudaSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaSession::~CudaSession() = default;

Result<std::unique_ptr<CudaSession>>
CudaSession::create(std::shared_ptr<const Program> program, int device,
                    Communicator *hostComm, double collectiveTimeoutSeconds,
                    bool cudaGraphs) {
  auto impl = std::make_unique<Impl>();
  impl->graphsEnabled = cudaGraphs;
  impl->collectiveTimeoutSeconds = collectiveTimeoutSeconds;
  impl->program = std::move(program);
  impl->device = device;
  impl->hostComm = hostComm;
  EMBER_RETURN_IF_ERROR(impl->init());
  return std::unique_ptr<CudaSession>(new CudaSession(std::move(impl)));
}

Status CudaSession::run(const RunInputs &inputs, OutputEntries &entries,
                        int64_t *invalidIds, ThreadPool &pool,
                        const KernelSettings &settings) {
  Impl &im = *impl_;
  const Program &p = *im.program;
  std::lock_guard<std::mutex> serial(im.runMutex);
  EMBER_CUDA_RETURN_IF_ERROR(cudaSetDevice(im.device));
  im.hostCtx->reset();
  im.deviceCtx->reset();
  Status status = bindInputs(p, inputs, *im.hostCtx);
  if (!status.isOk()) {
    entries.clear(); // nothing was enqueued
    return status;
  }
  const std::vector<int64_t> key =
      im.graphsEnabled ? im.shapeKey() : std::vector<int64_t>();
  if (im.graphsEnabled && im.canReplay(key)) {
    // The steady state: the inputs go where the graph reads them.
    status = im.uploadInputs(&im.graph.inputs);
    if (status.isOk())
      status = cudaStatus(cudaGraphLaunch(im.graph.exec, im.streams[0]),
                          "cudaGraphLaunch");
    im.runOutputs = im.graph.outputs;
    ++im.replays;
  } else {
    status = im.uploadInputs();
    bool retry = false;
    if (status.isOk() && im.graphsEnabled && im.capturable &&
        key == im.lastKey) {
      status = im.captureAndLaunch(key, pool, settings, &retry);
      if (retry) {
        // Never try again on this session; redo the run without a graph.
        im.graphsEnabled = false;
        im.dropGraph();
        im.deviceCtx->symbolValues = im.hostCtx->symbolValues;
        status = Status::ok();
      }
    }
    if (status.isOk() && (!im.graph.exec || retry || key != im.graph.key)) {
      status =
          executeProgram(p, *im.deviceCtx, pool, settings, im.hostComm, &im);
      if (status.isOk())
        status = im.joinStreams();
      im.takeOutputsFromContext();
    }
  }
  im.lastKey = key;
  *invalidIds = 0;
  if (status.isOk())
    status = im.downloadOutputs();
  int64_t deviceInvalid = 0;
  // A device error explains a later failure better than the failure itself.
  Status report = im.collectReport(&deviceInvalid);
  if (!report.isOk())
    status = report;
  if (!status.isOk()) {
    im.drain();
    entries.clear();
    return status;
  }
  bool sameNames = entries.size() == p.outputs.size();
  for (size_t i = 0; sameNames && i < entries.size(); ++i)
    sameNames = entries[i].first == p.outputs[i].name;
  if (!sameNames) {
    entries.clear();
    for (const OutputBinding &out : p.outputs)
      entries.emplace_back(out.name, Tensor());
  }
  size_t offset = 0;
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const Tensor &d = im.runOutputs[i];
    Tensor &dst = entries[i].second;
    if (!(dst.defined() && dst.dtype() == d.dtype() &&
          dst.shape() == d.shape())) {
      auto allocated = Tensor::allocate(d.dtype(), d.shape());
      if (!allocated.isOk()) {
        entries.clear();
        return allocated.status();
      }
      dst = std::move(*allocated);
    }
    if (d.nbytes())
      std::memcpy(dst.data(), im.outputStaging.data() + offset, d.nbytes());
    offset += Impl::padded(d.nbytes());
  }
  *invalidIds = im.deviceCtx->invalidIds + deviceInvalid;
  return Status::ok();
}

const std::string &CudaSession::description() const {
  return impl_->description;
}

std::vector<std::string> CudaSession::hostInstructions() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->deviceKernels.size(); ++i)
    if (!impl_->deviceKernels[i])
      out.push_back(impl_->program->instructions[i].location);
  return out;
}

bool CudaSession::capturable() const { return impl_->capturable; }
int64_t CudaSession::graphReplays() const { return impl_->replays; }

int64_t CudaSession::deviceBytes() const {
  return impl_->constantBytes + impl_->deviceCtx->arena.reservedBytes() +
         static_cast<int64_t>(impl_->deviceCtx->staticArena.bytes());
}

} // namespace ember::cuda
