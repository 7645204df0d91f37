"""The GPU check: the book's first GPU evidence in one short command (``make gpu-check``).

The GPU runner this project is lent is an H200 for about 15 minutes at a time, start
included, that reaches no hub and has no papermill. So this runs, as plain library calls,
the two measurements a GPU changes most, and writes them as evidence runs that chapters 2 and
6 and the summary show beside the paper's A100 figures:

- chapter 2's kernel: s(N) and the fixed costs at the Qwen2.5-1.5B and 7B shapes (random
  init, bf16, eager, N up to 512; :data:`cadlib.chapters.kernel.profiles.PROFILES` ``gpu``),
  with the splice check on the 1.5B shape -> ``results/kernel.gpu.json``;
- chapter 6's forced-oracle timing (autoregressive, prompt lookup, Copy-as-Decode and its
  drafts along the gold) of a small stratified sample with the 7B shape and the Qwen2.5 BPE
  (forced decoding needs no trained weights), with its forward-cost grid
  (:data:`cadlib.chapters.decoding.profiles.PROFILES` ``gpu``) -> ``results/decoding.gpu.json``.

``--profile smoke`` runs the same code on the chapters' toy smoke models on a CPU in seconds
(``tests/test_gpu_check.py``), so the command cannot rot between GPU sessions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from cadlib.chapters import decoding
from cadlib.chapters import kernel as K
from cadlib.models import load_model, resolve_device, set_threads
from cadlib.record import session

__all__ = ["CHECK_PROFILES", "run_kernel", "run_decoding", "main"]

#: The profiles the check runs at: `gpu` (the evidence run) or `smoke` (its CPU test in CI),
#: each the chapters' own profile of that name (kernel and decoding `PROFILES`).
CHECK_PROFILES = ("gpu", "smoke")


def run_kernel(profile: str, device: str, seed: int = 0) -> Path:
    """Chapter 2's splice check, s(N) sweep and fixed costs at ``profile``; the results path."""
    ch = session.start(
        K.CARD, K.profiles.PROFILES, {"profile": profile, "seed": seed, "device": device}
    )
    params = ch.P
    set_threads(params["threads"])
    attn = params["attn_implementation"]
    check_net = load_model(
        params["check_model"], device=device, dtype="float32", attn_implementation=attn, seed=seed
    )
    check = K.run_splice_check.check_splice_equals_ar(
        check_net, P=params["check_P"], N=params["check_N"], seed=seed
    )
    del check_net
    bench = K.run.benchmark_models(params, device=device, seed=seed)
    numbers = K.run.numbers(bench, check)
    return K.run.write_results(ch, numbers, device=str(resolve_device(device)))


def run_decoding(profile: str, device: str, seed: int = 0) -> Path:
    """Chapter 6's forced-oracle timing of the four methods at ``profile`` (the timed run's
    numbers alone: :func:`cadlib.chapters.decoding.run.numbers` of the timing); the results
    path."""
    run_names = {"profile": profile, "seed": seed, "device": device}
    ch = session.start(decoding.CARD, decoding.profiles.PROFILES, run_names)
    setup = decoding.run.load_setup(ch.P, ch.device)
    _, timed, _ = decoding.run.load_cases(ch.P, None, setup.tokenizer, ch.seed)
    timing = decoding.run_timing.time_methods(setup.model, setup.tokenizer, timed, ch.P)
    return decoding.run.write_results(ch, decoding.run.numbers(timing), setup.label, setup.device)


def main(argv: list[str] | None = None) -> int:
    """``python -m cadlib.cli.gpu_check [--profile gpu|smoke] [--device auto|cuda|cpu]``."""
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.cli.gpu_check",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--profile", choices=CHECK_PROFILES, default="gpu")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cuda, cpu")
    parser.add_argument("--only", choices=("kernel", "decoding"), help="run one part only")
    args = parser.parse_args(argv)
    wants_cuda = args.profile == "gpu" or args.device.startswith("cuda")
    if wants_cuda and (args.device == "cpu" or not torch.cuda.is_available()):
        print(
            "gpu_check: error: the gpu profile and --device cuda need a CUDA device (on a "
            "CPU, run --profile smoke --device cpu)",
            file=sys.stderr,
        )
        return 2
    for part, run in (("kernel", run_kernel), ("decoding", run_decoding)):
        if args.only in (None, part):
            started = time.perf_counter()
            path = run(args.profile, args.device)
            print(f"{part}: wrote {path} in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
