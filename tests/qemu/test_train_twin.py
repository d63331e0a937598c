"""Training on the NUCLEO-F767ZI twin: the same samples give the same trained weights as the host
build, bit for bit (float32 on the Cortex-M7's FPU and on x86-64, the same C, no contraction,
mcu/train_math.h's exp and ln), the loss falls, and the tuned model loads and runs in TFLM.
The MLPerf Tiny models train their last layers when ../shared/models is there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.train_run import TrainRun, train_on_device, train_on_host
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.reference import tflm_outputs
from mcugen.train.export import float_model
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.options import TrainOptions
from mcugen.train.steps import Dataset, steps
from support import NEEDS_TWIN, SHARED_MODELS, int8_classifier, synthetic_dataset

pytestmark = NEEDS_TWIN
BOARD = "nucleo-f767"


def both(
    model: Graph, options: TrainOptions, data: Dataset, epochs: int, workdir: Path, name: str
) -> tuple[TrainingGraph, TrainRun, TrainRun]:
    tg = build_training_graph(model, options)
    run_steps = steps(tg, data, epochs)
    host_t = resolve_target(load_board("host"), emulate=False)
    twin_t = resolve_target(load_board(BOARD), emulate=True)
    runs = []
    for target in (host_t, twin_t):
        gen = generate(tg.graph, options=PlanOptions(rewrites=False, core=target.port_board.core))
        result = build(gen, target, workdir / f"{name}-{target.board.name}")
        if target.board.is_host:
            runs.append(train_on_host(gen, result.executable, run_steps))
        else:
            runs.append(train_on_device(gen, target, result.executable, None, run_steps))
    return tg, runs[0], runs[1]


def assert_same_state(host: TrainRun, twin: TrainRun) -> None:
    assert host.state.keys() == twin.state.keys()
    for t, value in host.state.items():
        assert value.tobytes() == twin.state[t].tobytes(), f"variable {t} differs"
    assert np.array_equal(np.array(host.losses), np.array(twin.losses))


def test_the_twin_trains_bit_for_bit_as_the_host(workdir: Path) -> None:
    model = int8_classifier(seed=5)
    x, y = synthetic_dataset(model, 24, seed=6)
    options = TrainOptions(trainable="last:2", learning_rate=0.02, momentum=0.5, accumulate=3)
    tg, host, twin = both(model, options, Dataset(x, y), 3, workdir, "clf")
    assert_same_state(host, twin)
    first, last = np.mean(twin.losses[:24]), np.mean(twin.losses[-24:])
    assert last < 0.5 * first, (first, last)
    assert len(set(twin.per_step)) >= 1 and min(twin.per_step) > 0
    tuned = write_model(float_model(tg, twin.state))
    outs = tflm_outputs(tuned, load_model_bytes(tuned, workdir), [[x[0][None]]])
    assert outs[0][0].shape[-1] == 4


def load_model_bytes(data: bytes, workdir: Path) -> Graph:
    path = workdir / "tuned.tflite"
    path.write_bytes(data)
    return load_model(path)


#: The classifier and the last block: KWS's depthwise and pointwise, IC's two convolutions and
#: its shortcut's, VWW's depthwise and 256 x 256 pointwise (its float32 weights, 256 KB, fit the
#: F767's 512 KB because the pointwise's backward kernel updates them one output channel at a
#: time: no whole gradient is stored).
MLPERF = [
    ("mlperf_kws_dscnn_int8", "last:3"),
    ("mlperf_ic_resnet8_int8", "last:4"),
    ("mlperf_vww_mbv1_int8", "last:3"),
]


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="needs ../shared/models")
@pytest.mark.parametrize(("stem", "trainable"), MLPERF)
def test_mlperf_models_fine_tune_on_the_twin(stem: str, trainable: str, workdir: Path) -> None:
    model = load_model(SHARED_MODELS / f"{stem}.tflite")
    x, y = synthetic_dataset(model, 6, seed=1)
    options = TrainOptions(trainable=trainable, learning_rate=0.005)
    tg, host, twin = both(model, options, Dataset(x, y), 2, workdir, stem)
    assert_same_state(host, twin)
    assert np.mean(twin.losses[-6:]) < np.mean(twin.losses[:6])
    tuned = write_model(float_model(tg, twin.state))
    graph = load_model_bytes(tuned, workdir)
    outs = tflm_outputs(tuned, graph, [[x[0][None]]])
    assert np.isfinite(outs[0][0]).all()
