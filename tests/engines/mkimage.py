#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a container image, in the docker-archive format that `docker
load`, `podman load` and `ctr images import` all read, holding one static
program as /bin/prog and the data file tests/agent/agent_prog.c reads.
Nothing is downloaded: the engine tests (tests/engines/run.sh) import it.

    mkimage.py PROGRAM NAME:TAG OUT.tar
"""
import hashlib
import io
import json
import sys
import tarfile


def add(tar, name, data, mode):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar, name):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    info.mtime = 0
    tar.addfile(info)


def main():
    prog, ref, out = sys.argv[1:4]
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for d in ("bin", "etc", "proc", "dev", "sys", "shared", "tmp"):
            add_dir(t, d)
        add(t, "bin/prog", open(prog, "rb").read(), 0o755)
        add(t, "etc/agent-data", b"iouring-restrict agent test data\n", 0o644)
    layer = layer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": ["/bin/prog"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "tests/engines/mkimage.py"}],
    }, sort_keys=True).encode()
    cfg_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": cfg_name, "RepoTags": [ref],
                            "Layers": ["layer/layer.tar"]}]).encode()
    with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as t:
        add(t, cfg_name, config, 0o644)
        add_dir(t, "layer")
        add(t, "layer/layer.tar", layer, 0o644)
        add(t, "manifest.json", manifest, 0o644)


if __name__ == "__main__":
    main()
