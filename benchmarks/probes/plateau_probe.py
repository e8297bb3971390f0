import sys, json, time, dataclasses, torch
torch.set_num_threads(1)
from headprompt.verify.experiments.figure3 import SCALES
from headprompt.models.mlm.model import MLMConfig
from benchmarks.pretrain import to_gate
mask, lr, warm, layers, width, drop = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
sc = SCALES["paper"]
m = dataclasses.replace(sc.model, block_size=160, n_layer=layers, n_embd=width, n_head=4, dropout=drop)
pc = dataclasses.replace(sc.pretrain, batch_size=32, learning_rate=lr, warmup_steps=warm, data="stream", max_steps=3000,
    eval_every=250, stop_at_gate=True, gate_sequences=256, gate_length=129, min_length=129, ema_decay=0.99, stop_tv=0.043, mask_rate=mask, checkpoint_every=0)
scale = dataclasses.replace(sc, model=m, pretrain=pc)
rows = to_gate(scale, pc, [30], 1, torch.device("cpu"), progress=False, minutes=float(sys.argv[7]))
r = rows[0]
print(json.dumps({"args": sys.argv[1:], "steps": r["steps"], "sec": r["seconds"], "hist": r["history"]}))
