"""The examples: the DTM loop in process equals the same loop over `cuth
serve`, and the dataset generator's archive holds what solves give."""

import json
import os
import subprocess
import sys

import numpy as np

import cuth
from conftest import CUTH, MOL, ROOT

EXAMPLES = os.path.join(ROOT, "examples")


def run_example(name, *args, cwd):
    env = dict(os.environ, CUTH_BIN=CUTH)
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *map(str, args)],
                       capture_output=True, text=True, cwd=cwd, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_dtm_python_equals_dtm_serve(tmp_path):
    common = ["--steps", 40, "--grid", 32, "--device", "cpu"]
    out_py = run_example("dtm_python.py", *common, "--record", tmp_path / "py.json", cwd=tmp_path)
    out_srv = run_example("dtm_serve.py", *common, "--record", tmp_path / "srv.json", cwd=tmp_path)
    py = np.array(json.loads((tmp_path / "py.json").read_text()))
    srv = np.array(json.loads((tmp_path / "srv.json").read_text()))
    assert py.shape == srv.shape == (40, 4)
    np.testing.assert_allclose(py, srv, rtol=0, atol=1e-9)
    # The same throttling decisions, hence the same report.
    assert out_py.splitlines()[1:] == out_srv.splitlines()[1:]


def test_dataset_holds_the_solves(tmp_path):
    out = tmp_path / "d.npz"
    run_example("dataset.py", "--cases", 3, "--grid", 20, "--chunk", 2, "--device", "cpu",
                "--out", out, cwd=tmp_path)
    d = np.load(out)
    assert d["power"].shape == d["temperature"].shape == (3, 20, 20)
    assert d["x_m"].shape == (20,)
    stack = cuth.Stack.from_toml(MOL, grid=(20, 20), device="cpu")
    for i in range(3):
        total = float(d["power"][i].astype(np.float64).sum())
        assert 2.0 - 1e-4 <= total <= 10.0 + 1e-4
        r = stack.solve(power={"logic_feol": d["power"][i]})
        np.testing.assert_allclose(d["temperature"][i], r.layers["logic_feol"], rtol=0, atol=1e-3)
    assert not [f for f in os.listdir(tmp_path) if f.startswith("tmp")]
