#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a scene file of N spheres on a grid, apart from each other, above a ground plane
(issue 51: the loader's time in the number of bodies). Usage: gen_bodies.py N OUT.json"""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
k = max(1, round(n ** (1 / 3))) + 1
with open(out, "w") as f:
    f.write('{"format": "frictionlab-scene", "version": 1, "name": "bodies_%d", "dt": 0.01, '
            '"duration": 0.01, "materials": [{"name": "m", "mu": 0.5}], "bodies": [\n' % n)
    f.write('{"name": "ground", "kind": "fixed", "material": "m", "shape": {"type": "plane"}}')
    for i in range(n):
        x, y, z = i % k, (i // k) % k, i // (k * k)
        f.write(',\n{"name": "s%d", "kind": "dynamic", "material": "m", "shape": {"type": '
                '"sphere", "size": [0.1]}, "density": 100, "position": [%g, %g, %g]}'
                % (i, x * 0.5, y * 0.5, 0.2 + z * 0.5))
    f.write("]}\n")
