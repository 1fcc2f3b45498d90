#!/usr/bin/env python3
"""Tokenizer encode throughput, graphrt against the references, in one run.

Runs build/bench/tokenizer_bench (graphrt's GPT-2 tokenizer.json; a SentencePiece model through
graphrt and through libsentencepiece directly) and the npm package gpt-3-encoder on the same
text (installed into a temporary folder with npm, never into the repository).

Usage: tokenizer_bench.py [--build build] [--fixtures ../shared/fixtures] [--mb 1]
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--fixtures", default=os.path.join(HERE, "..", "..", "shared", "fixtures"))
    p.add_argument("--mb", default="1")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenizer_bench_") as tmp:
        text = os.path.join(tmp, "text.txt")
        subprocess.run([os.path.join(args.build, "bench", "tokenizer_bench"), args.fixtures, args.mb, text], check=True)
        npm = subprocess.run(["npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "gpt-3-encoder@1.1.4"],
                             capture_output=True, text=True)
        if npm.returncode != 0:
            print("gpt-3-encoder: npm install failed:", npm.stderr.strip()[-300:])
            return 1
        env = dict(os.environ, NODE_PATH=os.path.join(tmp, "node_modules"))
        subprocess.run(["node", os.path.join(HERE, "gpt3_encoder_bench.js"), text], check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
