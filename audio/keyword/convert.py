"""Re-creates `data/` from the feature models pyopen-wakeword ships (a development tool).

    python -m voiced.audio.keyword.convert        # needs the `dev` extra (tflite, onnx)

openWakeWord's front end is two TFLite models: a mel spectrogram (an STFT written as a
convolution, a mel matrix, a log) and Google's speech embedding (a small CNN: 76 mel frames
in, 96 values out). The TFLite runtime pyopen-wakeword bundles runs the embedding in 3 ms on
this machine, ONNX Runtime (already here for Silero and Whisper) in 1 ms; so the embedding is
rewritten as an ONNX graph with the same weights, and the spectrogram's weights are kept as
arrays for numpy. `tests/audio/test_keyword_features.py` checks both against the originals.
Both models are Apache-2.0 (data/NOTICE).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
EMBEDDING_ONNX = DATA / "speech_embedding.onnx"
MEL_NPZ = DATA / "melspectrogram.npz"


def source_models() -> tuple[Path, Path]:
    """The TFLite files pyopen-wakeword ships: (melspectrogram, embedding)."""
    import pyopen_wakeword

    models = Path(pyopen_wakeword.__file__).parent / "models"
    return models / "melspectrogram.tflite", models / "embedding_model.tflite"


class _Graph:
    """A TFLite model's first subgraph: ops by name, constant tensors as arrays."""

    def __init__(self, path: Path) -> None:
        import tflite  # type: ignore[import-untyped]

        self.tflite = tflite
        self.model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
        self.graph = self.model.Subgraphs(0)
        self.names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if k.isupper()}

    def ops(self) -> list[tuple[str, Any, list[int], int]]:
        found = []
        for i in range(self.graph.OperatorsLength()):
            op = self.graph.Operators(i)
            code = self.model.OperatorCodes(op.OpcodeIndex())
            name = self.names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
            inputs = [op.Inputs(j) for j in range(op.InputsLength())]
            found.append((name, op, inputs, op.Outputs(0)))
        return found

    def const(self, index: int) -> np.ndarray:
        tensor = self.graph.Tensors(index)
        data = self.model.Buffers(tensor.Buffer()).DataAsNumpy()
        dtype = {0: np.float32, 2: np.int32, 4: np.int64}[tensor.Type()]
        shape = tuple(tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
        return np.frombuffer(data.tobytes(), dtype=dtype).reshape(shape)

    def options(self, op: Any, kind: str) -> Any:
        opt = getattr(self.tflite, kind)()
        table = op.BuiltinOptions()
        opt.Init(table.Bytes, table.Pos)
        return opt


def convert_mel(path: Path) -> dict[str, np.ndarray]:
    """The spectrogram's two DFT convolutions (real, imaginary; window included) and mel matrix."""
    graph = _Graph(path)
    convs = [graph.const(inputs[1]) for name, _, inputs, _ in graph.ops() if name == "CONV_2D"]
    biases = [graph.const(inputs[2]) for name, _, inputs, _ in graph.ops() if name == "CONV_2D"]
    mel = next(graph.const(i[1]) for n, _, i, _ in graph.ops() if n == "BATCH_MATMUL")
    assert all(not b.any() for b in biases), "the DFT convolutions have no bias"
    # (257, 1, 512, 1) -> (512, 257): frame @ basis.
    real, imag = (c[:, 0, :, 0].T.astype(np.float32) for c in convs)
    return {"real": real, "imag": imag, "mel": mel.astype(np.float32)}


def convert_embedding(path: Path) -> bytes:
    """The speech embedding as an ONNX graph (NHWC in and out, as the TFLite model)."""
    import onnx
    from onnx import TensorProto, helper

    graph = _Graph(path)
    nodes: list[Any] = []
    weights: list[Any] = []
    first, last = graph.graph.Inputs(0), graph.graph.Outputs(0)
    nodes.append(helper.make_node("Transpose", ["input"], [f"t{first}"], perm=[0, 3, 1, 2]))
    for i, (name, op, inputs, out) in enumerate(graph.ops()):
        node, made = _onnx_op(graph, i, name, op, inputs, f"t{inputs[0]}", f"t{out}")
        if node is None:
            raise ValueError(f"{path.name}: operator {name} has no ONNX rewrite here")
        nodes.append(node)
        weights += made
    nodes.append(helper.make_node("Transpose", [f"t{last}"], ["output"], perm=[0, 2, 3, 1]))
    ins = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 76, 32, 1])]
    outs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1, 1, 96])]
    model = helper.make_model(
        helper.make_graph(nodes, "speech_embedding", ins, outs, weights),
        opset_imports=[helper.make_opsetid("", 17)],
        producer_name="voiced.audio.keyword.convert",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def _onnx_op(
    graph: _Graph, i: int, name: str, op: Any, inputs: list[int], src: str, dst: str
) -> tuple[Any, list[Any]]:
    """One TFLite operator as an ONNX node (NCHW) and the weights it needs; (None, []) for an
    operator without a rewrite here."""
    from onnx import helper, numpy_helper

    if name == "PAD":
        pads = graph.const(inputs[1])  # NHWC rows of (before, after)
        nchw = [pads[0], pads[3], pads[1], pads[2]]
        flat = [int(p[0]) for p in nchw] + [int(p[1]) for p in nchw]
        made = [numpy_helper.from_array(np.array(flat, np.int64), f"pads{i}")]
        return helper.make_node("Pad", [src, f"pads{i}"], [dst]), made
    if name == "CONV_2D":
        opt = graph.options(op, "Conv2DOptions")
        assert opt.FusedActivationFunction() == 0
        kernel = graph.const(inputs[1]).transpose(0, 3, 1, 2).astype(np.float32)  # OIHW
        made = [
            numpy_helper.from_array(kernel, f"w{i}"),
            numpy_helper.from_array(graph.const(inputs[2]), f"b{i}"),
        ]
        node = helper.make_node(
            "Conv", [src, f"w{i}", f"b{i}"], [dst],
            strides=[opt.StrideH(), opt.StrideW()],
            auto_pad="SAME_UPPER" if opt.Padding() == 0 else "VALID",
            dilations=[opt.DilationHFactor(), opt.DilationWFactor()],
        )  # fmt: skip
        return node, made
    if name == "LEAKY_RELU":
        alpha = graph.options(op, "LeakyReluOptions").Alpha()
        return helper.make_node("LeakyRelu", [src], [dst], alpha=alpha), []
    if name == "MAXIMUM":
        floor = np.array(graph.const(inputs[1]), np.float32).reshape(())
        made = [numpy_helper.from_array(floor, f"c{i}")]
        return helper.make_node("Max", [src, f"c{i}"], [dst]), made
    if name == "MAX_POOL_2D":
        opt = graph.options(op, "Pool2DOptions")
        node = helper.make_node(
            "MaxPool", [src], [dst],
            kernel_shape=[opt.FilterHeight(), opt.FilterWidth()],
            strides=[opt.StrideH(), opt.StrideW()],
            auto_pad="SAME_UPPER" if opt.Padding() == 0 else "VALID",
        )  # fmt: skip
        return node, []
    return None, []


def main() -> None:
    mel, embedding = source_models()
    arrays: dict[str, Any] = dict(convert_mel(mel))
    np.savez_compressed(MEL_NPZ, **arrays)
    EMBEDDING_ONNX.write_bytes(convert_embedding(embedding))
    print(f"wrote {MEL_NPZ} and {EMBEDDING_ONNX}")


if __name__ == "__main__":
    main()
