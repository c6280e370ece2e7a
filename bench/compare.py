#!/usr/bin/python3
"""The engine's timings beside NumPy and PyTorch, in one run, at one thread count.

Runs attention-bench (Google Benchmark, JSON output) and the same attention in NumPy and PyTorch, then prints a
table with the ratios. The workload: T tokens (128, 512, 1024, 2048, 4096), d_model 512, 8 heads of 64, causal mask,
scaled scores, softmax, output projection W_O; float64 everywhere, the same thread count everywhere.

What each side computes:
  ours     compute_trace: the full trace, every intermediate kept or derivable (Q, K, V, per head q, k, v, each
           row's max, sum and entropy, the output; one mask for all heads; concat, output). Each head's scores and
           weights are computed a block of rows at a time in scratch and made again on the first ask (bit for bit);
           scaled, masked and each head's contribution likewise. Also the peak RSS of a process computing one trace
           at 2048 and 4096, and each row's physical limit (its multiply-adds at the machine's dgemm rate).
  NumPy    the plain forward pass, only the output kept: Q = X W_Q, K, V; per head softmax(Q K^T / sqrt(d) + causal
           mask) V; concat; W_O (batched matmul over the heads)
  PyTorch  the same with torch.matmul and torch.softmax under torch.inference_mode()

Equal footing: float64, the same thread count (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and
torch.set_num_threads), and the same malloc settings as attention-bench (mallopt: M_MMAP_THRESHOLD 32 MiB,
M_TRIM_THRESHOLD 1 GiB). Ours runs first, then NumPy, then PyTorch, never two at once; each reports the median.
Timings on a shared machine are only as good as its idleness: the script prints the load average and the CPU
time other processes used during the run. Rerun when that is more than a few percent.

The peers must run on an optimised BLAS (Debian's reference BLAS is several times slower and would flatter us):
the script checks that libblas.so.3 resolves to OpenBLAS (installing libopenblas0-pthread when run as root and it is
missing) and prints the BLAS that actually ran. Before timing, the three must agree on T = 128 with the same explicit
inputs (attention-lab trace FILE --json against NumPy and PyTorch, to 1e-9).

Run:  /usr/bin/python3 bench/compare.py build-bench/bench/attention-bench --threads 2

Exit status: 0 done (a missed target is reported, not an error), 1 the three disagree numerically,
2 something could not be run (binary, BLAS, benchmark).
"""

import argparse
import contextlib
import ctypes
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (128, 512, 1024, 2048)  # the decode table's
TRACE_SIZES = SIZES + (4096,)  # the full trace's, up to the longest the window shows
TRACE_RATIO_TARGET = 0.5  # full trace / PyTorch's forward at every T of TRACE_SIZES
RSS_TARGETS_MIB = {2048: 700, 4096: 2560}  # peak RSS of a process computing one full trace
CV_TARGET_T, CV_TARGET = 2048, 0.10
D_MODEL = 512
HEADS = 8
HEAD_DIM = 64
CHECK_T = 128
TOL = 1e-9
CAT_SAT_TARGET_US = 20.0
RATIO_TARGET_T = 1024
EXTRA_TARGET = 1.15  # positions or sparse selection beside the plain trace at RATIO_TARGET_T
# BM_ModelRun: 4 Pre-LN layers, d_model 256, 8 causal heads of 32, GELU FFN of 1024, learned positions, vocab 64
MODEL = dict(layers=4, d_model=256, heads=8, head_dim=32, d_ff=1024, vocab=64)
MODEL_T = 512
MODEL_CHECK_T = 32
# BM_TrainStep: the induction lesson's model and batch (core/training.h's defaults)
TRAIN = dict(layers=2, d_model=64, heads=4, vocab=64, seq_len=32, batch=32, lr=1e-3)
BLAS_ALTERNATIVE = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
BLAS_PACKAGE = "libopenblas0-pthread"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class Failure(Exception):
    """Something could not be run: exit status 2."""


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench", nargs="?", default=str(ROOT / "build/bench/attention-bench"),
                   help="the attention-bench binary (default build/bench/attention-bench)")
    p.add_argument("--app", help="the attention-lab binary for the numerical check "
                                 "(default: app/attention-lab in the same build directory as the bench)")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                   help="threads for all three (default: the CPUs this process may use, as nproc)")
    p.add_argument("--repetitions", type=int, default=5,
                   help="Google Benchmark repetitions; the median is reported (default 5)")
    p.add_argument("--min-time", type=float, default=0.5,
                   help="Google Benchmark's minimum time per repetition, seconds (default 0.5)")
    p.add_argument("--peer-runs", type=int, default=7,
                   help="timed runs of each peer per size after 2 warm-up runs; the median is reported (default 7)")
    a = p.parse_args()
    for opt in ("threads", "repetitions", "peer_runs"):
        if getattr(a, opt) < 1:
            p.error(f"--{opt.replace('_', '-')} must be at least 1")
    if a.app is None:
        a.app = str(Path(a.bench).resolve().parent.parent / "app" / "attention-lab")
    return a


def same_malloc_settings():
    """What attention-bench (and the app) set: allocations up to 32 MiB come from the heap, which is not trimmed,
    so the peers' freed temporaries are reused too. Before numpy and torch allocate anything."""
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_threshold = -1, -3
    if not (libc.mallopt(m_mmap_threshold, 32 << 20) and libc.mallopt(m_trim_threshold, 1 << 30)):
        raise Failure("mallopt failed")


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


class OtherLoad:
    """CPU time the rest of the machine used while we ran: /proc/stat's busy time minus our own (and our
    children's). The load average lags by a minute; this says whether someone else ran during the timings."""

    def __init__(self):
        self.hz = os.sysconf("SC_CLK_TCK")
        self.start = self._sample()

    def _sample(self):
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
        busy = (sum(fields[:7]) - fields[3] - fields[4]) / self.hz  # user..softirq but idle and iowait
        steal = fields[7] / self.hz  # a virtual machine's CPU taken by the host
        t = os.times()
        return busy, steal, t.user + t.system + t.children_user + t.children_system, time.monotonic()

    def report(self):
        busy, steal, own, wall = (b - a for a, b in zip(self.start, self._sample()))
        other = max(0.0, busy - own)
        return f"{other:.1f} s of CPU by other processes during the {wall:.0f} s run " \
               f"({100 * other / wall:.0f}% of one core), {steal:.1f} s stolen by the hypervisor"


# --------------------------------------------------------------------------
# BLAS
# --------------------------------------------------------------------------

def package_installed(name):
    r = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}", name], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == "installed"


def ensure_openblas():
    """libblas.so.3 must resolve to OpenBLAS before numpy or torch is imported."""
    if not package_installed(BLAS_PACKAGE):
        if os.geteuid() != 0:
            raise Failure(f"{BLAS_PACKAGE} is not installed, so NumPy and PyTorch would run on the reference BLAS "
                          f"(several times slower: the comparison would flatter us). Install it as root:\n"
                          f"  sudo apt-get install -y --no-install-recommends {BLAS_PACKAGE}")
        print(f"Installing {BLAS_PACKAGE} (NumPy and PyTorch must not run on the reference BLAS)", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", BLAS_PACKAGE]
        if subprocess.run(cmd, env=env).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], env=env)
            if subprocess.run(cmd, env=env).returncode != 0:
                raise Failure(f"apt-get install {BLAS_PACKAGE} failed")
    target = os.path.realpath(BLAS_ALTERNATIVE)
    if "openblas" not in target:
        raise Failure(f"{BLAS_ALTERNATIVE} resolves to {target}, not OpenBLAS: NumPy and PyTorch would run on it. "
                      f"Select OpenBLAS as root:\n  update-alternatives --set libblas.so.3-x86_64-linux-gnu "
                      f"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3")
    return target


def loaded_blas_libraries():
    """The BLAS shared objects mapped into this process (after numpy and torch have run a product)."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            name = os.path.basename(path)
            if path.startswith("/") and ("blas" in name or "mkl" in name):
                libs.add(path)
    return sorted(libs)


def openblas_details(libs):
    for path in libs:
        if "libopenblas" in os.path.basename(path):
            lib = ctypes.CDLL(path)
            for fn in ("openblas_get_config", "openblas_get_corename"):
                getattr(lib, fn).restype = ctypes.c_char_p
            lib.openblas_get_num_threads.restype = ctypes.c_int
            return (lib.openblas_get_config().decode(), lib.openblas_get_corename().decode(),
                    lib.openblas_get_num_threads())
    return None


def torch_blas_link(torch):
    """What libtorch_cpu.so's libblas.so.3 resolves to."""
    lib = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    if not lib.exists():
        return "libtorch_cpu.so not found"
    out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("libblas.so") and len(parts) >= 3:
            return f"{parts[0]} -> {os.path.realpath(parts[2])}"
    return "no libblas.so in ldd output"


def blas_report(np, torch, alternative):
    cfg = io.StringIO()
    with contextlib.redirect_stdout(cfg):
        np.show_config()
    blas_opt = [ln.strip() for ln in cfg.getvalue().split("blas_opt_info:")[-1].splitlines()[1:3]]
    torch_cfg = torch.__config__.show()
    torch_blas = [f for f in torch_cfg.replace(",", " ").split() if f.startswith(("BLAS_INFO", "LAPACK_INFO"))]
    libs = loaded_blas_libraries()
    lines = [f"libblas.so.3 alternative: {alternative}",
             f"numpy {np.__version__}: show_config blas_opt_info: {'; '.join(blas_opt)}",
             f"torch {torch.__version__}: {' '.join(torch_blas)}; libtorch_cpu.so links {torch_blas_link(torch)}",
             f"BLAS mapped in this process after the runs: {', '.join(libs) or 'none'}"]
    details = openblas_details(libs)
    if details is None:
        raise Failure("no OpenBLAS library is mapped after NumPy and PyTorch ran their products:\n  " + "\n  ".join(lines))
    config, core, threads = details
    lines.append(f"OpenBLAS that ran: {config}; kernel {core}; {threads} threads")
    lines.append(f"torch threads: {torch.get_num_threads()} (ATen parallel backend: "
                 f"{'OpenMP' if 'OpenMP' in torch.__config__.parallel_info() else 'other'})")
    return lines


# --------------------------------------------------------------------------
# The workload
# --------------------------------------------------------------------------

def make_inputs(np, t, seed=2026):
    """X uniform in [-1, 1]; weights uniform in [-1, 1] / sqrt(d_model), so the scores are O(1)."""
    rng = np.random.default_rng(seed + t)
    w = 1.0 / math.sqrt(D_MODEL)
    x = rng.uniform(-1, 1, (t, D_MODEL))
    wq, wk, wv = (rng.uniform(-1, 1, (D_MODEL, HEADS * HEAD_DIM)) * w for _ in range(3))
    wo = rng.uniform(-1, 1, (HEADS * HEAD_DIM, D_MODEL)) * w
    return x, wq, wk, wv, wo


def causal_additive_mask(np, t):
    """0 where query i may see key j <= i, -inf above the diagonal."""
    return np.triu(np.full((t, t), -np.inf), 1)


def numpy_forward(np, x, wq, wk, wv, wo, mask):
    """The worked example's code generalised to heads: every head at once as a (H, T, d) stack."""
    t = x.shape[0]
    q = (x @ wq).reshape(t, HEADS, HEAD_DIM).transpose(1, 0, 2)
    k = (x @ wk).reshape(t, HEADS, HEAD_DIM).transpose(1, 0, 2)
    v = (x @ wv).reshape(t, HEADS, HEAD_DIM).transpose(1, 0, 2)
    s = q @ k.transpose(0, 2, 1)
    s *= 1.0 / math.sqrt(HEAD_DIM)
    s += mask
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    out = s @ v
    return out.transpose(1, 0, 2).reshape(t, HEADS * HEAD_DIM) @ wo, s


def torch_forward(torch, x, wq, wk, wv, wo, mask):
    t = x.shape[0]
    q = (x @ wq).view(t, HEADS, HEAD_DIM).transpose(0, 1)
    k = (x @ wk).view(t, HEADS, HEAD_DIM).transpose(0, 1)
    v = (x @ wv).view(t, HEADS, HEAD_DIM).transpose(0, 1)
    s = torch.matmul(q, k.transpose(-2, -1))
    s.mul_(1.0 / math.sqrt(HEAD_DIM)).add_(mask)  # in place, as NumPy's: a fresh (H, T, T) costs page faults
    p = torch.softmax(s, dim=-1)
    out = torch.matmul(p, v)
    return out.transpose(0, 1).reshape(t, HEADS * HEAD_DIM) @ wo


def model_weights(np, t, seed=2027):
    """Every weight of the bench model, uniform in [-1, 1] / sqrt(fan in); gains 1, biases 0."""
    rng = np.random.default_rng(seed + t)
    d, f, hd, v = MODEL["d_model"], MODEL["d_ff"], MODEL["heads"] * MODEL["head_dim"], MODEL["vocab"]
    u = lambda rows, cols, fan: rng.uniform(-1, 1, (rows, cols)) / math.sqrt(fan)
    layers = [{"W_Q": u(d, hd, d), "W_K": u(d, hd, d), "W_V": u(d, hd, d), "W_O": u(hd, d, hd),
               "ln1_gain": np.ones(d), "ln1_bias": np.zeros(d), "ln2_gain": np.ones(d), "ln2_bias": np.zeros(d),
               "W_1": u(d, f, d), "b_1": np.zeros(f), "W_2": u(f, d, f), "b_2": np.zeros(d)}
              for _ in range(MODEL["layers"])]
    return {"embedding": u(v, d, 1), "W_P": u(t, d, 1), "final_gain": np.ones(d), "final_bias": np.zeros(d),
            "unembedding": u(d, v, d), "layers": layers}


def model_ids(t):
    return [i * 7 % MODEL["vocab"] for i in range(t)]


def torch_model_forward(torch, w, ids, mask):
    """The model's forward pass, the probabilities kept: Pre-LN layers of causal attention and a GELU FFN."""
    f = torch.nn.functional
    t, d, h, hd = len(ids), MODEL["d_model"], MODEL["heads"], MODEL["head_dim"]
    x = w["embedding"][ids] + w["W_P"][:t]
    for p in w["layers"]:
        a = f.layer_norm(x, (d,), p["ln1_gain"], p["ln1_bias"], 1e-5)
        q, k, v = ((a @ p[n]).view(t, h, hd).transpose(0, 1) for n in ("W_Q", "W_K", "W_V"))
        s = torch.matmul(q, k.transpose(-2, -1))
        s.mul_(1.0 / math.sqrt(hd)).add_(mask)
        x = x + torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(t, h * hd) @ p["W_O"]
        x = x + f.gelu(f.layer_norm(x, (d,), p["ln2_gain"], p["ln2_bias"], 1e-5) @ p["W_1"] + p["b_1"]) @ p["W_2"] + \
            p["b_2"]
    return torch.softmax(f.layer_norm(x, (d,), w["final_gain"], w["final_bias"], 1e-5) @ w["unembedding"], dim=-1)


def torch_model(torch, w):
    out = {k: torch.from_numpy(v) for k, v in w.items() if k != "layers"}
    out["layers"] = [{k: torch.from_numpy(v) for k, v in p.items()} for p in w["layers"]]
    return out


def torch_train_step_fn(torch, np, seed=2028):
    """One AdamW step of the induction lesson's model in PyTorch: Pre-LN attention-only layers, learned positions, next-token
    cross-entropy over a batch of random sequences (the task's batches cost the same), float64."""
    c = TRAIN
    rng = np.random.default_rng(seed)
    d, h, t, v = c["d_model"], c["heads"], c["seq_len"], c["vocab"]
    hd = d // h

    def param(*shape, scale=1.0):
        return torch.tensor(rng.uniform(-1, 1, shape) * scale, dtype=torch.float64, requires_grad=True)

    params = [param(v, d), param(t, d)]
    for _ in range(c["layers"]):
        params += [torch.ones(d, dtype=torch.float64, requires_grad=True),
                   torch.zeros(d, dtype=torch.float64, requires_grad=True)]
        params += [param(d, d, scale=d ** -0.5) for _ in range(4)]
    params += [torch.ones(d, dtype=torch.float64, requires_grad=True),
               torch.zeros(d, dtype=torch.float64, requires_grad=True), param(d, v, scale=d ** -0.5)]
    opt = torch.optim.AdamW(params, lr=c["lr"], weight_decay=0.0)
    ids = torch.tensor(rng.integers(0, v, (c["batch"], t)))
    mask = torch.triu(torch.full((t, t), float("-inf"), dtype=torch.float64), 1)

    def step():
        emb, pos = params[0], params[1]
        x = emb[ids] + pos[:t]
        k = 2
        for _ in range(c["layers"]):
            g, b, wq, wk, wv, wo = params[k:k + 6]
            k += 6
            y = torch.nn.functional.layer_norm(x, (d,), g, b, 1e-5)
            q = (y @ wq).view(c["batch"], t, h, hd).transpose(1, 2)
            kk = (y @ wk).view(c["batch"], t, h, hd).transpose(1, 2)
            vv = (y @ wv).view(c["batch"], t, h, hd).transpose(1, 2)
            a = torch.softmax(q @ kk.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1)
            x = x + (a @ vv).transpose(1, 2).reshape(c["batch"], t, d) @ wo
        g, b, wu = params[k:k + 3]
        logits = torch.nn.functional.layer_norm(x, (d,), g, b, 1e-5) @ wu
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, v), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def model_check(np, torch, app):
    """The bench model with explicit weights through `attention-lab run --json` and PyTorch: max |diff| of the
    probabilities."""
    t = MODEL_CHECK_T
    w = model_weights(np, t)
    layer = {"attention": {"heads": MODEL["heads"], "head_dim": MODEL["head_dim"]}}
    doc = {"name": "compare.py model", "vocab": [f"v{i}" for i in range(MODEL["vocab"])], "d_model": MODEL["d_model"],
           "max_positions": t, "positions": "learned", "norm": "pre", "ffn": {"kind": "gelu", "d_ff": MODEL["d_ff"]},
           "layers": [dict(layer, weights={k: v.tolist() for k, v in p.items()}) for p in w["layers"]],
           **{k: v.tolist() for k, v in w.items() if k != "layers"}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "compare_model.json"
        path.write_text(json.dumps(doc))
        tokens = " ".join(f"v{i}" for i in model_ids(t))
        r = subprocess.run([app, "run", str(path), "--tokens", tokens, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{app} run --json exited with {r.returncode}:\n{r.stderr}")
    ours = np.array(json.loads(r.stdout)["probabilities"], dtype=float)
    with torch.inference_mode():
        mask = torch.from_numpy(causal_additive_mask(np, t))
        theirs = torch_model_forward(torch, torch_model(torch, w), model_ids(t), mask).numpy()
    return float(np.max(np.abs(ours - theirs)))


def wall_times(fn, runs, warmup=2):
    """The wall-clock seconds of `runs` calls after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def time_median(fn, runs, warmup=2):
    """(median, coefficient of variation) of the wall-clock seconds of `runs` calls after `warmup` calls."""
    times = wall_times(fn, runs, warmup)
    return statistics.median(times), statistics.stdev(times) / statistics.mean(times) if runs > 1 else 0.0


# --------------------------------------------------------------------------
# Our side
# --------------------------------------------------------------------------

def run_bench(binary, env, repetitions, min_time):
    if not os.access(binary, os.X_OK):
        raise Failure(f"{binary}: not an executable (build it: cmake --build BUILD --target attention-bench)")
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_report_aggregates_only=true", f"--benchmark_min_time={min_time}"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited with {r.returncode}:\n{r.stderr}")
    data = json.loads(r.stdout)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    results = {}
    for b in data["benchmarks"]:
        name = b["run_name"].removesuffix("/real_time")
        entry = results.setdefault(name, {"runs": []})
        for counter in ("trace_bytes", "score_cells", "cache_bytes"):
            if counter in b and b.get("aggregate_name", "median") == "median":
                entry[counter] = b[counter]
        if b.get("run_type") == "iteration":  # a single repetition has no aggregates
            entry["runs"].append(b["real_time"] * scale[b["time_unit"]])
        elif b["aggregate_name"] == "median":
            entry["seconds"] = b["real_time"] * scale[b["time_unit"]]
        elif b["aggregate_name"] == "cv":
            entry["cv"] = b["real_time"]
    for entry in results.values():
        if "seconds" not in entry:
            entry["seconds"] = statistics.median(entry["runs"])
    return data["context"], results


def trace_peak_rss(binary, env, t):
    """The peak resident memory, in MiB, of a process that computes the full trace of T tokens (one repetition)."""
    cmd = [binary, f"--benchmark_filter=^BM_Trace/{t}/", "--benchmark_min_time=0.01", "--benchmark_repetitions=1"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise Failure(f"{' '.join(cmd)} failed: {p.stderr.read().decode()}")
    return usage.ru_maxrss / 1024  # KiB on Linux


def gemm_peak(np, runs=7):
    """The machine's matrix-multiply rate at this thread count, in FLOP/s: OpenBLAS's dgemm of a projection's
    shape, (2048 x 512) (512 x 512), the best of `runs`. No float64 attention does its multiply-adds faster."""
    a, b = np.random.default_rng(1).uniform(-1, 1, (2048, D_MODEL)), np.random.default_rng(2).uniform(-1, 1, (D_MODEL, D_MODEL))
    return 2 * 2048 * D_MODEL * D_MODEL / min(wall_times(lambda: a @ b, runs, warmup=1))


def trace_flops(t):
    """The multiply-adds (x2) a causal trace cannot avoid: four projections of T x d_model by d_model x d_model, and
    per head the scores and the weighted values of the T(T+1)/2 visible cells."""
    return 8 * t * D_MODEL * D_MODEL + 2 * HEADS * HEAD_DIM * t * (t + 1)


def numerical_check(np, torch, app):
    """The same explicit inputs through attention-lab, NumPy and PyTorch; every pair within TOL."""
    if not os.access(app, os.X_OK):
        raise Failure(f"{app}: not an executable (build it: cmake --build BUILD --target attention-lab)")
    x, wq, wk, wv, wo = make_inputs(np, CHECK_T)
    scenario = {
        "name": f"compare.py T={CHECK_T}",
        "description": "bench/compare.py: explicit inputs shared with NumPy and PyTorch",
        "tokens": [f"t{i}" for i in range(CHECK_T)],
        "embeddings": x.tolist(),
        "attention": {"variant": "mha", "heads": HEADS, "head_dim": HEAD_DIM, "mask": "causal", "scale": True,
                      "kernel": "softmax", "output_projection": True},
        "weights": {"W_Q": wq.tolist(), "W_K": wk.tolist(), "W_V": wv.tolist(), "W_O": wo.tolist()},
        "seed": 1,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "compare_t128.json"
        path.write_text(json.dumps(scenario))  # repr of each float: the loader reads back the same doubles
        r = subprocess.run([app, "trace", str(path), "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{app} trace --json exited with {r.returncode}:\n{r.stderr}")
    ours = json.loads(r.stdout)
    ours_out = np.array(ours["output"], dtype=float)
    ours_w = np.array([h["weights"] for h in ours["heads"]], dtype=float)
    mask = causal_additive_mask(np, CHECK_T)
    np_out, np_w = numpy_forward(np, x, wq, wk, wv, wo, mask)
    with torch.inference_mode():
        tx, tq, tk, tv, to, tm = (torch.from_numpy(a) for a in (x, wq, wk, wv, wo, mask))
        t_out = torch_forward(torch, tx, tq, tk, tv, to, tm).numpy()
    diffs = {
        "output: ours vs NumPy": float(np.max(np.abs(ours_out - np_out))),
        "output: ours vs PyTorch": float(np.max(np.abs(ours_out - t_out))),
        "output: NumPy vs PyTorch": float(np.max(np.abs(np_out - t_out))),
        "weights of every head: ours vs NumPy": float(np.max(np.abs(ours_w - np_w))),
    }
    return diffs, float(np.max(np.abs(np_out)))


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

def main():
    args = parse_args()
    n = args.threads
    for var in THREAD_VARS:  # before numpy and torch are imported: OpenBLAS reads it when it loads
        os.environ[var] = str(n)
    env = dict(os.environ)
    command = "/usr/bin/python3 bench/compare.py " + " ".join(sys.argv[1:])
    try:
        same_malloc_settings()
        alternative = ensure_openblas()
        load_before = loadavg()
        other = OtherLoad()
        # Ours first, before numpy and torch start any thread pool in this process.
        context, ours = run_bench(args.bench, env, args.repetitions, args.min_time)
        rss = {t: trace_peak_rss(args.bench, env, t) for t in RSS_TARGETS_MIB}

        import numpy as np
        import torch
        torch.set_num_threads(n)

        diffs, magnitude = numerical_check(np, torch, args.app)
        diffs[f"model, N = {MODEL_CHECK_T}: ours vs PyTorch"] = model_check(np, torch, args.app)

        peer_np, peer_torch = {}, {}
        for t in TRACE_SIZES:
            x, wq, wk, wv, wo = make_inputs(np, t)
            mask = causal_additive_mask(np, t)
            peer_np[t] = time_median(lambda: numpy_forward(np, x, wq, wk, wv, wo, mask), args.peer_runs)
        time.sleep(0.5)  # OpenBLAS's threads stop spinning before torch's run
        with torch.inference_mode():
            for t in TRACE_SIZES:
                tensors = [torch.from_numpy(a) for a in make_inputs(np, t)]
                tm = torch.from_numpy(causal_additive_mask(np, t))
                peer_torch[t] = time_median(lambda: torch_forward(torch, *tensors, tm), args.peer_runs)
            w = torch_model(torch, model_weights(np, MODEL_T))
            tm = torch.from_numpy(causal_additive_mask(np, MODEL_T))
            peer_model = time_median(lambda: torch_model_forward(torch, w, model_ids(MODEL_T), tm), args.peer_runs)
        peer_train = time_median(torch_train_step_fn(torch, np), args.peer_runs)
        peak = gemm_peak(np)
        load_after = loadavg()
        other_load = other.report()
        blas = blas_report(np, torch, alternative)
    except Failure as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2

    print(f"command: {command}")
    print(f"threads: {n} (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, torch.set_num_threads); "
          f"float64 everywhere")
    print(f"load average (1/5/15 min): {load_before} before, {load_after} after; {other_load}")
    print("malloc: M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 1 GiB in all three")
    print(f"attention-bench: {args.repetitions} repetitions, median; library build type "
          f"{context.get('library_build_type', '?')}; peers: 2 warm-up runs, median of {args.peer_runs}")
    for line in blas:
        print(line)

    print(f"\nnumerical check, T = {CHECK_T}, d_model {D_MODEL}, {HEADS} heads of {HEAD_DIM}, causal, W_O "
          f"(outputs up to {magnitude:.3g}; tolerance {TOL:g} absolute):")
    failed = False
    for what, d in diffs.items():
        ok = d <= TOL
        failed |= not ok
        print(f"  {what:40s} max |diff| = {d:.2e}  {'ok' if ok else 'DISAGREE'}")

    print(f"\nfull trace (ours, every intermediate) vs the forward pass (peers, output only), "
          f"d_model {D_MODEL}, {HEADS} heads of {HEAD_DIM}, causal, W_O:")
    print(f"{'T':>6} {'ours ms':>10} {'NumPy ms':>10} {'PyTorch ms':>11} {'ours/PyTorch':>13} {'ours/NumPy':>11} "
          f"{'trace MB':>9} {'limit ms':>9}   cv: ours/NumPy/PyTorch")
    for t in TRACE_SIZES:
        o = ours[f"BM_Trace/{t}"]
        (np_s, np_cv), (pt_s, pt_cv) = peer_np[t], peer_torch[t]
        print(f"{t:>6} {o['seconds'] * 1e3:>10.2f} {np_s * 1e3:>10.2f} {pt_s * 1e3:>11.2f} "
              f"{o['seconds'] / pt_s:>13.2f} {o['seconds'] / np_s:>11.2f} {o['trace_bytes'] / 1e6:>9.1f} "
              f"{trace_flops(t) / peak * 1e3:>9.2f}   "
              f"{'%.1f' % (o['cv'] * 100) if 'cv' in o else '-'}/{np_cv * 100:.1f}/{pt_cv * 100:.1f}%")
    print(f"  trace MB: what the trace holds with every matrix made (it keeps each head's rows' statistics and output; "
          f"scores and weights are made on the first ask)\n"
          f"  limit ms: the physical limit, the trace's unavoidable multiply-adds (4 T d_model^2 + 8 heads x 64 x "
          f"T(T+1)) at the machine's dgemm rate, {peak / 1e9:.1f} GFLOP/s at {n} thread(s) (OpenBLAS, "
          f"2048 x 512 x 512)")

    print("\npeak RSS of a process computing one full trace (attention-bench, one repetition):")
    for t, mib in rss.items():
        print(f"{t:>6} {mib:>8.0f} MiB (target < {RSS_TARGETS_MIB[t]} MiB)")

    print("\none decode step (KV cache of T-1 tokens) vs recomputing the full causal trace of T tokens:")
    print(f"{'T':>6} {'step us':>10} {'recompute ms':>13} {'recompute/step':>15} {'cache MB':>9}")
    for t in SIZES:
        step, full = ours[f"BM_DecodeStep/{t}"], ours[f"BM_RecomputeForStep/{t}"]
        print(f"{t:>6} {step['seconds'] * 1e6:>10.1f} {full['seconds'] * 1e3:>13.2f} "
              f"{full['seconds'] / step['seconds']:>15.0f} {step['cache_bytes'] / 1e6:>9.2f}")

    m = MODEL
    print(f"\na model run, N = {MODEL_T}: {m['layers']} Pre-LN layers, d_model {m['d_model']}, {m['heads']} causal heads "
          f"of {m['head_dim']}, GELU FFN of {m['d_ff']}, learned positions, vocabulary {m['vocab']} "
          f"(ours: every layer's trace kept; PyTorch: the probabilities):")
    model_ours, (model_pt, model_cv) = ours[f"BM_ModelRun/{MODEL_T}"], peer_model
    model_ratio = model_ours["seconds"] / model_pt
    print(f"  ours {model_ours['seconds'] * 1e3:.2f} ms, PyTorch {model_pt * 1e3:.2f} ms, ours/PyTorch {model_ratio:.2f}"
          f"   cv: ours/PyTorch {'%.1f' % (model_ours['cv'] * 100) if 'cv' in model_ours else '-'}/"
          f"{model_cv * 100:.1f}%")

    c = TRAIN
    print(f"\na training step: {c['layers']} Pre-LN layers of {c['heads']} causal heads, d_model {c['d_model']}, learned "
          f"positions, attention only, vocabulary {c['vocab']}, a batch of {c['batch']} sequences of {c['seq_len']}: "
          f"forward, backward, AdamW (ours: the induction task's batch drawn too):")
    train_ours, (train_pt, train_cv) = ours["BM_TrainStep"], peer_train
    train_ratio = train_ours["seconds"] / train_pt
    print(f"  ours {train_ours['seconds'] * 1e3:.2f} ms, PyTorch {train_pt * 1e3:.2f} ms, ours/PyTorch {train_ratio:.2f}"
          f"   cv: ours/PyTorch {'%.1f' % (train_ours['cv'] * 100) if 'cv' in train_ours else '-'}/"
          f"{train_cv * 100:.1f}%")

    cat = ours["BM_CatSat"]["seconds"] * 1e6
    ratio = ours[f"BM_Trace/{RATIO_TARGET_T}"]["seconds"] / peer_torch[RATIO_TARGET_T][0]
    print("\ntargets:")
    print(f"  'the cat sat' recompute {cat:.2f} us (target < {CAT_SAT_TARGET_US:g} us): "
          f"{'met' if cat < CAT_SAT_TARGET_US else 'MISSED'}")
    print(f"  T = {RATIO_TARGET_T} full trace / PyTorch forward = {ratio:.2f} (target <= 1.0): "
          f"{'met' if ratio <= 1.0 else 'MISSED'}")
    for t in TRACE_SIZES:
        r = ours[f"BM_Trace/{t}"]["seconds"] / peer_torch[t][0]
        print(f"  T = {t} full trace / PyTorch forward = {r:.2f} (target <= {TRACE_RATIO_TARGET}): "
              f"{'met' if r <= TRACE_RATIO_TARGET else 'MISSED'}")
    for t, mib in rss.items():
        print(f"  T = {t} peak RSS {mib:.0f} MiB (target < {RSS_TARGETS_MIB[t]} MiB): "
              f"{'met' if mib < RSS_TARGETS_MIB[t] else 'MISSED'}")
    cv = ours[f"BM_Trace/{CV_TARGET_T}"].get("cv")
    if cv is not None:
        print(f"  T = {CV_TARGET_T} full trace's coefficient of variation {cv * 100:.1f}% (target < "
              f"{CV_TARGET * 100:.0f}%): {'met' if cv < CV_TARGET else 'MISSED'}")
    plain = ours[f"BM_Trace/{RATIO_TARGET_T}"]["seconds"]
    for name, what in (("BM_TraceRope", "rope"), ("BM_TraceSparse", "sparse, top_k 64, indexer 4 x 32")):
        extra = ours[f"{name}/{RATIO_TARGET_T}"]["seconds"] / plain
        print(f"  T = {RATIO_TARGET_T} full trace with {what} / plain = {extra:.2f} (target <= {EXTRA_TARGET}): "
              f"{'met' if extra <= EXTRA_TARGET else 'MISSED'}")
    print(f"  N = {MODEL_T} model run / PyTorch forward = {model_ratio:.2f} (target <= 1.0): "
          f"{'met' if model_ratio <= 1.0 else 'MISSED'}")
    print(f"  training step / PyTorch's = {train_ratio:.2f} (target <= 1.0): {'met' if train_ratio <= 1.0 else 'MISSED'}")
    if failed:
        print("\ncompare.py: the three implementations disagree (see the numerical check above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
