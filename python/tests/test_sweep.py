"""cuth.sweep against one solve per case, batched and not, and `cuth sweep`."""

import numpy as np
import pytest

import cuth
from conftest import MOL, run_cli


@pytest.fixture(scope="module")
def mol():
    return cuth.Stack.from_toml(MOL, grid=(24, 20), device="cpu")


def maps(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 20, 24)) * 0.03


def test_sweep_equals_individual_solves(mol):
    p = maps(3)
    t = cuth.sweep(mol, p, layer="logic_feol")
    assert t.shape == (3, 20, 24)
    for i in range(3):
        r = mol.solve(power={"logic_feol": p[i]})
        np.testing.assert_allclose(t[i], r.layers["logic_feol"], rtol=0, atol=1e-9)


def test_batched_sweep_equals_one_at_a_time(mol):
    p = maps(5, seed=3)
    one = cuth.sweep(mol, p, layer="logic_feol", out_layer="heat_sink", batch=1)
    many = cuth.sweep(mol, p, layer="logic_feol", out_layer="heat_sink", batch=4)
    np.testing.assert_allclose(many, one, rtol=0, atol=1e-6)
    assert one.shape == (5, 20, 24)


def test_chunked_sweeps_equal_one_sweep():
    """Calls after the first reuse its batched worker, also with fewer
    cases than its batch holds."""
    p = maps(9, seed=5)
    whole = cuth.sweep(cuth.Stack.from_toml(MOL, grid=(24, 20), device="cpu"), p,
                       layer="logic_feol", batch=1)
    stack = cuth.Stack.from_toml(MOL, grid=(24, 20), device="cpu")
    parts = [cuth.sweep(stack, p[a:b], layer="logic_feol", batch=4)
             for a, b in ((0, 4), (4, 6), (6, 9), (0, 9))]
    np.testing.assert_allclose(np.concatenate(parts[:3]), whole, rtol=0, atol=1e-6)
    np.testing.assert_allclose(parts[3], whole, rtol=0, atol=1e-6)


def test_sweep_of_block_dicts(ev6):
    cases = [{"IntReg_0_0": w} for w in (0.0, 5.0, 20.0)]
    t = cuth.sweep(ev6, cases, layer="L4_cores")
    for i, c in enumerate(cases):
        r = ev6.solve(power=c)
        solid = np.isfinite(r.layers["L4_cores"])
        np.testing.assert_allclose(t[i][solid], r.layers["L4_cores"][solid], rtol=0, atol=1e-9)
    assert np.nanmax(t[2]) > np.nanmax(t[0])
    with pytest.raises(cuth.InputError, match="block `nope`"):
        cuth.sweep(ev6, [{"nope": 1.0}], layer="L4_cores")


def test_sweep_matches_cli_sweep(mol, tmp_path):
    p = maps(2, seed=7)
    cases = tmp_path / "cases"
    cases.mkdir()
    for i, m in enumerate(p):
        # A raster's first row is the top edge.
        np.savetxt(cases / f"c{i}.csv", m[::-1], delimiter=",")
    out = tmp_path / "sw"
    run_cli("sweep", MOL, cases, "--grid", "24x20", "--device", "cpu", "--layer", "logic_feol",
            "--out", out, "-q")
    cli = read_csv_columns_by_case(out / "sweep.csv")
    t = cuth.sweep(mol, p, layer="logic_feol")
    for i in range(2):
        assert np.max(t[i]) == pytest.approx(cli[f"c{i}"], abs=6e-7)


def read_csv_columns_by_case(path):
    """The max temperature of layer logic_feol per case, K."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(r for r in f if not r.startswith("#")))
    col = next(c for c in rows[0] if "logic_feol" in c and "max" in c)
    scale = 0.0 if col.endswith("_k") else 273.15
    return {r["case"]: float(r[col]) + scale for r in rows}


def test_sweep_refuses_bad_shapes(mol):
    with pytest.raises(cuth.InputError, match="shape"):
        cuth.sweep(mol, np.zeros((2, 3, 3)), layer="logic_feol")
    with pytest.raises(cuth.InputError, match="no layer `x`"):
        cuth.sweep(mol, maps(1), layer="x")
    with pytest.raises(cuth.InputError, match=r"powers\[1\]: layer `logic_feol` map, cell 0"):
        p = maps(2)
        p[1, 0, 0] = -1.0
        cuth.sweep(mol, p, layer="logic_feol")


def test_power_on_cells_without_material_is_refused(ev6):
    # L4_cores has the die's outline inside the sink's domain (fill "none").
    nx, ny = ev6.grid_shape
    full = np.full((ny, nx), 1e-3)
    with pytest.raises(cuth.InputError, match="no material"):
        cuth.sweep(ev6, full[None], layer="L4_cores")
    with pytest.raises(cuth.InputError, match="no material"):
        ev6.solve(power={"L4_cores": full})
    sim = ev6.session()
    with pytest.raises(cuth.InputError, match="layer `L4_cores` map: cell 0"):
        sim.set_power({"L4_cores": full})
    # Inside the outline only: accepted, and the energy balances.
    inside = np.where(np.isfinite(ev6.solve().layers["L4_cores"]), 1e-3, 0.0)
    r = ev6.solve(power={"L4_cores": inside})
    assert r.summary["energy"]["relative_error"] < 1e-6


