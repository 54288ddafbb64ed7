// TensorFlow binding of the WAGMA engine: the WagmaGroupAllreduce op.
//
// An AsyncOpKernel: ComputeAsync hands the tensors to the engine and returns at once;
// the engine's completion callback sets the status and calls `done`. No TensorFlow
// thread is held while a round waits for its group.
#include <string>
#include <vector>

#include "c_api.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace {

using tensorflow::AsyncOpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;

constexpr int kErrLen = 2048;

REGISTER_OP("WagmaGroupAllreduce")
    .Attr("T: {float, double, half, bfloat16}")
    .Attr("stream_name: string")
    .Attr("group_size: int")
    .Attr("sync_period: int")
    .Attr("averaging: int")
    .Attr("wait_avoiding: bool")
    .Attr("global_rounds: int = 0")
    .Attr("max_staleness: int = 0")
    .Attr("members: list(int) = []")
    .Input("tensor: T")
    .Output("result: T")
    // The round that served this call: with wait-avoiding global rounds a lagging app
    // skips rounds its engine already served, so it may be ahead of the call count.
    .Output("round: int64")
    // Every call is one round of the stream: never fold, merge or prune it.
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      c->set_output(1, c->Scalar());
      return absl::OkStatus();
    });

int DtypeCode(tensorflow::DataType t) {
  switch (t) {
    case tensorflow::DT_FLOAT: return 0;
    case tensorflow::DT_DOUBLE: return 1;
    case tensorflow::DT_HALF: return 2;
    case tensorflow::DT_BFLOAT16: return 3;
    default: return -1;
  }
}

class WagmaGroupAllreduceOp : public AsyncOpKernel {
 public:
  explicit WagmaGroupAllreduceOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("stream_name", &name_));
    OP_REQUIRES_OK(c, c->GetAttr("group_size", &config_.group_size));
    OP_REQUIRES_OK(c, c->GetAttr("sync_period", &config_.sync_period));
    OP_REQUIRES_OK(c, c->GetAttr("averaging", &config_.averaging));
    bool wait_avoiding = true;
    OP_REQUIRES_OK(c, c->GetAttr("wait_avoiding", &wait_avoiding));
    config_.wait_avoiding = wait_avoiding ? 1 : 0;
    OP_REQUIRES_OK(c, c->GetAttr("global_rounds", &config_.global_rounds));
    OP_REQUIRES_OK(c, c->GetAttr("max_staleness", &config_.max_staleness));
    OP_REQUIRES_OK(c, c->GetAttr("members", &members_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& input = ctx->input(0);
    Tensor* output = nullptr;
    Tensor* round = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_output(0, input.shape(), &output), done);
    OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_output(1, tensorflow::TensorShape({}), &round),
                         done);
    std::vector<int64_t> shape(input.dims());
    for (int i = 0; i < input.dims(); ++i) shape[i] = input.dim_size(i);
    // Keeps the input buffer alive (Tensor is reference-counted) until the engine
    // has finished reading it.
    auto* pending = new Pending{ctx, std::move(done), input, round};
    char err[kErrLen] = {0};
    const int64_t h = wagma_enqueue_with_callback(
        name_.c_str(), DtypeCode(input.dtype()), static_cast<int>(shape.size()),
        shape.data(), input.tensor_data().data(),
        const_cast<char*>(output->tensor_data().data()), &config_,
        static_cast<int>(members_.size()), members_.data(), &Pending::OnDone, pending, err,
        kErrLen);
    if (h == 0) {
      ctx->SetStatus(absl::FailedPreconditionError(err));
      DoneCallback d = std::move(pending->done);
      delete pending;
      d();
    }
  }

 private:
  struct Pending {
    OpKernelContext* ctx;
    DoneCallback done;
    Tensor input;
    Tensor* round;

    static void OnDone(void* arg, const char* error, int64_t round) {
      auto* p = static_cast<Pending*>(arg);
      p->round->scalar<int64_t>()() = round;
      if (error) p->ctx->SetStatus(absl::AbortedError(error));
      DoneCallback d = std::move(p->done);
      delete p;
      d();
    }
  };

  std::string name_;
  wagma_stream_config config_{2, 10, 0, 1, 0, 0};
  std::vector<int> members_;
};

REGISTER_KERNEL_BUILDER(Name("WagmaGroupAllreduce").Device(tensorflow::DEVICE_CPU),
                        WagmaGroupAllreduceOp);

}  // namespace
