#!/usr/bin/env python3
"""Plain PyTorch eager training steps of mutwo's zoo models: the baseline of issue 22, item 2.

mutwo's executor step (`mutwo run`) is compared with the same model trained by PyTorch itself, and
a fused array of k models (HFTA) with k eager models trained one after another each step. This
script is the PyTorch side, meant for a lent GPU (the device's own torch and torchvision; no other
package): each zoo model built the way its reference builds it (torchvision for the vision models;
BertForPreTraining and GPT2LMHeadModel written out below in plain torch.nn, as mutwo's zoo follows
transformers' definitions), with Adam, random inputs and labels, timed like the executor times its
steps (warm-up, then steps back to back, each step the interval between the ends of consecutive
steps: CUDA events on the GPU, the wall clock on the CPU).

With --mutwo BUILD/cli/mutwo every model's parameter count is checked against the zoo's
(`mutwo models --json`) before anything is timed; a mismatch stops the script (exit 1).

  python3 scripts/eager-baseline.py --models resnet50,bert-base --copies 1,2,4,8 --device cuda \\
      --precision fp32,amp-bf16 --mutwo build-device/cli/mutwo -o eager.csv

Not done here: DLRM (its Criteo-sized embedding tables are the zoo's, not a torch reference model)
and CUDA graphs (PyTorch's graph capture of a whole step needs capturable optimizers and static
inputs; `mutwo run --cuda-graph` is compared with eager instead).
Works with PyTorch 1.13 (Debian) and 2.x.
"""
import argparse
import csv
import json
import math
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------------------------------------
# Transformers, as transformers defines them (the configs of bert-base-uncased, bert-large-uncased,
# gpt2, gpt2-medium, gpt2-xl), in plain torch.nn so that no other package is needed.

BERT = {"bert-base": (768, 12, 12, 3072), "bert-large": (1024, 24, 16, 4096)}
GPT2 = {"gpt2": (768, 12, 12), "gpt2-medium": (1024, 24, 16), "gpt2-xl": (1600, 48, 25)}
BERT_VOCAB, BERT_POSITIONS, BERT_TYPES = 30522, 512, 2
GPT2_VOCAB, GPT2_POSITIONS = 50257, 1024


class BertLayer(nn.Module):
    def __init__(self, h, heads, inner, p=0.1):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_out = nn.Linear(h, h)
        self.attn_norm = nn.LayerNorm(h, eps=1e-12)
        self.intermediate = nn.Linear(h, inner)
        self.output = nn.Linear(inner, h)
        self.out_norm = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(p)

    def split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        ctx = self.drop(scores.softmax(-1)) @ v
        ctx = ctx.transpose(1, 2).reshape(b, s, h)
        x = self.attn_norm(x + self.drop(self.attn_out(ctx)))  # post-LN
        y = self.output(F.gelu(self.intermediate(x)))
        return self.out_norm(x + self.drop(y))


class BertForPreTraining(nn.Module):
    def __init__(self, name):
        super().__init__()
        h, layers, heads, inner = BERT[name]
        self.word = nn.Embedding(BERT_VOCAB, h)
        self.position = nn.Embedding(BERT_POSITIONS, h)
        self.token_type = nn.Embedding(BERT_TYPES, h)
        self.emb_norm = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(BertLayer(h, heads, inner) for _ in range(layers))
        self.pooler = nn.Linear(h, h)
        self.transform = nn.Linear(h, h)
        self.transform_norm = nn.LayerNorm(h, eps=1e-12)
        self.decoder_bias = nn.Parameter(torch.zeros(BERT_VOCAB))  # decoder weight tied to `word`
        self.nsp = nn.Linear(h, 2)

    def forward(self, tokens, mlm_labels, nsp_labels):
        s = tokens.shape[1]
        positions = torch.arange(s, device=tokens.device)
        x = self.word(tokens) + self.position(positions) + self.token_type(torch.zeros_like(tokens))
        x = self.drop(self.emb_norm(x))
        for layer in self.layers:
            x = layer(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        t = self.transform_norm(F.gelu(self.transform(x)))
        logits = t @ self.word.weight.t() + self.decoder_bias
        mlm = F.cross_entropy(logits.reshape(-1, BERT_VOCAB), mlm_labels.reshape(-1))
        return mlm + F.cross_entropy(self.nsp(pooled), nsp_labels)


class GPT2Block(nn.Module):
    def __init__(self, h, heads, p=0.1):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.c_attn, self.c_proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.c_fc, self.mlp_proj = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        ctx = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.drop(self.c_proj(ctx))  # pre-LN
        y = self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))  # gelu_new
        return x + self.drop(y)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, name):
        super().__init__()
        h, layers, heads = GPT2[name]
        self.wte = nn.Embedding(GPT2_VOCAB, h)
        self.wpe = nn.Embedding(GPT2_POSITIONS, h)
        self.drop = nn.Dropout(0.1)
        self.blocks = nn.ModuleList(GPT2Block(h, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)  # lm_head tied to wte

    def forward(self, tokens, labels):
        s = tokens.shape[1]
        x = self.drop(self.wte(tokens) + self.wpe(torch.arange(s, device=tokens.device)))
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.reshape(-1, GPT2_VOCAB), labels.reshape(-1))


# ---------------------------------------------------------------------------------------------

VISION = {"resnet18": "resnet18", "resnet50": "resnet50", "resnet101": "resnet101",
          "mobilenet-v2": "mobilenet_v2", "mobilenet-v3-large": "mobilenet_v3_large",
          "vit-b16": "vit_b_16", "vit-l16": "vit_l_16"}
DEFAULT_BATCH = {"bert": 16, "gpt2": 8, "resnet": 64, "vit": 64, "mobilenet": 128}


def family(name):
    for f in ("bert", "gpt2", "resnet", "vit", "mobilenet"):
        if name.startswith(f):
            return f
    raise SystemExit(f"eager-baseline: model '{name}' has no PyTorch reference here (valid: "
                     f"{', '.join(list(BERT) + list(GPT2) + list(VISION))})")


def build(name):
    """The model and a function making one step's (inputs, ...) for a batch on a device."""
    f = family(name)
    if f == "bert":
        model = BertForPreTraining(name)

        def batch(b, seq, _img, dev):
            return (torch.randint(0, BERT_VOCAB, (b, seq), device=dev),
                    torch.randint(0, BERT_VOCAB, (b, seq), device=dev),
                    torch.randint(0, 2, (b,), device=dev))
        return model, batch
    if f == "gpt2":
        model = GPT2LMHeadModel(name)

        def batch(b, seq, _img, dev):
            return (torch.randint(0, GPT2_VOCAB, (b, seq), device=dev),
                    torch.randint(0, GPT2_VOCAB, (b, seq), device=dev))
        return model, batch
    import torchvision
    net = getattr(torchvision.models, VISION[name])(num_classes=1000)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, images, labels):
            return F.cross_entropy(self.net(images), labels)

    def batch(b, _seq, img, dev):
        return (torch.randn(b, 3, img, img, device=dev), torch.randint(0, 1000, (b,), device=dev))
    return Classifier(), batch


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def time_steps(models, optimizers, batches, precision, device, warmup, iters):
    """Median, min and max ms of back-to-back steps (each: every model's forward, backward, Adam)."""
    cuda = device.startswith("cuda")
    autocast = precision == "amp-bf16"

    def step():
        for model, opt, inputs in zip(models, optimizers, batches):
            opt.zero_grad(set_to_none=True)
            if autocast:
                with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16):
                    loss = model(*inputs)
            else:
                loss = model(*inputs)
            loss.backward()
            opt.step()

    for _ in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        ends[0].record()
        for i in range(iters):
            step()
            ends[i + 1].record()
        torch.cuda.synchronize()
        times = [ends[i].elapsed_time(ends[i + 1]) for i in range(iters)]
    else:
        times, last = [], time.perf_counter()
        for _ in range(iters):
            step()
            now = time.perf_counter()
            times.append((now - last) * 1e3)
            last = now
    return statistics.median(times), min(times), max(times)


def batch_of(text, names):
    """--batch: "32" (every model) or "resnet18=32,bert-base=16" -> {model: batch}; 0: the default."""
    if "=" not in text:
        if not text.isdigit():
            raise SystemExit(f"eager-baseline: --batch '{text}': a whole number or MODEL=B,...")
        return {n: int(text) for n in names}
    out = {}
    for part in text.split(","):
        name, _, b = part.partition("=")
        if name not in names or not b.isdigit() or int(b) < 1:
            raise SystemExit(f"eager-baseline: --batch '{part}': MODEL=B with MODEL one of --models, B >= 1")
        out[name] = int(b)
    return out


def zoo_parameters(mutwo):
    out = subprocess.run([mutwo, "models", "--json"], check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    return {m["name"]: m["parameters"] for m in (doc["models"] if isinstance(doc, dict) else doc)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet-v2,vit-b16,bert-base,gpt2")
    ap.add_argument("--copies", default="1", help="models trained one after another per step, e.g. 1,2,4,8")
    ap.add_argument("--precision", default="fp32", help="fp32, amp-bf16 (comma-separated)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", default="0",
                    help="per model: one for all, or MODEL=B,... (default, or a model not named: the zoo's per family)")
    ap.add_argument("--seq-len", type=int, default=0, help="default: 128 (BERT), 1024 (GPT-2)")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--mutwo", help="a mutwo binary: check every parameter count against its zoo first")
    ap.add_argument("-o", "--output", default="eager.csv")
    args = ap.parse_args()

    names = [m for m in args.models.split(",") if m]
    batch_by_model = batch_of(args.batch, names)
    for m in names:
        family(m)
    copies = [int(c) for c in args.copies.split(",")]
    precisions = args.precision.split(",")
    for p in precisions:
        if p not in ("fp32", "amp-bf16"):
            raise SystemExit(f"eager-baseline: --precision '{p}': valid: fp32, amp-bf16")
    zoo = zoo_parameters(args.mutwo) if args.mutwo else {}
    dev = torch.device(args.device)
    device_name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    rows = []
    for name in names:
        f = family(name)
        seq = args.seq_len or (128 if f == "bert" else 1024 if f == "gpt2" else 0)
        img = args.image_size if f in ("resnet", "vit", "mobilenet") else 0
        batch = batch_by_model.get(name) or DEFAULT_BATCH[f]
        probe, _ = build(name)
        params = parameters(probe)
        del probe
        if zoo and zoo.get(name) != params:
            print(f"eager-baseline: {name}: {params} parameters, mutwo's zoo has {zoo.get(name)}", file=sys.stderr)
            sys.exit(1)
        for precision in precisions:
            for k in copies:
                torch.manual_seed(0)
                built = [build(name) for _ in range(k)]
                models = [m.to(dev).train() for m, _ in built]
                optimizers = [torch.optim.Adam(m.parameters(), lr=1e-4) for m in models]
                batches = [make(batch, seq, img, dev) for _, make in built]
                med, lo, hi = time_steps(models, optimizers, batches, precision, args.device, args.warmup, args.iters)
                row = {"model": name, "batch_size": batch, "seq_len": seq, "image_size": img,
                       "precision": precision, "copies": k, "device": args.device, "device_name": device_name,
                       "torch": torch.__version__, "parameters_per_model": params,
                       "warmup": args.warmup, "iterations": args.iters,
                       "step_ms_median": round(med, 4), "step_ms_min": round(lo, 4), "step_ms_max": round(hi, 4),
                       "samples_per_s": round(k * batch * 1e3 / med, 3)}
                rows.append(row)
                print(f"{name} x{k} {precision} batch {batch}: {med:.3f} ms/step, {row['samples_per_s']} samples/s",
                      flush=True)
                del models, optimizers, batches, built
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
    with open(args.output, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.output}")


if __name__ == "__main__":
    main()
