"""On-device fine-tuning: a .tflite model becomes a training graph that the ordinary planner,
code generator and runtime run, one sample per invoke.

1. `options.py`: what to train (`--trainable last:K`, operator indices, `all`) and how (loss,
   learning rate, momentum, weight decay, samples per update).
2. `graph.py`: the training graph. Operators downstream of a trainable one form the float part:
   they run in float32, their int8 weights dequantized; the trainable ones' weights become
   variable tensors (the model state, outside the arena) that start from the model's values.
   The rest stays the model's int8 operators, and DEQUANTIZE joins the two. The model's final
   SOFTMAX gives way to the loss; `gradients.py` adds each float operator's backward operators,
   in reverse; the backward kernels of CONV_2D and FULLY_CONNECTED update their weights
   themselves, and one McugenSgd operator per other parameter updates it. Inputs: the model's,
   the label, and `apply` (samples accumulated, 0 to only accumulate); outputs: the loss, and
   with cross-entropy the logits (for the accuracy).
3. The training graph is planned and rendered like any model (`mcugen.pipeline.generate`): the
   planner orders and lays out forward activations kept for the backward pass, gradients and
   scratch; the variables hold weights, accumulated gradients and momentum.
4. `export.py`: the model with the trained weights, as a .tflite TFLM runs (the float part kept
   in float32, or requantised to int8).
"""
