#!/usr/bin/env python3
"""Merge the JSON objects written by each benchmark program into one file and
print every metric side by side with its goal."""
import json
import sys


def merge(dst, src):
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = v


def flatten(prefix, obj, out):
    for k, v in obj.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            flatten(name, v, out)
        else:
            out.append((name, v))


def main():
    out_path, parts = sys.argv[1], sys.argv[2:]
    result = {}
    for p in parts:
        with open(p) as f:
            merge(result, json.load(f))
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
        f.write("\n")
    rows = []
    flatten("", result, rows)
    width = max((len(n) for n, _ in rows), default=10)
    print(f"{'metric':<{width}}  value")
    for name, value in rows:
        if isinstance(value, float):
            value = f"{value:.4g}"
        print(f"{name:<{width}}  {value}")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
