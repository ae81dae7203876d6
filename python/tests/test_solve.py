"""Stack.solve against `cuth solve`'s own outputs, the energy balance, and
power given per block and per layer."""

import os
import tomllib

import numpy as np
import pytest

import cuth
from conftest import CONFIGS, EV6, MOL, read_csv_columns, read_map_csv, run_cli


def test_solve_matches_cli_maps_and_blocks(ev6, tmp_path):
    r = ev6.solve()
    out = tmp_path / "solve"
    run_cli("solve", EV6, "--grid", "32x32", "--device", "cpu", "--kelvin", "--out", out, "-q")
    for i, name in enumerate(ev6.layers):
        cli = read_map_csv(out / f"{i:02d}_{name}.csv")
        py = r.layers[name]
        assert py.shape == cli.shape == (32, 32)
        np.testing.assert_allclose(py, cli, rtol=0, atol=6e-7, equal_nan=True)
    with open(out / "blocks.csv") as f:
        lines = [l.strip().split(",") for l in f][1:]
    assert lines
    keys = {b: k for k, b in ((k, (v["layer"], k.split(".")[-1])) for k, v in r.blocks.items())}
    for layer, block, power, tmin, tavg, tmax in lines:
        got = r.blocks[keys[(layer, block)]]
        assert got["power"] == pytest.approx(float(power), rel=1e-12, abs=1e-12)
        for k, v in (("min", tmin), ("avg", tavg), ("max", tmax)):
            assert got[k] == pytest.approx(float(v), abs=6e-7)


def test_summary_is_the_cli_summary_and_balances(ev6, tmp_path):
    import json

    r = ev6.solve()
    out = tmp_path / "solve"
    run_cli("solve", EV6, "--grid", "32x32", "--device", "cpu", "--out", out, "-q")
    with open(out / "summary.json") as f:
        cli = json.load(f)
    assert r.summary["hottest"] == cli["hottest"]
    assert r.summary["solver"]["iterations"] == cli["solver"]["iterations"]
    assert r.summary["energy"] == pytest.approx(cli["energy"], rel=1e-12, abs=1e-15)
    e = r.summary["energy"]
    assert abs(e["heat_out_top_w"] + e["heat_out_bottom_w"] - e["power_in_w"]) < 1e-6 * e["power_in_w"]
    assert r.max_k == pytest.approx(np.nanmax(r.temperature), abs=1e-12)


def test_block_powers_set_what_is_solved(ev6):
    base = ev6.solve()
    powers = {"IntReg_0_0": 10.0, "Icache_1": 0.0}
    r = ev6.solve(power=powers)
    own = {k: v["power"] for k, v in base.blocks.items()}
    new = {k: v["power"] for k, v in r.blocks.items()}
    assert new["IntReg_0_0"] == 10.0 and new["Icache_1"] == 0.0
    expected_in = sum(own.values()) - own["IntReg_0_0"] - own["Icache_1"] + 10.0
    assert r.summary["energy"]["power_in_w"] == pytest.approx(expected_in, rel=1e-12)
    assert r.summary["energy"]["relative_error"] < 1e-6
    # The same power through a session's steady solve: the same field.
    sim = ev6.session()
    sim.set_power(powers)
    sim.steady()
    for name in ev6.layers:
        solid = np.isfinite(r.layers[name])
        np.testing.assert_allclose(sim.layer(name)[solid], r.layers[name][solid], rtol=0, atol=1e-7)


def test_layer_map_power():
    stack = cuth.Stack.from_toml(MOL, grid=(24, 20), device="cpu")
    rng = np.random.default_rng(1)
    m = rng.random((20, 24)) * 0.02
    r = stack.solve(power={"logic_feol": m})
    own = stack.solve()
    mem_w = sum(l["power_w"] for l in own.summary["layers"] if l["name"] == "memory_feol")
    assert r.summary["energy"]["power_in_w"] == pytest.approx(m.sum() + mem_w, rel=1e-12)
    assert r.summary["energy"]["relative_error"] < 1e-6
    # Maps are (ny, nx), as the power went in.
    assert r.layers["logic_feol"].shape == (20, 24)


def test_from_dict_equals_from_toml(ev6):
    with open(EV6, "rb") as f:
        d = tomllib.load(f)
    s = cuth.Stack.from_dict(d, base_dir=CONFIGS, grid=(32, 32), device="cpu")
    a, b = s.solve(), ev6.solve()
    for name in ev6.layers:
        np.testing.assert_array_equal(a.layers[name], b.layers[name])


BAD = """
[chip]
width = "10 mm"
length = "10 mm"
[grid]
nx = 8
ny = 8
[boundary]
ambient = "300 K"
h_top = 1e4
[materials.si]
k = 150
heat_capacity = 1.6e6
[[layers]]
name = "die"
material = "si"
thickness = "-5 um"
power = { type = "uniform", total = 1.0 }
"""


def test_bad_input_raises_the_cli_message(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD)
    p = run_cli("solve", path, "--device", "cpu", "--out", tmp_path / "o", check=False)
    assert p.returncode == 2
    cli_msg = p.stderr.strip().removeprefix("cuth: error: ")
    with pytest.raises(cuth.InputError) as e:
        cuth.Stack.from_toml(path, device="cpu")
    assert str(e.value) == cli_msg
    assert "thickness" in str(e.value)
    # The same dict: the same field named.
    with pytest.raises(cuth.InputError, match="thickness"):
        cuth.Stack.from_dict(tomllib.loads(BAD), device="cpu")
    assert issubclass(cuth.InputError, cuth.CuthError)


def test_bad_power_names_the_block_and_layer(ev6):
    with pytest.raises(cuth.InputError, match="block `NoSuchBlock`"):
        ev6.solve(power={"NoSuchBlock": 1.0})
    with pytest.raises(cuth.InputError, match="IntReg_0_0"):
        ev6.solve(power={"IntReg_0_0": -1.0})
    with pytest.raises(cuth.InputError, match="shape"):
        ev6.solve(power={"L4_cores": np.zeros((3, 3))})
    with pytest.raises(cuth.InputError, match="device"):
        cuth.Stack.from_toml(EV6, device="gpu")
    with pytest.raises(cuth.InputError, match="rtol"):
        cuth.Stack.from_toml(EV6, rtol=2.0)


def test_options_reach_the_solver():
    s = cuth.Stack.from_toml(EV6, grid=(16, 16), device="cpu", precond="jacobi", rtol=1e-6)
    r = s.solve()
    assert r.summary["solver"]["precond"]["name"] == "jacobi"
    assert s.grid_shape == (16, 16) and s.device == "cpu"
    assert os.path.basename(str(EV6)) in repr(s)
