"""Shared paths and helpers: the repository's configs and the `cuth` binary
(CUTH_BIN, else target/release/cuth), run on the CPU as the references."""

import csv
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, "configs")
EV6 = os.path.join(CONFIGS, "hotspot_ev6_3d.toml")
EV6_TRACE = os.path.join(CONFIGS, "hotspot", "ev6_3D.ptrace")
MOL = os.path.join(CONFIGS, "mol_f2f.toml")
CUTH = os.environ.get("CUTH_BIN", os.path.join(ROOT, "target", "release", "cuth"))


def run_cli(*args, check=True):
    """Runs the cuth binary; returns the completed process."""
    p = subprocess.run([CUTH, *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"cuth {' '.join(map(str, args))} failed:\n{p.stderr}")
    return p


def read_map_csv(path):
    """A map CSV of `cuth solve` as an array [y, x], y = 0 the bottom row
    (the file's first data row is the top edge)."""
    with open(path) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    return np.array([[float(v) for v in r] for r in rows])[::-1]


def read_csv_columns(path):
    """A CSV with a header as name → float array."""
    with open(path) as f:
        rows = list(csv.reader(f))
    head, data = rows[0], rows[1:]
    return {h: np.array([float(r[i]) for r in data]) for i, h in enumerate(head)}


def read_ptrace(path):
    with open(path) as f:
        names = f.readline().split()
        rows = [[float(v) for v in line.split()] for line in f if line.strip()]
    return names, np.array(rows)


@pytest.fixture(scope="session")
def ev6():
    import cuth

    return cuth.Stack.from_toml(EV6, grid=(32, 32), device="cpu")
