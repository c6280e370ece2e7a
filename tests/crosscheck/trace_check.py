"""Checks of one `attention-lab trace FILE --json` against reference.reference:
the header, inputs, weights (given ones echoed, seeded ones read back, biases
the file leaves out echoed as zeros), projections, kv heads, the indexer,
every head's intermediates and mla's absorbed form, each mismatch collected in
a reference.Checks.

The header's "attention" object must carry qkv_bias, output_bias,
rope_pairing and rope_scaling when they differ from their defaults (false,
false, "interleaved", none); at their defaults each may be echoed (with the
default value) or left out, as the format does not say which.

Far positions: the angle of position C + p is only known to about one ulp of
C + p in double, so from a shift of FOLLOW_FROM on the binary's sinusoidal
rows and rotated vectors are checked to that rounding and then followed.
Near ties in the indexer's top-k are followed where the binary's selection is
the top-k of its own scores.
"""

import numpy as np

from reference import (BIASES, TOL, Mismatch, as_array, reference, resolved, top_k_select,
                       used_weights, weight_shapes)

BASE_ATT_KEYS = ("variant", "heads", "kv_heads", "head_dim", "mask", "scale", "kernel")
# Keys the header may echo at their default or leave out (None: a JSON null).
OPTIONAL_ATT_DEFAULTS = {"qkv_bias": False, "output_bias": False, "rope_pairing": "interleaved",
                         "rope_scaling": None}
SCALING_KEYS = ("type", "factor", "low_freq_factor", "high_freq_factor", "original_max_positions")
HEAD_FIELDS = ("q", "k", "v", "scores", "scaled", "masked", "weights", "output")
ROW_FIELDS = ("row_max", "row_sum", "entropy")


# --------------------------------------------------------------------------
# Tolerances
# --------------------------------------------------------------------------

def angle_tol(C, rows, mag=1.0):
    """Tolerance of a rotated (or sin / cos) value at positions up to C + rows: a
    double angle p * theta (theta <= 1) carries a rounding of about one ulp of p,
    which moves a pair of norm mag by up to mag times that."""
    return TOL + 8.0 * float(np.spacing(float(C + rows))) * 2.0 * max(1.0, mag)


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def weights_used(cfg, out, chk, lenient_names=False):
    """Given weights (checked to be echoed) and seeded ones read back from the output."""
    echoed = out.get("weights")
    if not isinstance(echoed, dict):
        raise Mismatch("weights: missing from the output")
    names = used_weights(cfg)
    if lenient_names:
        missing = sorted(set(names) - set(echoed))
        if missing:
            raise Mismatch("weights: missing %s (found %s)" % (missing, sorted(echoed)))
    elif sorted(names) != sorted(echoed):
        raise Mismatch("weights (names): expected %s, found %s" % (sorted(names), sorted(echoed)))
    shapes = weight_shapes(cfg)
    W = {}
    for name in names:
        if name in cfg["omit"] and name in BIASES:
            # a bias the file leaves out is zeros, never drawn from the seed
            chk.cmp(np.zeros(shapes[name]), echoed[name], "weights.%s (left out: zeros)" % name)
            W[name] = np.zeros(shapes[name])
        elif name in cfg["omit"]:
            W[name] = as_array(echoed[name], "weights." + name)
            if W[name].ndim == 1 and W[name].size == 0:
                W[name] = W[name].reshape(shapes[name])
            if W[name].shape != shapes[name]:
                raise Mismatch("weights.%s: seeded shape %s, expected %s"
                               % (name, W[name].shape, shapes[name]))
        else:
            chk.cmp(cfg["W"][name], echoed[name], "weights." + name)
            W[name] = np.asarray(cfg["W"][name], float)
    return W


def expected_attention(cfg):
    """The "attention" object the output must carry, exactly."""
    att = {key: cfg[key] for key in BASE_ATT_KEYS}
    att["output_projection"] = cfg["wo"]
    if cfg["mask"] == "sliding_window":
        att["window"] = cfg["window"]
    if cfg["variant"] == "mla":
        att["latent_dim"] = cfg["latent_dim"]
        att["query_latent_dim"] = cfg["q_latent"]
    base, mp, hi, di = resolved(cfg)
    # A plain scenario's header is exactly as before positions existed; rope_base only where it acts.
    positions = cfg.get("positions", "none")
    if positions != "none":
        att["positions"] = positions
    if positions in ("sinusoidal", "rope"):
        att["rope_base"] = base
    if positions == "learned":
        att["max_positions"] = mp
    if cfg.get("rope_dim"):
        att["rope_dim"] = cfg["rope_dim"]
    if positions != "none" and cfg.get("offset", 0) != 0:
        att["position_offset"] = cfg["offset"]
    if cfg.get("sparse"):
        att["sparse"] = {"top_k": cfg["sparse"]["top_k"], "indexer_heads": hi,
                         "indexer_dim": di}
    for key, default in OPTIONAL_ATT_DEFAULTS.items():
        value = cfg.get(key)
        if value is not None and value != default:
            att[key] = value
    return att


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def attention_errors(cfg, att, plain_only=False):
    """What is wrong with the header's "attention" object (a list of messages)."""
    want = expected_attention(cfg)
    if plain_only and "positions" not in att:
        want.pop("positions", None)
    errors = []
    extra = sorted(k for k in set(att) - set(want)
                   if not (k in OPTIONAL_ATT_DEFAULTS and att[k] == OPTIONAL_ATT_DEFAULTS[k]
                           and type(att[k]) is type(OPTIONAL_ATT_DEFAULTS[k])))
    missing = sorted(set(want) - set(att))
    if missing or extra:
        errors.append("attention: %s%s" % (
            "missing keys %s (%s)" % (missing, ", ".join(
                "%s=%r" % (k, want[k]) for k in missing)) if missing else "",
            "%sunexpected keys %s" % ("; " if missing else "", ", ".join(
                "%s=%r" % (k, att[k]) for k in extra)) if extra else ""))
    for key, value in want.items():
        if key not in att:
            continue
        found = att[key]
        if key == "rope_base":
            if not number(found) or float(found) != value:
                errors.append("attention.rope_base: expected %r, found %r" % (value, found))
        elif key == "rope_scaling":
            # numbers by value (8 and 8.0 alike), every key of the file's object
            ok = isinstance(found, dict) and sorted(found) == sorted(SCALING_KEYS) and \
                found["type"] == value["type"] and all(
                    number(found[k]) and float(found[k]) == float(value[k])
                    for k in SCALING_KEYS if k != "type")
            if not ok:
                errors.append("attention.rope_scaling: expected %r, found %r" % (value, found))
        elif value != found or type(value) is not type(found):
            errors.append("attention.%s: expected %r, found %r" % (key, value, found))
    return errors


def check_header(cfg, out, chk, plain_only):
    chk.eq(["q%d" % i for i in range(cfg["n_q"])], out.get("tokens"), "tokens")
    ctx = ["c%d" % j for j in range(cfg["n_kv"])] if cfg["cross"] else \
        ["q%d" % i for i in range(cfg["n_q"])]
    chk.eq(ctx, out.get("context_tokens"), "context_tokens")
    att = out.get("attention")
    if not isinstance(att, dict):
        chk.fail("attention: missing from the output")
        return
    chk.errors += attention_errors(cfg, att, plain_only)


def check_trace(cfg, out, chk, plain_only=False, lenient_names=False):
    """Compare one `trace --json` with the reference; return the reference."""
    check_header(cfg, out, chk, plain_only)
    chk.cmp(cfg["x"], out.get("x"), "x")
    chk.cmp(cfg["x_kv"], out.get("x_kv"), "x_kv")
    W = weights_used(cfg, out, chk, lenient_names)
    ref = reference(cfg, W)
    follow = follow_far_positions(cfg, ref, out, chk)
    if follow:
        ref = reference(cfg, W, follow=follow)
    # Near-ties in the indexer (|difference| <= 1e-9, not exactly equal) can go
    # either way under a different summation order: accept the binary's choice
    # there if it is the top-k of its own scores, and follow it downstream.
    if cfg["sparse"] and ref["topk_info"]["near"] and isinstance(out.get("indexer"), dict):
        try:
            got_sel = as_array(out["indexer"].get("selected"), "indexer.selected")
            got_I = as_array(out["indexer"].get("scores"), "indexer.scores", np.nan)
            own, _ = top_k_select(np.nan_to_num(got_I, nan=-np.inf), ref["base_mask"],
                                  cfg["sparse"]["top_k"])
            if got_sel.shape == own.shape and np.array_equal(got_sel, own) \
                    and not np.array_equal(got_sel, ref["indexer"]["selected"]):
                ref = reference(cfg, W, selected=got_sel, follow=ref["follow"])
                cfg["note"] = " [near-tie: binary's selection followed]"
        except Mismatch:
            pass
    chk.cmp([ref["scale_factor"]], [out.get("scale_factor")], "scale_factor")
    if "positions" in ref:
        chk.cmp(ref["positions"], out.get("positions"), "positions")
    elif "positions" in out:
        chk.fail("positions: present with positions %s" % cfg["positions"])
    for key in ("Q", "K", "V", "latent", "query_latent"):
        if key in ref and (key in out or key in ("latent", "query_latent")):
            chk.cmp(ref[key], out.get(key), key)
        elif key not in ref and key in out and key in ("latent", "query_latent"):
            chk.fail("%s: unexpected in the output" % key)
    kvh = out.get("kv_heads")
    if not isinstance(kvh, list) or len(kvh) != len(ref["kv_heads"]):
        chk.fail("kv_heads: expected a list of %d entries" % len(ref["kv_heads"]))
    else:
        for g, (rk, fk) in enumerate(zip(ref["kv_heads"], kvh)):
            for f in ("k", "v"):
                chk.cmp(rk[f], (fk or {}).get(f), "kv_heads[%d].%s" % (g, f))
    check_indexer(cfg, ref, out, chk)
    heads = out.get("heads")
    if not isinstance(heads, list) or len(heads) != cfg["heads"]:
        chk.fail("heads: expected %d entries" % cfg["heads"])
        return ref
    for rh, fh in zip(ref["heads"], heads):
        check_head(cfg, rh, fh, chk)
    chk.cmp(ref["concat"], out.get("concat"), "concat")
    chk.cmp(ref["output"], out.get("output"), "output")
    if cfg["variant"] == "mla":
        check_absorbed(ref, out, chk)
    elif "absorbed" in out:
        chk.fail("absorbed: unexpected in the output")
    return ref


FOLLOW_FROM = 1000     # position shifts from which the binary's angles are followed


def follow_far_positions(cfg, ref, out, chk):
    """For a shift C >= FOLLOW_FROM, the angle of position C + p is only known to
    about one ulp of C + p in double (2.3e-10 at 2^20), which a head_dim-long dot
    product of values near 30 turns into more than 1e-9.  So there the binary's
    sinusoidal rows and rotated vectors are checked against the (extended
    precision) reference to angle_tol, and then used downstream in place of the
    reference's, everything after them being checked to 1e-9 as usual.  Returns
    the values to follow, or None (C small, or they disagree: reported in chk)."""
    pos, C = cfg["positions"], cfg.get("offset", 0)
    if pos not in ("sinusoidal", "rope") or C < FOLLOW_FROM:
        return None
    rows = max(cfg["n_q"], cfg["n_kv"])
    n_err = len(chk.errors)
    follow = {}

    def take(exp, found, where):
        tol = angle_tol(C, rows, float(np.max(np.abs(exp), initial=0.0)))
        if chk.cmp(exp, found, where + " (to angle rounding %.1e)" % tol, tol=tol):
            return as_array(found, where)
        return None

    if pos == "sinusoidal":
        follow["positions"] = take(ref["positions"], out.get("positions"), "positions")
        return follow if len(chk.errors) == n_err else None
    heads = out.get("heads")
    if not isinstance(heads, list) or len(heads) != cfg["heads"] or \
            not all(isinstance(fh, dict) for fh in heads):
        return None             # reported by the head checks
    if cfg["variant"] == "mla":
        follow["q_r"] = [take(rh["q_r"], fh.get("q_r"), "heads[%d].q_r" % h)
                         for h, (rh, fh) in enumerate(zip(ref["heads"], heads))]
        k_r = [take(ref["k_r"], fh.get("k_r"), "heads[%d].k_r" % h)
               for h, fh in enumerate(heads)]
        follow["k_r"] = k_r[0]
    else:
        follow["q_rope"] = [take(rh["q_rope"], fh.get("q_rope"), "heads[%d].q_rope" % h)
                            for h, (rh, fh) in enumerate(zip(ref["heads"], heads))]
        follow["k_rope"] = [take(rh["k_rope"], fh.get("k_rope"), "heads[%d].k_rope" % h)
                            for h, (rh, fh) in enumerate(zip(ref["heads"], heads))]
    return follow if len(chk.errors) == n_err else None


def check_indexer(cfg, ref, out, chk):
    if not cfg["sparse"]:
        if "indexer" in out:
            chk.fail("indexer: present without sparse")
        return
    ix = out.get("indexer")
    if not isinstance(ix, dict):
        chk.fail("indexer: missing from the output")
        return
    ri = ref["indexer"]
    for f in ("q", "k", "w"):
        chk.cmp(ri[f], ix.get(f), "indexer." + f)
    chk.cmp(ri["scores"], ix.get("scores"), "indexer.scores", null_as=np.nan)
    chk.exact(ri["selected"], ix.get("selected"), "indexer.selected")


def check_head(cfg, rh, fh, chk):
    h = rh["head"]
    where = "heads[%d]." % h
    if not isinstance(fh, dict):
        chk.fail(where[:-1] + ": expected an object")
        return
    chk.eq(h, fh.get("head"), where + "head")
    chk.eq(rh["kv_head"], fh.get("kv_head"), where + "kv_head")
    for f in HEAD_FIELDS + ROW_FIELDS:
        null_as = None
        if f == "masked" and cfg["kernel"] == "softmax":
            null_as = -np.inf
        elif f == "entropy":
            null_as = np.nan
        chk.cmp(rh[f], fh.get(f), where + f, null_as)
    chk.exact(rh["mask"], fh.get("mask"), where + "mask")
    chk.eq(rh["row_status"], fh.get("row_status"), where + "row_status")
    for f in ("q_rope", "k_rope", "q_r", "k_r", "contribution"):
        if f in rh:
            chk.cmp(rh[f], fh.get(f), where + f)
        elif f in fh:
            chk.fail(where + f + ": unexpected (positions %s, variant %s%s)" % (
                cfg["positions"], cfg["variant"], "" if cfg["wo"] else ", no W_O"))


def check_absorbed(ref, out, chk):
    ra, fa = ref["absorbed"], out.get("absorbed")
    if not isinstance(fa, dict) or not isinstance(fa.get("heads"), list) \
            or len(fa["heads"]) != len(ra["heads"]):
        chk.fail("absorbed: expected an object with %d heads" % len(ra["heads"]))
        return
    for h, (rh, fh) in enumerate(zip(ra["heads"], fa["heads"])):
        where = "absorbed.heads[%d]." % h
        fh = fh if isinstance(fh, dict) else {}
        chk.cmp(rh["W_UQK"], fh.get("W_UQK"), where + "W_UQK")
        chk.cmp(rh["scores"], fh.get("scores"), where + "scores")
        chk.cmp(ref["heads"][h]["scores"], fh.get("scores"),
                where + "scores (vs reference heads[%d].scores)" % h)
    for f in ("latent_output", "W_LO", "output"):
        chk.cmp(ra[f], fa.get(f), "absorbed." + f)
    chk.cmp(ref["output"], fa.get("output"), "absorbed.output (vs reference output)")
