#!/usr/bin/python3
"""`attention-lab run FOLDER` on checkpoints of real shapes beside PyTorch, float64, at one thread count.

Writes two Hugging Face model folders with random weights (seeded) in the shapes, names and dtypes the real models
ship with, then times `attention-lab run FOLDER --text TEXT` (TEXT: 64 ASCII characters, 64 tokens; without --json)
and a PyTorch script computing the same five likeliest next tokens at every position, and prints one row per model.

The checkpoints (in --work; reused while their marker file matches, rewritten otherwise; never in the repository):
  gpt2-small    GPT-2 small: n_embd 768, 12 layers of 12 heads, n_positions 1024, vocabulary 50,257, F32, tied to
                wte as GPT-2 ships (no lm_head; h.N.attn.c_attn.weight ..., wte, wpe, ln_f, the attn.bias mask
                buffers), one model.safetensors of 548 MB
  qwen2.5-0.5b  the shape of Qwen2.5-0.5B: hidden 896, 24 layers, 14 heads over 2 KV heads of 64, intermediate 4,864,
                vocabulary 151,936, BF16, tied, q/k/v biases, rope_theta 1e6, rms_norm_eps 1e-6, 32,768 positions,
                model_type qwen2, one model.safetensors of 988 MB
  Weights normal x 0.02, norm gains 1 + normal x 0.02. Each folder's tokenizer.json is a byte-level BPE of the
  256 byte symbols and <|endoftext|> with no merges (one token per ASCII character); the rest of the vocabulary
  exists only in config.json's vocab_size and the embedding's rows. The files are written a tensor (a block of
  rows) at a time: Qwen's 494M weights are never all in memory.

What each side computes and how it is timed:
  ours     `attention-lab run FOLDER --text TEXT`: tokenize, the forward pass in float64 from the memory-mapped
           weights, the five likeliest next tokens per position printed. Wall time from process start to exit
           (fork and exec included), and the process's peak RSS (wait4's ru_maxrss).
  PyTorch  this script in a child process: config.json, tokenizer.json (the byte-level BPE by hand, as
           tests/crosscheck/checkpoint_crosscheck.py does), the safetensors header, the file mapped with mmap. Each
           tensor is decoded to float64 with NumPy when its layer is computed (checkpoint_crosscheck.decode_tensor)
           and freed after; embedding rows are gathered for the 64 ids only; the unembedding runs over the whole
           vocabulary in blocks of 8,192 rows, decoded as it goes. The forward pass is written for speed with
           torch.nn.functional (layer_norm, linear, gelu tanh, silu) and the reference's rms_norm and rotate_half
           RoPE; torch.topk. Timed from after `import torch` (and this script's imports) to the answer; its peak
           RSS includes torch's own (wait4's ru_maxrss of the child).
  limit    the forward pass's multiply-adds counted from the shapes (every projection, each head's scores and
           weighted values over the T(T+1)/2 causal cells, the MLP, the unembedding over the whole vocabulary at
           all 64 positions), x2 FLOPs, at the machine's float64 dgemm rate measured in the same run (torch, a
           2048 x 2048 x 2048 product, the best of 5, at the same thread count). Reading and converting the weights
           are not in it: at 64 tokens they take most of the PyTorch side's time.

Equal footing: float64 arithmetic on both sides; the same thread count (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
MKL_NUM_THREADS, and torch.set_num_threads in the child); the weights read from the page cache on both sides (one
untimed warm-up run of each before the timed ones); one process at a time, ours first. The PyTorch side keeps
glibc's default malloc, unlike bench/compare.py's peers: the app's commands map every allocation of 1 MiB or more
afresh (M_MMAP_THRESHOLD 1 MiB, for the memory budget), and that setting would fault in every converted weight's
pages anew and about double PyTorch's time on the Qwen shape, flattering us. Each side reports the median of
--runs timed runs and the largest peak RSS among them. Timings on a shared machine are only as good as its idleness:
the load average and the CPU time other processes used are printed (bench/compare.py's measures).

Before anything is timed, the script checks itself on tiny shapes (under a second): its streaming safetensors
writer gives the bytes checkpoint_crosscheck.write_safetensors gives for the same values, and the PyTorch side's
logits and top five agree with checkpoint_crosscheck.forward (the reference written from the formulas) to 1e-9.
Whether the lab's forward pass agrees with the reference is checkpoint_crosscheck.py's job, not this script's; the
lab's printed output is kept in --work beside the PyTorch side's top five (for a look by eye).

bench/real_model_bench.cpp runs the PyTorch side alone: `--peer-child FOLDER --threads N --text TEXT [--warm R]`
prints its seconds as JSON, and with --warm also R more passes with every decoded tensor kept (warm_seconds).

Run:  /usr/bin/python3 bench/checkpoint_bench.py --binary build/app/attention-lab --threads 2
      /usr/bin/python3 bench/checkpoint_bench.py --peer-only          # PyTorch side and checkpoints alone

Exit status: 0 done (a missed target is reported, not an error), 1 the self-check failed (the writer or the PyTorch
side disagrees with the reference), 2 something could not be run (the binary, a refused folder, BLAS).
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import namedtuple
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "crosscheck"))

from compare import Failure, OtherLoad, THREAD_VARS, ensure_openblas, loadavg, loaded_blas_libraries, \
    openblas_details  # noqa: E402  (stdlib only at import)

TEXT = "The quick brown fox jumps over the lazy dog, and the cat sat up."  # 64 characters, 64 tokens
SEED = 2026
SCALE = 0.02
MARKER = "checkpoint_bench.json"
MARKER_FORMAT = 1  # bump when the folders' contents change
WRITE_CHUNK = 1 << 22  # elements generated and encoded at a time
UNEMBED_ROWS = 8192  # vocabulary rows decoded at a time by the PyTorch side
RUN_TIMEOUT = 1800  # seconds, one run of either side
RATIO_TARGET = 1.0
GIB = 1 << 30
SELF_TOLERANCE = 1e-9  # |reference - ours| <= 1e-9 max(1, |reference|)

Tensor = namedtuple("Tensor", "name shape dtype init")  # init: ("normal", s) | ("one_plus", s) | ("tril",)
Model = namedtuple("Model", "key title folder config style tensors rss_target_gib")


def crosscheck():
    """tests/crosscheck/checkpoint_crosscheck.py, imported once the thread counts are in the environment (it loads
    numpy and torch)."""
    import checkpoint_crosscheck
    return checkpoint_crosscheck


# --------------------------------------------------------------------------
# The checkpoints
# --------------------------------------------------------------------------

def byte_tokenizer(cc, style):
    """checkpoint_crosscheck's tokenizer.json with its merges taken out: the 256 byte symbols (id = the byte) and the
    style's special tokens after them."""
    tok = cc.tokenizer_json(style)
    vocab = {cc.BYTE_CHAR[b]: b for b in range(256)}
    for entry in tok["added_tokens"]:
        entry["id"] = vocab[entry["content"]] = len(vocab)
    tok["model"]["vocab"], tok["model"]["merges"] = vocab, []
    return tok


def gpt2_model(e=768, layers=12, heads=12, positions=1024, vocab=50257, scale=SCALE, key="gpt2",
               title="GPT-2 small", folder="gpt2-small", rss_target_gib=1.5):
    eot = 256  # <|endoftext|> in byte_tokenizer
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": e, "n_head": heads,
              "n_layer": layers, "n_positions": positions, "n_ctx": positions, "vocab_size": vocab,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "n_inner": None,
              "scale_attn_weights": True, "bos_token_id": eot, "eos_token_id": eot, "torch_dtype": "float32"}
    t = [Tensor("wte.weight", (vocab, e), "F32", ("normal", scale)),
         Tensor("wpe.weight", (positions, e), "F32", ("normal", scale / 2))]
    for n in range(layers):
        p = f"h.{n}."
        t += [Tensor(p + "ln_1.weight", (e,), "F32", ("one_plus", scale)),
              Tensor(p + "ln_1.bias", (e,), "F32", ("normal", scale)),
              Tensor(p + "attn.bias", (1, 1, positions, positions), "F32", ("tril",)),
              Tensor(p + "attn.c_attn.weight", (e, 3 * e), "F32", ("normal", scale)),
              Tensor(p + "attn.c_attn.bias", (3 * e,), "F32", ("normal", scale)),
              Tensor(p + "attn.c_proj.weight", (e, e), "F32", ("normal", scale)),
              Tensor(p + "attn.c_proj.bias", (e,), "F32", ("normal", scale)),
              Tensor(p + "ln_2.weight", (e,), "F32", ("one_plus", scale)),
              Tensor(p + "ln_2.bias", (e,), "F32", ("normal", scale)),
              Tensor(p + "mlp.c_fc.weight", (e, 4 * e), "F32", ("normal", scale)),
              Tensor(p + "mlp.c_fc.bias", (4 * e,), "F32", ("normal", scale)),
              Tensor(p + "mlp.c_proj.weight", (4 * e, e), "F32", ("normal", scale)),
              Tensor(p + "mlp.c_proj.bias", (e,), "F32", ("normal", scale))]
    t += [Tensor("ln_f.weight", (e,), "F32", ("one_plus", scale)), Tensor("ln_f.bias", (e,), "F32", ("normal", scale))]
    return Model(key, title, folder, config, "gpt2", t, rss_target_gib)


def qwen2_model(hidden=896, layers=24, heads=14, kv_heads=2, inner=4864, vocab=151936, scale=SCALE,
                dtype="BF16", key="qwen", title="Qwen2.5-0.5B shape", folder="qwen2.5-0.5b-shape",
                rss_target_gib=2.5):
    eot = 256
    hd = hidden // heads
    # Qwen2.5-0.5B's config.json, but for the ids of <|endoftext|> (151,643 there)
    config = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": eot,
              "eos_token_id": eot, "hidden_act": "silu", "hidden_size": hidden, "initializer_range": 0.02,
              "intermediate_size": inner, "max_position_embeddings": 32768, "max_window_layers": layers,
              "model_type": "qwen2", "num_attention_heads": heads, "num_hidden_layers": layers,
              "num_key_value_heads": kv_heads, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
              "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True,
              "use_sliding_window": False, "vocab_size": vocab}
    t = [Tensor("model.embed_tokens.weight", (vocab, hidden), dtype, ("normal", scale))]
    for n in range(layers):
        p = f"model.layers.{n}."
        t += [Tensor(p + "input_layernorm.weight", (hidden,), dtype, ("one_plus", scale)),
              Tensor(p + "self_attn.q_proj.weight", (heads * hd, hidden), dtype, ("normal", scale)),
              Tensor(p + "self_attn.q_proj.bias", (heads * hd,), dtype, ("normal", scale)),
              Tensor(p + "self_attn.k_proj.weight", (kv_heads * hd, hidden), dtype, ("normal", scale)),
              Tensor(p + "self_attn.k_proj.bias", (kv_heads * hd,), dtype, ("normal", scale)),
              Tensor(p + "self_attn.v_proj.weight", (kv_heads * hd, hidden), dtype, ("normal", scale)),
              Tensor(p + "self_attn.v_proj.bias", (kv_heads * hd,), dtype, ("normal", scale)),
              Tensor(p + "self_attn.o_proj.weight", (hidden, heads * hd), dtype, ("normal", scale)),
              Tensor(p + "post_attention_layernorm.weight", (hidden,), dtype, ("one_plus", scale)),
              Tensor(p + "mlp.gate_proj.weight", (inner, hidden), dtype, ("normal", scale)),
              Tensor(p + "mlp.up_proj.weight", (inner, hidden), dtype, ("normal", scale)),
              Tensor(p + "mlp.down_proj.weight", (hidden, inner), dtype, ("normal", scale))]
    t.append(Tensor("model.norm.weight", (hidden,), dtype, ("one_plus", scale)))
    return Model(key, title, folder, config, "qwen2", t, rss_target_gib)


def tensor_chunks(np, tensor, index, chunk=WRITE_CHUNK):
    """The tensor's values, float32, as flat blocks of whole rows (the first dimension): seeded by (SEED, its index
    in the folder), so a block is the same on every run."""
    rng = np.random.default_rng([SEED, index])
    rows = tensor.shape[0] if tensor.shape else 1
    row = math.prod(tensor.shape[1:])
    kind = tensor.init[0]
    if kind == "tril":
        yield np.tril(np.ones(tensor.shape[-2:], dtype=np.float32)).ravel()
        return
    step = max(1, chunk // max(row, 1))
    for r0 in range(0, rows, step):
        values = rng.standard_normal(min(step, rows - r0) * row, dtype=np.float32) * np.float32(tensor.init[1])
        yield values + np.float32(1) if kind == "one_plus" else values


def write_safetensors_streamed(cc, np, path, tensors, chunk=WRITE_CHUNK):
    """The file checkpoint_crosscheck.write_safetensors writes (the same order, header and padding), a block of
    rows at a time. The self-check holds the two byte for byte."""
    order = sorted(range(len(tensors)), key=lambda i: (-cc.DTYPE_SIZE[tensors[i].dtype], tensors[i].name))
    header, offset = {}, 0
    for i in order:
        t = tensors[i]
        size = math.prod(t.shape) * cc.DTYPE_SIZE[t.dtype]
        header[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for i in order:
            for values in tensor_chunks(np, tensors[i], i, chunk):
                f.write(cc.encode_tensor(values, tensors[i].dtype))
    return 8 + len(text) + offset


def folder_texts(cc, model):
    return {"config.json": json.dumps(model.config, indent=2) + "\n",
            "tokenizer.json": json.dumps(byte_tokenizer(cc, model.style), ensure_ascii=False, indent=2) + "\n"}


def expected_marker(cc, model, chunk):
    texts = folder_texts(cc, model)
    return {"format": MARKER_FORMAT, "seed": SEED, "chunk": chunk,
            "sha256": {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in texts.items()},
            "tensors": [[t.name, list(t.shape), t.dtype, list(t.init)] for t in model.tensors]}


def folder_matches(path, marker):
    try:
        with open(path / MARKER) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return False
    return found.get("marker") == marker and (path / "model.safetensors").is_file() and \
        (path / "model.safetensors").stat().st_size == found.get("size")


def ensure_folder(cc, np, work, model, chunk=WRITE_CHUNK):
    """(folder, seconds spent writing it; None when the folder already matched its marker)."""
    path = work / model.folder
    marker = expected_marker(cc, model, chunk)
    if folder_matches(path, marker):
        return path, None
    start = time.monotonic()
    partial = work / (model.folder + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name, text in folder_texts(cc, model).items():
        (partial / name).write_text(text, encoding="utf-8")
    size = write_safetensors_streamed(cc, np, partial / "model.safetensors", model.tensors, chunk)
    (partial / MARKER).write_text(json.dumps({"marker": marker, "size": size}) + "\n")
    shutil.rmtree(path, ignore_errors=True)
    os.replace(partial, path)
    return path, time.monotonic() - start


# --------------------------------------------------------------------------
# The PyTorch side
# --------------------------------------------------------------------------

class MappedWeights:
    """A model folder's safetensors files mapped read-only; each tensor decoded to float64 (NumPy, the reference's
    decode_tensor) when asked, nothing kept."""

    def __init__(self, cc, np, torch, folder):
        import mmap
        self.cc, self.np, self.torch = cc, np, torch
        index = folder / "model.safetensors.index.json"
        files = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.exists() \
            else ["model.safetensors"]
        self.where = {}
        for file in files:
            n, header = cc.header_of(folder / file)
            header.pop("__metadata__", None)
            with open(folder / file, "rb") as f:
                mapped = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
            for name, h in header.items():
                begin, end = h["data_offsets"]
                self.where[name] = (h["dtype"], tuple(h["shape"]), mapped[8 + n + begin:8 + n + end])

    def __contains__(self, name):
        return name in self.where

    def shape(self, name):
        return self.where[name][1]

    def get(self, name):
        dtype, shape, raw = self.where[name]
        return self.torch.from_numpy(self.cc.decode_tensor(dtype, shape, raw))

    def rows(self, name, ids):
        """Rows `ids` of a matrix, decoded."""
        dtype, shape, raw = self.where[name]
        table = self.np.frombuffer(raw, dtype=self.np.uint8).reshape(shape[0], -1)
        return self.torch.from_numpy(self.cc.decode_tensor(dtype, (len(ids), shape[1]), table[ids].tobytes()))

    def row_block(self, name, r0, r1):
        """Rows [r0, r1) of a matrix, decoded."""
        dtype, shape, raw = self.where[name]
        width = math.prod(shape[1:]) * self.cc.DTYPE_SIZE[dtype]
        return self.torch.from_numpy(self.cc.decode_tensor(dtype, (r1 - r0,) + shape[1:], raw[r0 * width:r1 * width]))


def unembed(torch, w, name, h, block_rows):
    """h (T, E) times the (V, E) matrix `name` transposed, a block of rows decoded at a time."""
    vocab = w.shape(name)[0]
    logits = torch.empty((h.shape[0], vocab), dtype=torch.float64)
    for r0 in range(0, vocab, block_rows):
        r1 = min(vocab, r0 + block_rows)
        logits[:, r0:r1] = h @ w.row_block(name, r0, r1).T
    return logits


def causal_mask(torch, t):
    return torch.full((t, t), float("-inf"), dtype=torch.float64).triu(1)


def gpt2_peer(torch, config, w, ids, block_rows):
    f = torch.nn.functional
    e, heads, eps = config["n_embd"], config["n_head"], config["layer_norm_epsilon"]
    t, dh = len(ids), e // heads
    p0 = "transformer." if "transformer.wte.weight" in w else ""
    x = w.rows(p0 + "wte.weight", ids) + w.row_block(p0 + "wpe.weight", 0, t)
    mask = causal_mask(torch, t)
    for n in range(config["n_layer"]):
        p = f"{p0}h.{n}."

        def conv1d(a, name):
            return torch.addmm(w.get(p + name + ".bias"), a, w.get(p + name + ".weight"))

        a = f.layer_norm(x, (e,), w.get(p + "ln_1.weight"), w.get(p + "ln_1.bias"), eps)
        q, k, v = (m.reshape(t, heads, dh).transpose(0, 1) for m in conv1d(a, "attn.c_attn").split(e, dim=1))
        s = (q @ k.transpose(1, 2)).mul_(1 / math.sqrt(dh)).add_(mask)
        x = x + conv1d((torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(t, e), "attn.c_proj")
        m = f.layer_norm(x, (e,), w.get(p + "ln_2.weight"), w.get(p + "ln_2.bias"), eps)
        x = x + conv1d(f.gelu(conv1d(m, "mlp.c_fc"), approximate="tanh"), "mlp.c_proj")
    h = f.layer_norm(x, (e,), w.get(p0 + "ln_f.weight"), w.get(p0 + "ln_f.bias"), eps)
    return unembed(torch, w, "lm_head.weight" if "lm_head.weight" in w else p0 + "wte.weight", h, block_rows)


def llama_peer(torch, cc, config, w, ids, block_rows):
    """Llama and Qwen2 without sliding windows or rope_scaling (the reference's inv_freq_of asserts on the latter)."""
    f = torch.nn.functional
    heads, kv = config["num_attention_heads"], config.get("num_key_value_heads") or config["num_attention_heads"]
    hd, eps, t = cc.head_dim_of(config), config["rms_norm_eps"], len(ids)
    inv_freq = cc.inv_freq_of(config)
    mask = causal_mask(torch, t)

    def linear(a, name):
        return f.linear(a, w.get(name + ".weight"), w.get(name + ".bias") if name + ".bias" in w else None)

    x = w.rows("model.embed_tokens.weight", ids)
    for n in range(config["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a = cc.rms_norm(x, w.get(p + "input_layernorm.weight"), eps)
        q = cc.rope(linear(a, p + "self_attn.q_proj").view(t, heads, hd).transpose(0, 1), inv_freq, "half")
        k = cc.rope(linear(a, p + "self_attn.k_proj").view(t, kv, hd).transpose(0, 1), inv_freq, "half")
        v = linear(a, p + "self_attn.v_proj").view(t, kv, hd).transpose(0, 1)
        q = q.reshape(kv, heads // kv * t, hd)  # a KV head's query heads stacked: one product per KV head
        s = (q @ k.transpose(1, 2)).view(heads, t, t).mul_(1 / math.sqrt(hd)).add_(mask)
        o = (torch.softmax(s, dim=-1).view(kv, heads // kv * t, t) @ v).view(heads, t, hd)
        x = x + linear(o.transpose(0, 1).reshape(t, heads * hd), p + "self_attn.o_proj")
        m = cc.rms_norm(x, w.get(p + "post_attention_layernorm.weight"), eps)
        x = x + linear(f.silu(linear(m, p + "mlp.gate_proj")) * linear(m, p + "mlp.up_proj"), p + "mlp.down_proj")
    h = cc.rms_norm(x, w.get("model.norm.weight"), eps)
    return unembed(torch, w, "lm_head.weight" if "lm_head.weight" in w else "model.embed_tokens.weight", h,
                   block_rows)


class KeptWeights(MappedWeights):
    """MappedWeights whose decoded tensors and blocks are kept after the first ask: a warm forward pass reads nothing
    (bench/real_model_bench.cpp's "PyTorch, weights kept" column; about 1 GB of float64 for GPT-2 small)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.kept = {}

    def _keep(self, key, make):
        if key not in self.kept:
            self.kept[key] = make()
        return self.kept[key]

    def get(self, name):
        return self._keep(("get", name), lambda: super(KeptWeights, self).get(name))

    def rows(self, name, ids):
        return self._keep(("rows", name, tuple(ids)), lambda: super(KeptWeights, self).rows(name, ids))

    def row_block(self, name, r0, r1):
        return self._keep(("block", name, r0, r1), lambda: super(KeptWeights, self).row_block(name, r0, r1))


def peer_run(cc, np, torch, folder, text, block_rows=UNEMBED_ROWS, w=None):
    """(ids, logits (T, V), top five ids per position) for a model folder and a text; w: the weights to read (a
    MappedWeights of the folder when not given)."""
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    ids = cc.hand_bpe(text, tok)
    w = w or MappedWeights(cc, np, torch, folder)
    with torch.inference_mode():
        if config["model_type"] == "gpt2":
            logits = gpt2_peer(torch, config, w, ids, block_rows)
        else:
            logits = llama_peer(torch, cc, config, w, ids, block_rows)
        top = torch.topk(logits, 5, dim=-1)
    return ids, logits, top.indices.tolist()


def peer_child(folder, text, threads, warm=0):
    """The PyTorch side's process: prints a JSON object with the seconds from after the imports to the answer. With
    warm > 0, the weights are decoded once by an untimed pass and kept, and `warm_seconds` lists `warm` more passes
    (the forward pass alone, as a program holding the model in float64 would run it)."""
    import torch
    torch.set_num_threads(threads)
    import numpy as np
    cc = crosscheck()
    start = time.perf_counter()
    ids, _, top = peer_run(cc, np, torch, folder, text)
    seconds = time.perf_counter() - start
    warm_seconds = []
    if warm > 0:
        kept = KeptWeights(cc, np, torch, Path(folder))
        peer_run(cc, np, torch, folder, text, w=kept)
        for _ in range(warm):
            start = time.perf_counter()
            _, _, warm_top = peer_run(cc, np, torch, folder, text, w=kept)
            warm_seconds.append(time.perf_counter() - start)
            assert warm_top == top
    details = openblas_details(loaded_blas_libraries())
    json.dump({"seconds": seconds, "warm_seconds": warm_seconds, "ids": ids, "top5": top,
               "torch_threads": torch.get_num_threads(), "openblas": list(details) if details else None}, sys.stdout)
    return 0


def dgemm_child(threads, runs=5):
    """The float64 matrix-multiply rate of torch at this thread count, FLOP/s, printed as JSON."""
    import torch
    torch.set_num_threads(threads)
    a = torch.rand((2048, 2048), dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    b = torch.rand((2048, 2048), dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    a @ b
    best = math.inf
    for _ in range(runs):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    json.dump({"flops": 2 * 2048 ** 3 / best}, sys.stdout)
    return 0


# --------------------------------------------------------------------------
# Multiply-adds
# --------------------------------------------------------------------------

def forward_macs(config, t):
    """The multiply-adds of one forward pass over t tokens and the unembedding of all of them."""
    cells = t * (t + 1) // 2  # the causal (query, key) pairs
    if config["model_type"] == "gpt2":
        e, heads, inner = config["n_embd"], config["n_head"], config.get("n_inner") or 4 * config["n_embd"]
        layer = t * e * 3 * e + 2 * cells * e + t * e * e + 2 * t * e * inner  # heads x head_dim = e
        return config["n_layer"] * layer + t * e * config["vocab_size"]
    e, heads = config["hidden_size"], config["num_attention_heads"]
    kv = config.get("num_key_value_heads") or heads
    hd = config.get("head_dim") or e // heads
    layer = t * e * heads * hd + 2 * t * e * kv * hd + 2 * cells * heads * hd + t * heads * hd * e \
        + 3 * t * e * config["intermediate_size"]
    return config["num_hidden_layers"] * layer + t * e * config["vocab_size"]


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def timed_process(cmd, env, stdout_path):
    """(wall seconds from start to exit, exit status, peak RSS in bytes, stderr) of one process."""
    with open(stdout_path, "wb") as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        waited = []
        waiter = threading.Thread(target=lambda: waited.append(os.wait4(p.pid, 0)))
        waiter.start()
        waiter.join(RUN_TIMEOUT)
        if waiter.is_alive():
            p.kill()
            waiter.join()
            seconds = None
        else:
            seconds = time.perf_counter() - start
        p.returncode = 0  # reaped by wait4: keep Popen from waiting again
        _, status, usage = waited[0]
        err.seek(0)
        message = err.read().decode("utf-8", "replace")
    if seconds is None:
        return None, -9, usage.ru_maxrss * 1024, f"killed after {RUN_TIMEOUT} s"
    return seconds, os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, message


def measure(cmd, env, stdout_path, runs, internal_seconds=None):
    """Runs cmd once untimed, then `runs` times: {seconds (median), all, rss (largest), process (median wall)} or
    {error}. internal_seconds(stdout text) -> seconds: the time the process reports (the PyTorch side's)."""
    times, walls, rss = [], [], []
    for i in range(runs + 1):
        wall, code, peak, message = timed_process(cmd, env, stdout_path)
        if code != 0:
            lines = [ln for ln in message.strip().splitlines() if ln.strip()]
            return {"error": f"exit {code}: " + (lines[-1] if lines else "no message")}
        if i == 0:
            continue
        walls.append(wall)
        times.append(internal_seconds(Path(stdout_path).read_text()) if internal_seconds else wall)
        rss.append(peak)
    return {"seconds": statistics.median(times), "all": times, "rss": max(rss), "process": statistics.median(walls)}


# --------------------------------------------------------------------------
# Self-check on tiny shapes
# --------------------------------------------------------------------------

def self_check(cc, np, torch, work):
    """[(label, ok, detail)]: the streaming writer against write_safetensors, the PyTorch side against the
    reference forward pass, on tiny folders of both families (scale 0.3, so that attention is far from uniform;
    blocks of a few rows, so that every tensor and the unembedding span several)."""
    results = []
    tiny = [gpt2_model(e=16, layers=2, heads=2, positions=80, vocab=300, scale=0.3, key="tiny-gpt2",
                       title="tiny GPT-2", folder="tiny-gpt2", rss_target_gib=None),
            qwen2_model(hidden=16, layers=2, heads=4, kv_heads=2, inner=40, vocab=300, scale=0.3,
                        key="tiny-qwen2", title="tiny Qwen2", folder="tiny-qwen2", rss_target_gib=None)]
    root = work / "self-check"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for model in tiny:
        path, _ = ensure_folder(cc, np, root, model, chunk=64)
        values = {t.name: (np.concatenate(list(tensor_chunks(np, t, i, chunk=64))).reshape(t.shape), t.dtype)
                  for i, t in enumerate(model.tensors)}
        cc.write_safetensors(root / "whole.safetensors", values)
        same = (root / "whole.safetensors").read_bytes() == (path / "model.safetensors").read_bytes()
        results.append((f"{model.title}: streamed safetensors = write_safetensors byte for byte", same, ""))
        ids, logits, top = peer_run(cc, np, torch, path, TEXT, block_rows=37)
        expected_ids = cc.hand_bpe(TEXT, byte_tokenizer(cc, model.style))
        results.append((f"{model.title}: {len(TEXT)} characters are the {len(ids)} byte ids",
                        ids == expected_ids == list(TEXT.encode("ascii")) and len(ids) == 64, str(ids[:8])))
        weights = cc.read_folder_weights(path)
        reference, _ = cc.forward(model.config, weights, ids)
        problem = cc.compare("logits", reference, logits.tolist(), SELF_TOLERANCE)
        results.append((f"{model.title}: PyTorch side's logits = checkpoint_crosscheck.forward's to "
                        f"{SELF_TOLERANCE:g}", problem is None, problem or ""))
        ref_top = torch.topk(reference, 5, dim=-1).indices.tolist()
        results.append((f"{model.title}: top five at all 64 positions = the reference's", top == ref_top, ""))
        gaps = (torch.topk(reference, 6, dim=-1).values.diff(dim=-1).abs().min())
        results.append((f"{model.title}: no near tie in the reference's top six (smallest gap {float(gaps):.2g})",
                        float(gaps) > 1e-9, ""))
    shutil.rmtree(root, ignore_errors=True)
    return results


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=str(ROOT / "build/app/attention-lab"),
                   help="the attention-lab binary (default build/app/attention-lab)")
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "attention-lab-checkpoint-bench"),
                   help="folder for the checkpoints, reused by later runs (default $TMPDIR/"
                        "attention-lab-checkpoint-bench; about 1.6 GB)")
    p.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    p.add_argument("--runs", type=int, default=3,
                   help="timed runs of each side after one warm-up run; the median is reported (default 3)")
    p.add_argument("--only", choices=("gpt2", "qwen"), help="one model only")
    p.add_argument("--peer-only", action="store_true", help="the checkpoints and the PyTorch side only, not ours")
    p.add_argument("--peer-child", metavar="FOLDER", help=argparse.SUPPRESS)
    p.add_argument("--dgemm-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--text", default=TEXT, help=argparse.SUPPRESS)
    p.add_argument("--warm", type=int, default=0, help=argparse.SUPPRESS)  # --peer-child: passes with weights kept
    a = p.parse_args()
    for opt in ("threads", "runs"):
        if getattr(a, opt) < 1:
            p.error(f"--{opt} must be at least 1")
    return a


def gib(n):
    return n / GIB


def main():
    args = parse_args()
    if args.peer_child:
        return peer_child(args.peer_child, args.text, args.threads, args.warm)
    if args.dgemm_child:
        return dgemm_child(args.threads)
    n = args.threads
    for var in THREAD_VARS:  # before numpy and torch are imported, here and in the children
        os.environ[var] = str(n)
    env = dict(os.environ)
    command = "/usr/bin/python3 bench/checkpoint_bench.py " + " ".join(sys.argv[1:])
    work = Path(args.work).resolve()
    keys = [args.only] if args.only else ["gpt2", "qwen"]
    try:
        alternative = ensure_openblas()
        if not args.peer_only and not os.access(args.binary, os.X_OK):
            raise Failure(f"{args.binary}: not an executable (build it: cmake --build BUILD --target attention-lab; "
                          f"or --peer-only for the PyTorch side alone)")
        import numpy as np
        import torch
        torch.set_num_threads(n)
        cc = crosscheck()
        work.mkdir(parents=True, exist_ok=True)

        start = time.monotonic()
        checks = self_check(cc, np, torch, work)
        print(f"self-check on tiny shapes ({time.monotonic() - start:.1f} s):")
        for label, ok, detail in checks:
            print(f"  {'ok  ' if ok else 'FAIL'} {label}{'' if ok or not detail else ': ' + detail}")
        if not all(ok for _, ok, _ in checks):
            print("checkpoint_bench.py: the self-check failed", file=sys.stderr)
            return 1

        models = {"gpt2": gpt2_model(), "qwen": qwen2_model()}
        folders = {}
        for key in keys:
            model = models[key]
            path, seconds = ensure_folder(cc, np, work, model)
            size = (path / "model.safetensors").stat().st_size
            print(f"{model.title}: {path} ({size / 1e6:,.0f} MB, "
                  f"{'written in %.1f s' % seconds if seconds is not None else 'reused: its marker matches'})",
                  flush=True)
            folders[key] = path
        del torch, np  # the parent computes nothing more
        time.sleep(0.5)  # the self-check's OpenBLAS and OpenMP threads stop spinning before the timed runs

        load_before = loadavg()
        other = OtherLoad()
        ours, peer = {}, {}
        for key in keys:
            if not args.peer_only:
                ours[key] = measure([args.binary, "run", str(folders[key]), "--text", TEXT], env,
                                    work / f"{models[key].folder}.ours.txt", args.runs)
            peer[key] = measure([sys.executable, str(Path(__file__).resolve()), "--peer-child", str(folders[key]),
                                 "--threads", str(n), "--text", TEXT], env,
                                work / f"{models[key].folder}.pytorch.json", args.runs,
                                internal_seconds=lambda out: json.loads(out)["seconds"])
            if "error" in peer[key]:
                raise Failure(f"the PyTorch side failed on {folders[key]}: {peer[key]['error']}")
        dgemm_out = work / "dgemm.json"
        _, code, _, message = timed_process([sys.executable, str(Path(__file__).resolve()), "--dgemm-child",
                                             "--threads", str(n)], env, dgemm_out)
        if code != 0:
            raise Failure(f"the dgemm measurement failed (exit {code}): {message}")
        rate = json.loads(dgemm_out.read_text())["flops"]
        load_after = loadavg()
        other_load = other.report()
    except Failure as e:
        print(f"checkpoint_bench.py: {e}", file=sys.stderr)
        return 2

    peer_info = json.loads((work / f"{models[keys[0]].folder}.pytorch.json").read_text())
    print(f"\ncommand: {command}")
    print(f"threads: {n} (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS; torch.set_num_threads "
          f"{peer_info['torch_threads']}); float64 arithmetic on both sides")
    print(f"load average (1/5/15 min): {load_before} before, {load_after} after; {other_load}")
    print(f"libblas.so.3 alternative: {alternative}; OpenBLAS in the PyTorch side: "
          f"{'; '.join(str(v) for v in peer_info['openblas'] or ['none mapped'])}")
    print(f"text: {TEXT!r} ({len(TEXT)} characters, {len(peer_info['ids'])} tokens); one warm-up run of each side, "
          f"then the median of {args.runs}")
    print(f"dgemm: {rate / 1e9:.1f} GFLOP/s (torch, 2048 x 2048 x 2048 float64, best of 5, {n} thread(s))")

    print(f"\n{'model':<20} {'ours s':>8} {'PyTorch s':>10} {'ours/PyTorch':>13} {'ours RSS':>10} "
          f"{'PyTorch RSS':>12} {'limit s':>8} {'GFLOP':>7}")
    refused = []
    targets = []
    for key in keys:
        model, o, p = models[key], ours.get(key), peer[key]
        flops = 2 * forward_macs(model.config, len(TEXT))
        limit = flops / rate
        if o is None or "error" in o:
            cells = ("-", "-", "-")
            if o is not None:
                refused.append(f"{model.title}: {args.binary} run {folders[key]} refused it ({o['error']})")
        else:
            ratio = o["seconds"] / p["seconds"]
            cells = (f"{o['seconds']:.2f}", f"{ratio:.2f}", f"{gib(o['rss']):.2f} GiB")
            targets.append(f"{model.title}: ours/PyTorch {ratio:.2f} (target <= {RATIO_TARGET:.1f}): "
                           f"{'met' if ratio <= RATIO_TARGET else 'MISSED'}")
            rss_met = gib(o["rss"]) <= model.rss_target_gib
            targets.append(f"{model.title}: ours peak RSS {gib(o['rss']):.2f} GiB (target <= "
                           f"{model.rss_target_gib} GiB): {'met' if rss_met else 'MISSED'}")
        print(f"{model.title:<20} {cells[0]:>8} {p['seconds']:>10.2f} {cells[1]:>13} {cells[2]:>10} "
              f"{gib(p['rss']):>8.2f} GiB {limit:>8.2f} {flops / 1e9:>7.1f}")
    print("  ours: wall time from process start to exit; PyTorch: from after its imports to the answer (its whole "
          "process: " + ", ".join(f"{models[k].title} {peer[k]['process']:.2f} s" for k in keys) + ")")
    print("  runs: " + "; ".join(
        f"{models[k].title} " + (f"ours {'/'.join('%.2f' % s for s in ours[k]['all'])} s, "
                                 if k in ours and "error" not in ours[k] else "")
        + f"PyTorch {'/'.join('%.2f' % s for s in peer[k]['all'])} s" for k in keys))
    print("  limit s: the forward pass's multiply-adds x2 (GFLOP) at the dgemm rate; the weights' reading and "
          "conversion to float64 are not in it")
    print(f"  outputs: ours in {work}/<model>.ours.txt, PyTorch's top five in {work}/<model>.pytorch.json")

    if targets:
        print("\ntargets:")
        for line in targets:
            print(f"  {line}")
    if refused:
        print("\nthe binary could not run a folder:", file=sys.stderr)
        for line in refused:
            print(f"  {line}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
